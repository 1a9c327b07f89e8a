"""The ledger's own commands, declared once like every step (``airflow-privacy ledger list |
show | import`` are derived from these declarations): list the recorded releases, show one
with its attempts, and record a release file published elsewhere (history) or its content
only. Reading never creates a ledger; importing creates one at a new location.

Their envelopes (step ``ledger`` for the two readings, ``record`` for an import) carry in
``details`` what ``--format json`` prints (the records, as these commands always printed
them, not the envelope). There is no operator: in Airflow the ledger is
read through its hook and the UI, and a release is recorded by the attempt step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.gate.steps.base import Step
from airflow_privacy.gate.steps.candidate import candidate_fields, candidate_values
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.vocabulary import LEDGER_STATUSES, RELEASE_STATUSES

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.history import ImportRequest


@dataclass(frozen=True)
class LedgerRead:
    """What to read: the releases (of ``dataset``, shown as ``status``), or one release
    (``release_id``) with its groups when asked."""

    dataset: str | None = None
    status: str | None = None
    release_id: str | None = None
    groups: bool = False
    ledger: str | None = None


def release_summary(info: Any) -> dict[str, Any]:
    """A recorded release as ``list``, ``show`` and ``import`` print it (no values of
    anyone: descriptors and counts; reasons redacted)."""
    from airflow_privacy.core.redaction import redact

    return {
        "id": info.id,
        "uuid": info.uuid,
        "dataset": info.dataset,
        "version": info.version,
        "status": info.status,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "published_at": info.published_at,
        "kind": info.kind,
        "sensitive": info.sensitive,
        "qis": info.qis,
        "records": info.records,
        "groups": info.groups,
        "members": info.members,
        "content_hash": info.content_hash,
        "reasons": [redact(r) for r in info.reasons],
    }


class _ReadStep(Step):
    cli_groups = ("ledger", "output")

    def request(self, values: Mapping[str, Any]) -> LedgerRead:
        return LedgerRead(
            dataset=values.get("dataset"),
            status=values.get("status"),
            release_id=values.get("release_id"),
            groups=bool(values.get("groups")),
            ledger=values.get("ledger"),
        )

    @staticmethod
    def _envelope(name: str, summary: str, details: dict[str, Any]) -> Envelope:
        from airflow_privacy.gate.envelope import Envelope

        return Envelope(step="ledger", name=name, outcome="computed", safe=None,
                        summary=summary, details=details)  # fmt: skip


class LedgerListStep(_ReadStep):
    """``ledger list``: the recorded releases, oldest first."""

    name = "ledger-list"
    command = ("ledger", "list")
    json_output = "the ledger and its releases (the envelope's details)"
    summary = "list the recorded releases, oldest first"
    description = (
        "List the releases the ledger records, oldest first: id, dataset, version, status "
        "(published content is published; otherwise the status of its latest attempt: "
        "blocked, superseded, else candidate), records and groups."
    )
    fields = (
        Field("dataset", "label", "only releases of this dataset", metavar="NAME",
              airflow=None),
        Field("status", "choice", "only releases shown with this status",
              choices=LEDGER_STATUSES, airflow=None),
    )  # fmt: skip

    def run(self, req: LedgerRead, ctx: GateContext) -> Envelope:
        with ctx.open_ledger(req.ledger) as ledger:
            rows = ledger.list(dataset=req.dataset, status=req.status)
            url = ledger.url
        return self._envelope(
            "list", f"{len(rows)} release(s) in {url}",
            {"ledger": url, "releases": [release_summary(r) for r in rows]},
        )  # fmt: skip


class LedgerShowStep(_ReadStep):
    """``ledger show``: one release, its attempts and their checks."""

    name = "ledger-show"
    command = ("ledger", "show")
    json_output = "the release and its attempts, with --groups its groups (the envelope's details)"
    summary = "one release: metadata, attempts, checks, groups"
    description = (
        "Show RELEASE and every attempt to publish it: status, required checks, each "
        "check's verdict, the gate's reasons, who superseded it; --groups also lists every "
        "published group (descriptor, size, sensitive multiset)."
    )
    fields = (
        Field("release_id", "text", "the release: its id (3), UUID or DATASET@VERSION",
              cli="RELEASE", airflow=None, required=True),
        Field("groups", "flag", "also list every published group", cli="--groups",
              airflow=None, default=False),
    )  # fmt: skip

    def run(self, req: LedgerRead, ctx: GateContext) -> Envelope:
        with ctx.open_ledger(req.ledger) as ledger:
            info = ledger.resolve(str(req.release_id))
            attempts = ledger.attempts(info.id)
            groups = ledger.release(info.id).group_records() if req.groups else None
        details = release_summary(info) | {"attempts": [a.public_dict() for a in attempts]}
        if groups is not None:
            details["groups_published"] = groups
        return self._envelope(
            "show", f"release #{info.id}: {info.dataset} v{info.version} ({info.status})",
            details,
        )  # fmt: skip


class LedgerImportStep(Step):
    """``ledger import``: record a release file published elsewhere, or its content only
    (:func:`airflow_privacy.gate.history.import_release`)."""

    name = "ledger-import"
    command = ("ledger", "import")
    json_output = "the release recorded and whether this call created it (the envelope's details)"
    summary = "record a release that was published elsewhere (history), or candidate content"
    description = (
        "Record a release file (CSV or Parquet) in the ledger: its groups and their "
        "sensitive multisets, spec and manifest. --status published records history (a "
        "release published before the gate existed: later audits count it); the default "
        "candidate records the content only (publishing it takes an attempt whose checks "
        "pass). Identical content is recorded once."
    )
    fields = (
        Field("release", "ref", "the release file (.csv[.gz] or .parquet)", cli="RELEASE",
              airflow=None, required=True),
        Field("dataset", "label", "the dataset (the series of releases)", required=True,
              metavar="NAME", airflow=None),
        Field("version", "label", "the version label (default: the dataset's next number)",
              metavar="LABEL", airflow=None),
        Field("status", "choice", "candidate (content only) or published (history published "
              "elsewhere)", choices=RELEASE_STATUSES, default="candidate", airflow=None),
        Field("identifiers", "text", "original records holding an identifier column "
              "(--id-column): its keyed hashes are stored so that the overlap with later "
              "releases is known exactly", metavar="FILE", airflow=None),
        Field("id_column", "column", "the identifier column of --identifiers",
              cli="--id-column", metavar="COL", airflow=None),
        *candidate_fields("the release"),
    )  # fmt: skip
    cli_groups = ("ledger", "input-files", "output")

    def request(self, values: Mapping[str, Any]) -> ImportRequest:
        from airflow_privacy.gate.history import ImportRequest
        from airflow_privacy.gate.refs import ReleaseRef

        identifiers = values.get("identifiers")
        return ImportRequest(
            release=values["release"], dataset=values["dataset"],
            status=values.get("status") or "candidate", version=values.get("version"),
            identifiers=ReleaseRef(path=identifiers) if identifiers else None,
            id_column=values.get("id_column"), ledger=values.get("ledger"),
            fmt=values.get("input_format"), delimiter=values.get("delimiter"),
            **candidate_values(values),
        )  # fmt: skip

    def run(self, req: ImportRequest, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.envelope import Envelope
        from airflow_privacy.gate.history import import_release

        info = import_release(req, ctx)
        outcome = "recorded"
        if info.created:
            summary = f"release #{info.id} ({info.name}) recorded as {info.content_status}"
        elif info.content_status == "published":
            outcome = "already-published"
            summary = (f"already published as release #{info.id} ({info.name}); nothing was "
                       "recorded again")  # fmt: skip
        else:
            summary = (f"identical content is already recorded as release #{info.id} "
                       f"({info.name}, {info.status})")  # fmt: skip
        return Envelope(step="record", name="import", outcome=outcome, safe=None,
                        summary=summary,
                        details=release_summary(info) | {"created": info.created})  # fmt: skip


LEDGER_LIST = LedgerListStep()
LEDGER_SHOW = LedgerShowStep()
LEDGER_IMPORT = LedgerImportStep()
