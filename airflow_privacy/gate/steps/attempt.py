"""The attempt step, declared once (:class:`AttemptStep`; ``airflow-privacy attempt`` and
``OpenAttemptOperator`` are derived from it): record a candidate's content in the ledger
(once per dataset) and open an attempt to publish it that names the checks that must pass.

A dataset's first release must be declared (``first_release``) and the dataset must have a
policy in the ledger (``airflow-privacy policy set``, which creates the ledger): what every
release of a dataset must pass belongs to the organization, recorded before anything of it is
published, not to the run. A ledger that does not exist is an error (a typo in its location
must not start a new history). Every input is read and checked before the ledger is opened,
so a mistake never leaves anything half-written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, LedgerMissing, opt
from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.candidate import candidate_fields, candidate_values
from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef


@dataclass(frozen=True)
class AttemptRequest:
    """Open an attempt to publish ``release`` as a version of ``dataset``."""

    release: ReleaseRef
    dataset: str
    required: Sequence[str]
    version: str | None = None
    first_release: bool = False
    population: ReleaseRef | None = None
    id_column: str | None = None
    qis: Sequence[str] | None = None
    sensitive: str | None = None
    kind: str | None = None
    bucket: str | None = None
    manifest: ReleaseRef | None = None
    ledger: str | None = None
    name: str = "attempt"
    fmt: Any = None
    delimiter: str | None = None
    new_dataset: str | None = None  # the dataset's name again: a new name close to a known one


class AttemptStep(Step):
    """``attempt``: open an attempt to publish a release (module doc)."""

    name = "attempt"
    summary = "open an attempt to publish a release (checks are recorded under it)"
    description = (
        "Record RELEASE's content in the ledger (once per dataset) and open an attempt to "
        "publish it that requires the named checks. Record the checks with "
        "check/maxent/audit --attempt UUID, then run `airflow-privacy publish --attempt UUID`: "
        "it publishes only if every check of this attempt passed. A dataset without a "
        "published release needs --first-release and a policy (`airflow-privacy policy set`; a "
        "typo never starts a new history); "
        "content published before is not checked or published again."
    )
    operator = "airflow_privacy.providers.airflow.operators.attempt.OpenAttemptOperator"
    fields = (
        shared.release(
            "the candidate release: a CSV or Parquet file, an object-store URI or a SQL table "
            "(its digest and groups computed in the database)"
        ),
        Field(
            "dataset",
            "label",
            "the dataset (the series of releases)",
            required=True,
            metavar="NAME",
            type_hint="str",
        ),
        Field(
            "require",
            "columns",
            "a check that must pass before publishing, by its name",
            cli="--require",
            airflow="required_checks",
            required=True,
            metavar="CHECK",
            dest="required",
            noun="check name",
            unique=True,
            templated=False,
            type_hint="list[str]",
        ),
        Field(
            "version",
            "label",
            "the version label (default: the dataset's next number)",
            metavar="LABEL",
            type_hint="str | None",
        ),
        Field(
            "first_release",
            "flag",
            "declare this the dataset's first release (the dataset must have a policy in the "
            "ledger: policy set): the composition audit has nothing earlier to intersect with",
            cli="--first-release",
            default=False,
            type_hint="bool | str",
        ),
        Field(
            "new_dataset",
            "label",
            "with first_release, confirm a new dataset whose name is close to one the ledger "
            "knows (e.g. adlut beside adult) by repeating its name",
            metavar="NAME",
            type_hint="str | None",
        ),
        Field(
            "population",
            "ref",
            "the candidate's original records: with the identifier "
            "column, the keyed hashes of its people are stored (needed for a later known "
            "overlap)",
            metavar="FILE",
            type_hint="str | None",
        ),
        Field(
            "id_column",
            "column",
            "the identifier column of the population (goes with it)",
            cli="--id-column",
            metavar="COL",
            type_hint="str | None",
        ),
        *candidate_fields("the release", airflow=frozenset({"manifest"})),
    )
    cli_groups = ("ledger", "input", "output")

    def rules(self, known: Known) -> None:
        from airflow_privacy.gate.attempts import _name

        fr = known.get("first_release")
        if known.has("first_release") and fr is not True and fr is not False:
            raise InputError(f"{opt('first_release')} must be true or false")
        if known.get("dataset") is not None:
            _name(known["dataset"], "the dataset name")
        if known.get("version") is not None:
            _name(known["version"], "the version label")
        required = known.get("require")
        if required is not None:
            if isinstance(required, str) or not isinstance(required, Sequence):
                raise InputError("the required checks must be a list of check names")
            for name in required:
                _name(name, "a required check's name")
            twice = sorted({n for n in required if list(required).count(n) > 1})
            if twice:
                raise InputError(f"required check {twice[0]!r} is named twice")
        if known.has("population", "id_column") and (
            (known["population"] is None) != (known["id_column"] is None)
        ):
            raise InputError(f"{opt('population')} and {opt('id_column')} go together")

    def request(self, values: Mapping[str, Any]) -> AttemptRequest:
        return AttemptRequest(
            release=values["release"],
            dataset=values["dataset"],
            required=list(values["require"]),
            version=values.get("version"),
            first_release=bool(values.get("first_release")),
            population=values.get("population"),
            id_column=values.get("id_column"),
            ledger=values.get("ledger"),
            name=values.get("name") or "attempt",
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
            new_dataset=values.get("new_dataset"),
            **candidate_values(values),
        )

    def run(self, req: AttemptRequest, ctx: GateContext) -> Envelope:
        """Record the candidate's content (once) and open an attempt requiring
        ``req.required`` (module doc)."""
        from airflow_privacy.gate.attempts import content_digest, member_hashes, read_candidate
        from airflow_privacy.gate.envelope import Envelope, ReleaseFacts, attempt_ref

        self.check(
            Known(
                {
                    "first_release": req.first_release, "dataset": req.dataset,
                    "version": req.version, "require": req.required,
                    "population": req.population, "id_column": req.id_column,
                }
            )
        )  # fmt: skip
        ctx.progress(f"reading the candidate {req.release.describe()}")
        cand = read_candidate(
            req.release, ctx, qis=req.qis, sensitive=req.sensitive, kind=req.kind,
            bucket=req.bucket, manifest=req.manifest, fmt=req.fmt, delimiter=req.delimiter,
        )  # fmt: skip
        rel = cand.release
        loc = ctx.ledger_location(req.ledger)
        from airflow_privacy.ledger.engine import parse_url, sqlite_exists, sqlite_path

        if sqlite_exists(loc.url) is False:
            raise InputError(
                f"ledger file {str(sqlite_path(parse_url(loc.url)))!r} ({loc.source}) does not "
                f"exist: a typo in the ledger's location? " + _no_ledger_hint(req)
            )
        # every input is read and checked before the ledger is opened (never created here:
        # policy set creates it), so that a mistake never leaves anything half-written
        hashes = member_hashes(req.population, req.id_column, loc.key_env, ctx)
        digest = content_digest(req.release, ctx)
        from airflow_privacy.core.composition.identity import identity_risk

        identity = identity_risk(rel)  # always measured: the report and the policy read it
        ctx.progress(
            f"identity risk on the QIs: highest prosecutor risk {identity.highest:.3g}, "
            f"{identity.records_at_risk:,} of {identity.records:,} records at risk, "
            f"{identity.sample_uniques:,} sample uniques"
        )
        try:
            opened = ctx.open_ledger(req.ledger, create=False)
        except LedgerMissing as exc:  # a database without ledger tables
            raise LedgerMissing(
                f"{exc}: a typo in the ledger's location? " + _no_ledger_hint(req)
            ) from None
        with opened as ledger:
            if req.first_release:
                from airflow_privacy.gate.names import refuse_near_miss

                known = set(ledger.datasets()) | set(ledger.policy_datasets())
                refuse_near_miss(req.dataset, known, req.new_dataset)
                if ledger.policy(req.dataset) is None:
                    raise InputError(
                        f"dataset {req.dataset!r} has no policy in this ledger. "
                        + _needs_policy(req.dataset)
                    )
            info = ledger.open_attempt(
                req.dataset,
                rel,
                required=list(req.required),
                version=req.version,
                first_release=req.first_release,
                origin=ctx.origin,
                spec={**cand.spec(), "identity": identity.to_dict()},
                manifest=cand.manifest,
                criteria=(cand.manifest or {}).get("criteria_results"),
                member_hashes=hashes,
                content_digest=digest,
            )
        facts = ReleaseFacts(
            ref=req.release.describe(), records=rel.n_records, groups=rel.n_groups,
            sensitive=rel.sensitive,
            group_columns=[*rel.qis, *([cand.bucket] if cand.bucket else [])], kind=rel.kind,
        )  # fmt: skip
        if info.status == "already-published":
            summary = info.reasons[0]
            outcome = "already-published"
        else:
            summary = (
                f"attempt {info.uuid} opened for {info.release.name} "
                f"({'new content' if info.release.created else 'content recorded before'}); "
                f"required checks: {', '.join(info.required)}"
            )
            outcome = "opened"
        ctx.progress(summary)
        return Envelope(
            step="attempt", name=req.name, outcome=outcome, safe=None, summary=summary,
            release=facts, attempt=attempt_ref(info),
            details={"required": list(info.required), "first_release": info.first_release,
                     "members": info.release.members, "created": info.release.created,
                     "identity": identity.to_dict()},
        )  # fmt: skip


def _no_ledger_hint(req: AttemptRequest) -> str:
    """What to do when the ledger is not there: record the dataset's policy (which creates
    it) for a declared first release, else that and the declaration."""
    return _needs_policy(req.dataset) if req.first_release else _declare_first(req.dataset)


def _declare_first(dataset: str) -> str:
    dataset = _shown(dataset)
    return (
        f"If this is the dataset's first release, its policy is recorded first "
        f"(`airflow-privacy policy set --dataset {dataset} ...`, which creates the ledger) and "
        f"the release is declared with {opt('first_release')}"
    )


def _shown(dataset: str) -> str:
    """The dataset's name in a suggested command line: as given when it is a plain word,
    else a placeholder (a name with spaces, escapes or control characters is never pasted
    into a terminal line)."""
    import re

    return dataset if re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", dataset) else "NAME"


def _needs_policy(dataset: str) -> str:
    """How a dataset's first release gets the policy it needs, in words for any front end."""
    dataset = _shown(dataset)
    return (
        f"The first release of a dataset needs its policy, recorded by the organization before "
        f"anything is published: `airflow-privacy policy set --dataset {dataset} --criterion "
        f"NAME:PARAMS ... --by NAME --reason TEXT` (or DatasetPolicyOperator with "
        f"action='set'); it creates the ledger when there is none"
    )


ATTEMPT = AttemptStep()


def open_attempt(req: AttemptRequest, ctx: GateContext) -> Envelope:
    """Open an attempt (module doc)."""
    return ATTEMPT.run(req, ctx)
