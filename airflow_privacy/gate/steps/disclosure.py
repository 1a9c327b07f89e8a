"""The disclosure step, declared once (:class:`DisclosureStep`; ``airflow-privacy
disclosure``): the maximum-disclosure curve of a release for k = 0..K pieces of background
knowledge, basic implications and negated atoms (Martin, Kifer, Machanavajjhala, Gehrke,
Halpern, ICDE 2007, Theorem 9 and section 4; the curve is flat from the saturation point on),
with the witness of each point.

An exploration: the envelope has no verdict (``safe`` None, outcome ``computed``), so it is
never a pass; gate with ``check --criterion ck-safety``. Witnesses name groups and
pseudonymous positions, never a person's value."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.gate.steps.values import column, columns

if TYPE_CHECKING:
    from airflow_privacy.core.model import Bucketization
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef

#: the largest k of a curve (:data:`airflow_privacy.core.criteria.registry.MAX_K_CURVE`;
#: tests/gate/steps keeps them equal: the parser is built without the engines)
MAX_K_CURVE = 10_000


@dataclass(frozen=True)
class DisclosureRequest:
    release: ReleaseRef
    sensitive: str
    group_columns: Sequence[str]
    k_max: int
    benign: Sequence[str] = ()
    missing_as: str | None = None
    fmt: Any = None
    delimiter: str | None = None
    name: str = "disclosure"


def release_fields() -> tuple[Field, ...]:
    """RELEASE, the sensitive column and the group columns of an exploration."""
    return (
        Field(
            "release", "ref", "the release: a CSV or Parquet file, an object-store URI or a "
            "SQL table (counted in the database)", cli="RELEASE", required=True,
            airflow=None, cli_note="table:SCHEMA.NAME with --conn URL",
        ),
        shared.sensitive(),
        Field(
            "group", "columns", "the columns whose distinct combinations are the QI-groups",
            cli="--group", airflow="group_columns", required=True, metavar="COL",
            dest="groups",
        ),
        shared.benign(),
        shared.missing_as(),
    )  # fmt: skip


def read_release(req: Any, ctx: GateContext) -> Bucketization:
    """The release's per-group counts (the one read of the data), with its benign values."""
    from airflow_privacy.core.model import ReleaseSpec
    from airflow_privacy.gate.benign import benign_values
    from airflow_privacy.gate.tables import read_counts

    spec = ReleaseSpec(
        sensitive=column(req.sensitive, "sensitive"),
        group_columns=tuple(columns(req.group_columns, "group")),
    )
    b = read_counts(req.release, spec, ctx, fmt=req.fmt, delimiter=req.delimiter,
                    missing_as=req.missing_as)  # fmt: skip
    ctx.progress(
        f"{b.n_records:,} records in {b.n_groups:,} groups, {len(b.values)} sensitive values"
    )
    return b.with_benign(benign_values(req.benign))


def facts(req: Any, b: Bucketization) -> Any:
    from airflow_privacy.gate.envelope import ReleaseFacts

    return ReleaseFacts(
        ref=req.release.describe(), records=b.n_records, groups=b.n_groups,
        sensitive=req.sensitive, group_columns=list(req.group_columns),
    )  # fmt: skip


class DisclosureStep(Step):
    """``disclosure``: the maximum-disclosure curve (module doc)."""

    name = "disclosure"
    summary = "maximum disclosure for k = 0..K pieces of knowledge"
    description = (
        "Maximum disclosure against k basic implications and k negated atoms, for k = 0..K, "
        "with the witness of each. An exploration without a verdict (exit 0, or 2 on bad "
        "input); gate with check --criterion ck-safety."
    )
    fields = (
        *release_fields(),
        Field(
            "k_max", "whole", "the largest k of the curve (the curve is flat from the number "
            "of distinct sensitive values in a group on)", cli="--k-max", airflow=None,
            required=True, metavar="K", low=0, high=MAX_K_CURVE,
        ),
    )  # fmt: skip
    cli_groups = ("input", "output")

    def request(self, values: Mapping[str, Any]) -> DisclosureRequest:
        return DisclosureRequest(
            release=values["release"],
            sensitive=values["sensitive"],
            group_columns=list(values["group"]),
            k_max=values["k_max"],
            benign=tuple(values.get("benign") or ()),
            missing_as=values.get("missing_as"),
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
        )

    def run(self, req: DisclosureRequest, ctx: GateContext) -> Envelope:
        from airflow_privacy.core.criteria.worst_case import (
            describe_witness,
            disclosure_curve,
            witness_dict,
        )
        from airflow_privacy.gate.benign import benign_details, benign_values
        from airflow_privacy.gate.envelope import Envelope

        self.check(Known({"k_max": req.k_max}))  # before reading a possibly large file
        b = read_release(req, ctx)
        ctx.progress(f"computing the disclosure curve for k = 0..{req.k_max}")
        curve = disclosure_curve(b, req.k_max)
        last = curve[-1]
        summary = (
            f"maximum disclosure at k = {last.k}: {last.implications.max_disclosure:.4g} "
            f"against basic implications, {last.negations.max_disclosure:.4g} against "
            "negated atoms (no verdict)"
        )
        return Envelope(
            step="disclosure", name=req.name, outcome="computed", safe=None, summary=summary,
            release=facts(req, b),
            details={
                **benign_details(benign_values(req.benign), b.values),
                "k_max": req.k_max,
                "curve": [
                    {
                        "k": p.k,
                        "implications": p.implications.max_disclosure,
                        "negations": p.negations.max_disclosure,
                        "implications_witness": witness_dict(b, p.implications),
                        "negations_witness": witness_dict(b, p.negations),
                    }
                    for p in curve
                ],
                "witness_text": describe_witness(b, last.implications),
            },
        )  # fmt: skip


DISCLOSURE = DisclosureStep()
