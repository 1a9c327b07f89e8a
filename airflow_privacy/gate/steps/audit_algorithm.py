"""The audit-algorithm step, declared once (:class:`AuditAlgorithmStep`; ``airflow-privacy
audit-algorithm``): what an adversary who knows the disclosure algorithm and its candidate
order learns from the released candidate (Zhang, Jajodia, Brodsky, CCS 2007, sections 3-4:
the disclosure set, the worlds consistent with the release in which every earlier candidate
fails, and each person's posterior over it).

It runs on the original table, for the publisher: people are named by row number only (never
by the ``id`` column or a sensitive value). The envelope's verdict: safe when nobody's
posterior reaches the threshold and the predicate holds on the disclosure set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.vocabulary import DISCLOSURE_MODES, INTERVAL_METHODS, METRICS

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef


@dataclass(frozen=True)
class AuditAlgorithmRequest:
    source: ReleaseRef
    qis: Sequence[str]
    sensitive: str
    criteria: Any
    id_column: str | None = None
    candidates: Sequence[str] = ()
    released: str | None = None
    mode: str = "naive"
    threshold: float = 1.0
    exact_limit: int = 200_000
    samples: int = 20_000
    seed: int = 0
    confidence: float = 0.95
    interval_method: str = "clopper-pearson"
    min_accepted: int = 100
    people: int = 20
    utility: str = "loss"
    hierarchies: Mapping[str, str] = field(default_factory=dict)
    intervals: Mapping[str, Sequence[int]] = field(default_factory=dict)
    masks: Mapping[str, int | None] = field(default_factory=dict)
    fmt: Any = None
    delimiter: str | None = None
    name: str = "audit-algorithm"


class AuditAlgorithmStep(Step):
    """``audit-algorithm`` (module doc)."""

    name = "audit-algorithm"
    summary = "audit a release against an adversary who knows the disclosure algorithm"
    description = (
        "Compute what an adversary who knows the disclosure algorithm and its candidate "
        "order learns from the released candidate: the disclosure set (worlds consistent "
        "with the release in which every earlier candidate fails) and each person's "
        "posterior. Exit 0 = nobody reaches --threshold and the predicate holds on the "
        "disclosure set, 1 = otherwise, 2 = bad input."
    )
    fields = (
        Field("input", "ref", "the original table (.csv[.gz] or .parquet)", cli="INPUT",
              airflow=None, required=True),
        Field("qi", "columns", "a quasi-identifier column, public knowledge", cli="--qi",
              airflow=None, required=True, metavar="COL", dest="qis"),
        shared.sensitive(),
        Field("id", "column", "the column naming the people in the report (default: row "
              "number; never shown in the output)", cli="--id", airflow=None, metavar="COL",
              dest="id_column"),
        Field("candidates", "values", "a candidate generalization, in the algorithm's order: "
              "the QIs kept, e.g. 'age,sex', 'age=1' (level 1 of age's hierarchy), '*' (all "
              "generalized); QIs not named are '*'. Default: every lattice node in the lattice "
              "anonymizer's order", cli="--candidate", airflow=None, default=(),
              metavar="SPEC", dest="candidates"),
        Field("released", "text", "the released candidate (a SPEC as in --candidate; "
              "default: the one the --mode algorithm releases on INPUT)", airflow=None,
              metavar="SPEC"),
        Field("criterion", "criteria", "the algorithm's safety predicate: NAME or "
              "NAME:PARAM=VALUE,... (all must hold)", cli="--criterion", airflow=None,
              default=(), metavar="NAME[:PARAM=VALUE,...]", dest="criteria"),
        Field("mode", "choice", "the algorithm: naive (stop at the first candidate whose "
              "table passes) or safe (stop at the first whose disclosure set passes)",
              airflow=None, default="naive", choices=DISCLOSURE_MODES),
        Field("threshold", "number", "flag people whose largest posterior reaches this "
              "(1: certain disclosure)", airflow=None, default=1.0, low=0, high=1,
              open_low=True),
        Field("exact_limit", "whole", "enumerate blocks up to this many worlds, sample beyond; "
              "the safe mode declines larger blocks (at most 10,000,000: the worlds are held "
              "in memory)", cli="--exact-limit", airflow=None, default=200_000, low=1,
              high=10_000_000, metavar="WORLDS"),
        Field("samples", "whole", "worlds drawn when sampling (at most 10,000,000: 7 s on "
              "six people, longer on more)", airflow=None, default=20_000, low=1,
              high=10_000_000, metavar="N"),
        Field("seed", "whole", "the sampling seed", airflow=None, default=0, low=0,
              metavar="N"),
        Field("confidence", "number", "the confidence of the sampled intervals",
              airflow=None, default=0.95, low=0, high=1, open_low=True, open_high=True,
              metavar="C"),
        Field("interval_method", "choice", "the binomial interval of sampled posteriors",
              cli="--interval-method", airflow=None, default="clopper-pearson",
              choices=INTERVAL_METHODS),
        Field("min_accepted", "whole", "fewer accepted samples than this: reported as not "
              "estimable", cli="--min-accepted", airflow=None, default=100, low=0,
              metavar="N"),
        Field("people", "whole", "people listed (highest posterior first)", airflow=None,
              default=20, low=0, metavar="N"),
        Field("utility", "choice", "the lattice order: the lattice anonymizer's utility "
              "metric", airflow=None, default="loss", choices=METRICS),
        Field("hierarchy", "files", "the ARX hierarchy file of a QI", cli="--hierarchy",
              airflow=None, metavar="COL=FILE", dest="hierarchy"),
        Field("interval", "intervals", "a numeric hierarchy for a QI: intervals of the given "
              "widths, then *", airflow=None, metavar="COL=W1,W2,..."),
        Field("mask", "masks", "a mask hierarchy for a QI (at most DEPTH characters masked)",
              airflow=None, metavar="COL[=DEPTH]"),
    )  # fmt: skip
    cli_groups = ("criterion-flags", "input-files", "output")

    def rules(self, known: Known) -> None:
        if known.has("criterion") and not known["criterion"]:
            raise InputError(
                f"at least one criterion is required ({opt('criterion')} NAME[:PARAM=VALUE,...])"
            )

    def request(self, values: Mapping[str, Any]) -> AuditAlgorithmRequest:
        return AuditAlgorithmRequest(
            source=values["input"],
            qis=list(values["qi"]),
            sensitive=values["sensitive"],
            criteria=list(values.get("criterion") or ()),
            id_column=values.get("id"),
            candidates=list(values.get("candidates") or ()),
            released=values.get("released"),
            **{k: values[k] for k in (
                "mode", "threshold", "exact_limit", "samples", "seed", "confidence",
                "interval_method", "min_accepted", "people", "utility",
            ) if values.get(k) is not None},
            hierarchies=dict(values.get("hierarchy") or {}),
            intervals=dict(values.get("interval") or {}),
            masks=dict(values.get("mask") or {}),
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
        )  # fmt: skip

    def run(self, req: AuditAlgorithmRequest, ctx: GateContext) -> Envelope:
        from airflow_privacy.core.algorithm_aware import audit_algorithm
        from airflow_privacy.core.algorithm_aware.audit import check_threshold
        from airflow_privacy.core.algorithm_aware.candidates import Generalizer
        from airflow_privacy.core.algorithm_aware.intervals import check_interval
        from airflow_privacy.core.anonymize.criteria import CriteriaSet
        from airflow_privacy.core.cells import describe_columns
        from airflow_privacy.gate.anonymize import built_hierarchies, hierarchy_files
        from airflow_privacy.gate.criteria import parse_criteria
        from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
        from airflow_privacy.gate.tables import column_names, read_table

        self.check(
            Known(
                {
                    "criterion": req.criteria, "mode": req.mode, "threshold": req.threshold,
                    "exact_limit": req.exact_limit, "samples": req.samples, "seed": req.seed,
                    "confidence": req.confidence, "interval_method": req.interval_method,
                    "min_accepted": req.min_accepted, "people": req.people,
                    "utility": req.utility,
                }
            )
        )  # fmt: skip
        check_threshold(req.threshold)
        check_interval(req.interval_method, req.confidence)
        parsed = CriteriaSet.parse(parse_criteria(req.criteria, "criterion"))
        hierarchies = hierarchy_files(req.hierarchies, req.qis)
        header = column_names(req.source, ctx, fmt=req.fmt, delimiter=req.delimiter)
        for col in [*req.qis, req.sensitive, *([req.id_column] if req.id_column else [])]:
            if col not in header:
                raise InputError(f"column {col!r} does not exist in {req.source.name} "
                                 f"(columns: {describe_columns(header)})")  # fmt: skip
        ctx.progress(f"reading {req.source.describe()}")
        table = read_table(req.source, None, ctx, fmt=req.fmt, delimiter=req.delimiter)
        hierarchies.update(built_hierarchies(req.intervals, req.masks, table, req.qis))
        gen = Generalizer(table, req.qis, req.sensitive, hierarchies, req.id_column)
        if req.candidates:
            cands = gen.candidates(list(req.candidates))
            order_of = "given"
        else:
            order = gen.lattice_sequence(parsed, req.utility)
            cands = [gen.candidate(node) for node in order]
            order_of = f"lattice order ({req.utility})"
        ctx.progress(f"{len(cands)} candidates ({order_of}); {gen.population.n:,} people")
        released = gen.name(gen.parse(req.released)) if req.released is not None else None
        r = audit_algorithm(
            gen.population, cands, parsed, released=released, mode=req.mode,
            threshold=req.threshold, exact_limit=req.exact_limit, samples=req.samples,
            seed=req.seed, confidence=req.confidence, interval=req.interval_method,
            min_accepted=req.min_accepted, people_limit=max(req.people, 0),
            progress=ctx.progress,
        )  # fmt: skip
        # the public form: people by row number, never a name (id) or a sensitive value
        public = {"candidate_source": order_of, **r.public_dict()}
        return Envelope(
            step="audit-algorithm", name=req.name,
            outcome="passed" if r.safe else "failed", safe=bool(r.safe),
            summary=str(r.reason), reasons=[] if r.safe else [f"audit-algorithm: {r.reason}"],
            release=ReleaseFacts(ref=req.source.describe(), records=gen.population.n,
                                 groups=len(cands), sensitive=req.sensitive,
                                 group_columns=list(req.qis)),
            details=public,
        )  # fmt: skip


AUDIT_ALGORITHM = AuditAlgorithmStep()
