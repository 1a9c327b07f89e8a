"""The composition audit step, declared once (:class:`AuditStep`; ``airflow-privacy audit``
and ``CompositionAuditOperator`` are derived from it): the intersection attack of Ganta,
Kasiviswanathan and Smith (KDD 2008, Algorithm 1) on a candidate and every earlier release of
the same people.

Earlier releases come from the ledger (every *published* release, or those of the datasets
named) and/or release files. A dataset without published history, or a ledger that does not
exist, is an error unless the first release is declared (``first_release``; an attempt
carries the declaration), so a typo never audits against nothing. The candidate's own
release is never an earlier release of itself: with an attempt it is excluded by its ledger
record, without one by its content (content that is already published is reported as such).

The envelope carries the audit's numbers and the worst individuals by pseudonymous row
only; the per-individual table (values left for each person) is confidential and goes only
to a file the user names (``individuals``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, LedgerMissing, opt
from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, MeasuringStep
from airflow_privacy.gate.steps.candidate import candidate_fields, candidate_values
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.gate.steps.values import given_or

if TYPE_CHECKING:
    from airflow_privacy.core.composition.release import PublishedRelease
    from airflow_privacy.gate.attempts import CheckStart
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.ledger import AttemptInfo, ReleaseLedger
    from airflow_privacy.ledger.budget import Budget

OVERLAPS = ("worst-case", "known")
MEASURES = ("ganta", "posterior")
MISSING_QI = ("error", "suppressed")


def parse_confidence(text: str) -> float:
    """A confidence as the command line takes it: ``1``, ``0.5``, ``50%`` or ``1/3``."""
    t = text.strip()
    try:
        if t.endswith("%"):
            value = float(t[:-1]) / 100
        elif "/" in t:
            num, den = t.split("/", 1)
            value = float(num) / float(den)
        else:
            value = float(t)
    except (ValueError, ZeroDivisionError):
        raise ValueError(
            f"--confidence must be a number in (0, 1], a percentage or a fraction, got {text!r}"
        ) from None
    if not 0 < value <= 1:
        raise ValueError(f"--confidence must be in (0, 1], got {text!r}")
    return value


@dataclass(frozen=True)
class AuditRequest:
    candidate: ReleaseRef
    population: ReleaseRef | None = None
    qis: Sequence[str] | None = None
    sensitive: str | None = None
    kind: str | None = None
    bucket: str | None = None
    manifest: ReleaseRef | None = None
    datasets: Sequence[str] | None = None
    against: Sequence[str] | None = None
    prior_files: Sequence[ReleaseRef] = ()
    overlap: str = "worst-case"
    id_column: str | None = None
    hierarchies: Mapping[str, str] = field(default_factory=dict)
    missing_qi: str = "error"
    top: int = 10
    confidence: float = 1.0
    max_pvp: float = 0.0
    measure: str = "ganta"
    first_release: bool = False
    individuals: ReleaseRef | None = None
    use_ledger: bool = True
    ledger: str | None = None
    attempt: str | None = None
    name: str = "audit"
    fmt: Any = None
    delimiter: str | None = None
    benign: Sequence[str] = ()


class AuditStep(MeasuringStep):
    """``audit``: the intersection attack on a candidate and its earlier releases (module
    doc)."""

    name = "audit"
    summary = "intersect a candidate with earlier releases (composition attack)"
    description = (
        "Run the intersection attack (Ganta, Kasiviswanathan, Smith 2008) on a candidate "
        "release and the earlier releases of the same people, from the ledger (every "
        "published release, or those of --dataset) and/or release files: locate every person "
        "of the candidate in every release from their QI values, intersect the groups' "
        "sensitive values, report EA, EA-hat, Anon_Drop, C and PVP_C, and block when PVP_C "
        "exceeds the limit. A ledger that does not exist, or a dataset without published "
        "history, is an error unless --first-release. Exit 0 = pass, 1 = blocked, 2 = bad "
        "input."
    )
    operator = "airflow_privacy.providers.airflow.operators.composition.CompositionAuditOperator"
    fields = (
        Field(
            "candidate",
            "ref",
            "the candidate release (a file or URI)",
            cli="CANDIDATE",
            required=True,
            type_hint="str",
        ),
        *candidate_fields(
            "the candidate (and of prior files without a manifest)",
            airflow=frozenset({"qi", "sensitive"}),
        ),
        Field(
            "population",
            "ref",
            "the original records of the candidate (exact QI values of "
            "its people; default: the candidate itself when it is bucketized)",
            metavar="FILE",
            type_hint="str | None",
        ),
        Field(
            "id_column",
            "column",
            "the identifier column of the population: its keyed hashes "
            "tell who is in which ledger release (needed for a known overlap)",
            cli="--id-column",
            metavar="COL",
            type_hint="str | None",
        ),
        Field(
            "datasets",
            "columns",
            "audit against the published releases of this dataset "
            "only (default: every published release in the ledger); a name without published "
            "releases is an error unless first_release",
            cli="--dataset",
            metavar="NAME",
            dest="datasets",
            noun="dataset name",
            type_hint="list[str] | None",
        ),
        Field(
            "against",
            "columns",
            "audit against this published ledger release (id, UUID or DATASET@VERSION)",
            metavar="RELEASE",
            noun="release (id, UUID or DATASET@VERSION)",
            type_hint="list[str] | None",
        ),
        Field(
            "prior",
            "refs",
            "an earlier release file; its manifest, or else the candidate's "
            "columns, say how to read it",
            cli="--prior",
            airflow="prior_files",
            metavar="FILE",
            dest="prior",
            type_hint="list[str] | None",
        ),
        Field(
            "use_ledger",
            "flag",
            "read the ledger's published releases as earlier releases; turned off, the prior "
            "files only are audited against and the ledger is not read",
            cli="--no-ledger",
            default=True,
            store_false=True,
            templated=False,
            type_hint="bool",
        ),
        Field(
            "first_release",
            "flag",
            "declare the candidate the dataset's first release: no "
            "ledger or no published history is then not an error (an attempt carries its own "
            "declaration)",
            cli="--first-release",
            default=False,
            type_hint="bool | str",
        ),
        Field(
            "hierarchy",
            "files",
            "the ARX hierarchy of a QI whose published labels come from "
            "it; none for numeric QIs published as intervals",
            cli="--hierarchy",
            airflow="hierarchies",
            metavar="COL=FILE",
            dest="hierarchy",
            type_hint="Mapping[str, str] | None",
        ),
        Field(
            "overlap",
            "choice",
            "worst-case: everyone locatable in a release is assumed to "
            "be in it; known: from identifier hashes (the identifier column, ledger releases "
            "recorded with them)",
            default="worst-case",
            choices=OVERLAPS,
            type_hint="str",
        ),
        Field(
            "missing_qi",
            "choice",
            "a candidate QI an earlier release does not publish: an error, or treated as '*' there",
            cli="--missing-qi",
            default="error",
            choices=MISSING_QI,
            templated=False,
            type_hint="str",
        ),
        Field(
            "confidence",
            "number",
            "the confidence of the gate: 1 = a perfect breach, 0.5, "
            "1/3 ... (the command line also reads 50% and 1/3)",
            metavar="C",
            default=1.0,
            low=0,
            high=1,
            open_low=True,
            parse=parse_confidence,
            type_hint="float | str",
        ),
        Field(
            "max_pvp",
            "number",
            "block when more than this percentage of the overlap is "
            "pinned with confidence >= C (0: any such person blocks)",
            cli="--max-pvp",
            metavar="PERCENT",
            default=0.0,
            low=0,
            high=100,
            type_hint="float | str",
        ),
        Field(
            "measure",
            "choice",
            "gate on Ganta's C_i = 1/|S_i| or on the frequency-aware posterior",
            default="ganta",
            choices=MEASURES,
            type_hint="str",
        ),
        Field(
            "top",
            "whole",
            "how many of the worst individuals to report, by row number",
            metavar="N",
            default=10,
            low=0,
            high=10_000,
            templated=False,
            type_hint="int",
        ),
        Field(
            "individuals",
            "text",
            "write one row per individual (EA per release, EA-hat, "
            "Anon_Drop, C, posterior, the values left) to this CSV or Parquet file; it is "
            "confidential (nothing else shows an individual's values)",
            metavar="FILE",
            type_hint="str | None",
        ),
        shared.benign(
            "a sensitive value whose disclosure is not a breach: never counted as pinned down"
        ),
        shared.conn(),
    )
    cli_groups = ("input", "attempt", "report", "output")

    def reads(self, req: AuditRequest) -> Any:
        return req.candidate

    def rules(self, known: Known) -> None:
        # the declared choices (overlap, measure, missing_qi) and ranges (confidence,
        # max_pvp, top): Step.check, before this
        from airflow_privacy.gate.benign import benign_values

        if known.get("benign") is not None:
            benign_values(known["benign"])
        if known.get("overlap") == "known" and known.has("id_column") and not known["id_column"]:
            raise InputError(
                f"{opt('overlap')} known needs {opt('id_column')} (of {opt('population')})"
            )
        for key in ("datasets", "against"):
            value = known.get(key)
            if value is not None and (isinstance(value, str) or not isinstance(value, Sequence)):
                raise InputError(f"{opt(key)} must be a list, got {value!r}")
        if known.get("use_ledger") is False:
            if known.get("datasets") or known.get("against") or known.get("attempt"):
                raise InputError(f"{opt('datasets')} and {opt('against')} need the ledger")
            if known.has("prior") and not known["prior"]:
                raise InputError(
                    f"nothing to audit against: use the ledger and/or {opt('prior')} FILE"
                )

    def values_of(self, req: AuditRequest) -> Known:
        return Known(
            {
                "candidate": req.candidate, "population": req.population, "qi": req.qis,
                "sensitive": req.sensitive, "datasets": req.datasets, "against": req.against,
                "prior": req.prior_files, "use_ledger": req.use_ledger,
                "first_release": req.first_release, "hierarchy": req.hierarchies,
                "overlap": req.overlap, "missing_qi": req.missing_qi,
                "confidence": req.confidence, "max_pvp": req.max_pvp, "measure": req.measure,
                "top": req.top, "individuals": req.individuals, "benign": req.benign,
                "id_column": req.id_column, "attempt": req.attempt,
            }
        )  # fmt: skip

    def request(self, values: Mapping[str, Any]) -> AuditRequest:
        from airflow_privacy.gate.refs import ReleaseRef

        individuals = values.get("individuals")
        return AuditRequest(
            candidate=values["candidate"],
            population=values.get("population"),
            datasets=values.get("datasets") or None,
            against=values.get("against") or None,
            prior_files=list(values.get("prior") or ()),
            overlap=given_or(values.get("overlap"), "worst-case"),
            id_column=values.get("id_column"),
            hierarchies=dict(values.get("hierarchy") or {}),
            missing_qi=given_or(values.get("missing_qi"), "error"),
            top=given_or(values.get("top"), 10),
            confidence=given_or(values.get("confidence"), 1.0),
            max_pvp=given_or(values.get("max_pvp"), 0.0),
            measure=given_or(values.get("measure"), "ganta"),
            first_release=bool(values.get("first_release")),
            individuals=ReleaseRef(path=individuals) if individuals is not None else None,
            use_ledger=given_or(values.get("use_ledger"), True),
            ledger=values.get("ledger"),
            attempt=values.get("attempt"),
            name=values.get("name") or "audit",
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
            benign=tuple(values.get("benign") or ()),
            **candidate_values(values),
        )

    def before_begin(self, req: AuditRequest, ctx: GateContext) -> dict[str, Any]:
        """The output checks, and the hierarchy files loaded (handed to :meth:`measure`)."""
        if req.individuals is not None:
            from airflow_privacy.gate.tables import check_not_input, check_writable

            check_writable(
                req.individuals, "the individuals file", option="individuals", kind="table"
            )
            reads: list[ReleaseRef | str | None] = [req.candidate, req.population, *req.prior_files]
            if isinstance(req.hierarchies, Mapping):
                reads += [str(path) for path in req.hierarchies.values()]
            check_not_input(req.individuals, "the individuals file", reads, option="individuals")
        return _hierarchies(req.hierarchies)

    def measure(
        self, req: AuditRequest, ctx: GateContext, start: CheckStart, prepared: dict[str, Any]
    ) -> Envelope:
        """Audit ``req.candidate`` (module doc)."""
        from airflow_privacy.core.composition import composition_audit, gate
        from airflow_privacy.gate.attempts import has_manifest, read_candidate
        from airflow_privacy.gate.benign import benign_details, benign_values
        from airflow_privacy.gate.envelope import Envelope, ReleaseFacts

        hierarchies = prepared
        attempt = start.info
        first_release = req.first_release or bool(attempt and attempt.first_release)

        ctx.progress(f"reading the candidate {req.candidate.describe()}")
        cand = read_candidate(
            req.candidate, ctx, qis=req.qis, sensitive=req.sensitive, kind=req.kind,
            bucket=req.bucket, manifest=req.manifest, fmt=req.fmt, delimiter=req.delimiter,
        )  # fmt: skip
        candidate = cand.release
        ctx.progress(f"candidate: {candidate.n_records:,} records in {candidate.n_groups:,} groups")
        if req.population is not None:
            pop_ref = req.population
        elif candidate.kind == "bucketized":
            pop_ref = req.candidate
        else:
            raise InputError(
                f"the candidate publishes {candidate.kind} QIs, not its people's exact values; "
                f"give {opt('population')} (its original records)"
            )

        priors: list[PublishedRelease] = []
        members: list[frozenset[str] | None] = []
        sources: list[dict[str, Any]] = []
        key: bytes | None = None
        wrap: Callable[[Iterable[str]], list[str]] | None = None
        notes: list[str] = []
        # what the gate compares with the ledger when it decides: a release published in this
        # scope after the audit read the ledger was not audited against (the attempt is blocked)
        scope: dict[str, Any] | None = None
        dp_budget: Budget | None = None
        if req.use_ledger:
            scope = {
                "datasets": list(req.datasets) if req.datasets else None,
                "fixed": bool(req.against),
                "seen": [],
            }
            ledger = _open(req, ctx, first_release)
            if ledger is not None:
                with ledger:
                    if req.id_column:
                        key = ledger.hash_key()
                        wrap = ledger.hash_wrapper()
                    already = _collect(req, ledger, candidate, attempt, first_release, priors,
                                       members, sources, notes, scope, ctx)  # fmt: skip
                    if already is not None:
                        return already
                    dp_budget = _dp_budget(req, ledger, attempt)
            else:
                notes.append("no ledger yet: declared first release")
        elif req.id_column:
            from airflow_privacy.core.composition.identifiers import key_from_env
            from airflow_privacy.ledger.location import DEFAULT_KEY_ENV

            key = key_from_env(DEFAULT_KEY_ENV)
        for ref in req.prior_files:
            described = has_manifest(ref, ctx)  # else read it as the candidate is published
            pf = read_candidate(
                ref, ctx, qis=None if described else candidate.qis,
                sensitive=None if described else candidate.sensitive,
                kind=None if described else candidate.kind,
                bucket=None if described else cand.bucket,
                fmt=req.fmt, delimiter=req.delimiter,
            )  # fmt: skip
            priors.append(pf.release)
            members.append(None)
            sources.append({"source": "file", "name": pf.release.name, "ref": ref.describe()})
        if req.overlap == "known":
            for src, m in zip(sources, members, strict=True):
                if m is None:
                    raise InputError(
                        f"{src['name']} has no identifier hashes, so its overlap with the "
                        f"candidate is unknown; use {opt('overlap')} worst-case"
                    )

        facts = ReleaseFacts(
            ref=req.candidate.describe(), records=candidate.n_records, groups=candidate.n_groups,
            sensitive=candidate.sensitive,
            group_columns=[cand.bucket] if candidate.kind == "bucketized" and cand.bucket
            else list(candidate.qis),
            kind=candidate.kind,
        )  # fmt: skip
        if not priors:
            summary = "first release (declared): no earlier published release to intersect with" + (
                f"; {'; '.join(notes)}" if notes else ""
            )
            ctx.progress(summary)
            env = Envelope(
                step="audit", name=req.name, outcome="passed", safe=True, summary=summary,
                release=facts,
                results=[_first_result(req)],
                details={"first_release": True, "priors": [], "notes": notes,
                         "ledger_scope": scope},
            )  # fmt: skip
            return env

        from airflow_privacy.core.composition.files import read_population_file
        from airflow_privacy.gate.tables import local_copy

        qis = list(dict.fromkeys([*candidate.qis, *(q for r in priors for q in r.qis)]))
        ctx.progress(f"reading the population {pop_ref.describe()}")
        if pop_ref.is_table:
            from airflow_privacy.gate.members import table_population

            population = table_population(pop_ref, qis, req.id_column, key, ctx)
        else:
            with local_copy(pop_ref, ctx) as path:
                population = read_population_file(
                    path, qis, id_column=req.id_column, hash_key=key,
                    fmt=req.fmt if pop_ref == req.candidate else None,
                )  # fmt: skip
        if wrap is not None and population.id_hashes is not None:
            # the ledger stores hashes wrapped with its derived key: compare like with like
            population = replace(population, id_hashes=tuple(wrap(population.id_hashes)))
        ctx.progress(f"locating {population.n:,} people in {len(priors) + 1} releases")
        result = composition_audit(
            population,
            candidate,
            priors,
            overlap=req.overlap,  # type: ignore[arg-type]
            prior_members=members if req.overlap == "known" else None,
            hierarchies=hierarchies,
            missing_qi=req.missing_qi,  # type: ignore[arg-type]
            top=req.top,
            confidences=sorted({1.0, 0.5, 1 / 3, 0.25, 0.2, req.confidence}, reverse=True),
            benign=benign_values(req.benign),
            rank=req.measure,  # type: ignore[arg-type]
        )
        verdict = gate(result, req.confidence, req.max_pvp, req.measure)  # type: ignore[arg-type]
        advice = []
        if not verdict.safe:
            from airflow_privacy.core.advice import composition_advice, composition_suppression

            def reaudit(changed: Any) -> Any:
                return composition_audit(
                    population, changed, priors, overlap=req.overlap,  # type: ignore[arg-type]
                    prior_members=members if req.overlap == "known" else None,
                    hierarchies=hierarchies, missing_qi=req.missing_qi,  # type: ignore[arg-type]
                    top=0, confidences=(req.confidence,), benign=benign_values(req.benign),
                    rank=req.measure,  # type: ignore[arg-type]
                )  # fmt: skip

            ctx.progress("computing the way forward: suppressing the groups the pinned fall in")
            found = composition_advice(result, req.confidence, req.max_pvp, req.measure)  # type: ignore[arg-type]
            suppressed = composition_suppression(
                population, candidate, result, reaudit, req.confidence, req.max_pvp,
                req.measure, hierarchies,  # type: ignore[arg-type]
            )  # fmt: skip
            coarser = None
            if hierarchies:
                from airflow_privacy.core.advice import audit_label
                from airflow_privacy.core.composition.result import gate as gated
                from airflow_privacy.core.recoding_advice import composition_recoding

                ctx.progress("computing the way forward: a coarser recoding of the candidate")
                coarser = composition_recoding(
                    candidate, hierarchies, reaudit,
                    lambda r: gated(r, req.confidence, req.max_pvp, req.measure).safe is True,  # type: ignore[arg-type]
                    audit_label(req.confidence, req.max_pvp, req.measure),  # type: ignore[arg-type]
                )  # fmt: skip
            advice = [a.to_dict() for a in ([suppressed] if suppressed else [])
                      + ([coarser] if coarser else []) + found]  # fmt: skip
            if dp_budget is not None:
                advice.append(dp_advice(dp_budget))
            for a in advice:
                ctx.progress(f"advice: {a['text']}")
        ctx.progress(f"composition: {'PASS' if verdict.safe else 'BLOCKED'}")
        outputs: dict[str, str] = {}
        if req.individuals is not None:
            from airflow_privacy.gate.tables import write_outputs

            write_outputs({req.individuals: result.individuals_table()}, ctx)
            outputs["individuals"] = req.individuals.describe()
            ctx.progress(
                f"per-individual results (confidential) written to {outputs['individuals']}"
            )
        public = result.public_dict()
        public["priors"] = sources
        public["notes"] = notes
        public["population_ref"] = pop_ref.describe()
        public["ledger_scope"] = scope
        public.update(benign_details(benign_values(req.benign), result.values))
        env = Envelope(
            step="audit",
            name=req.name,
            outcome="passed" if verdict.safe else "failed",
            safe=verdict.safe,
            summary=verdict.reason,
            reasons=[] if verdict.safe else [f"composition: {verdict.reason}"],
            release=facts,
            results=[verdict.to_dict()],
            details=public,
            outputs=outputs,
            advice=advice,
        )
        return env


AUDIT = AuditStep()


def run_audit(req: AuditRequest, ctx: GateContext) -> Envelope:
    """Audit ``req.candidate`` (module doc)."""
    return AUDIT.run(req, ctx)


def _hierarchies(specs: Mapping[str, str]) -> dict[str, Any]:
    from airflow_privacy.core.hierarchy import Hierarchy

    if not isinstance(specs, Mapping):
        raise InputError(f"{opt('hierarchy')}: expected column -> file")
    return {col: Hierarchy.from_arx_csv(str(path), col) for col, path in specs.items()}


def _first_result(req: AuditRequest) -> dict[str, Any]:
    return {
        "criterion": "composition",
        "safe": True,
        "parameters": {
            "confidence": req.confidence,
            "max_pvp": req.max_pvp,
            "measure": req.measure,
            "overlap": req.overlap,
        },
        "value": 0.0,
        "reason": "declared first release: there is no earlier release to intersect with",
        "max_disclosure": None,
        "witness": None,
        "details": {"first_release": True},
    }


def _open(req: AuditRequest, ctx: GateContext, first_release: bool) -> ReleaseLedger | None:
    """The ledger to read (never created here). Missing: an error unless this is a declared
    first release (then None: nothing to audit against)."""
    from airflow_privacy.ledger.engine import sqlite_exists

    loc = ctx.ledger_location(req.ledger)
    if sqlite_exists(loc.url) is False:
        if first_release:
            return None
        from airflow_privacy.ledger.engine import parse_url, sqlite_path

        path = sqlite_path(parse_url(loc.url))
        raise InputError(
            f"ledger file {str(path)!r} ({loc.source}) does not exist, so there is no earlier "
            f"release to audit against: a typo in the ledger's location? If this is the "
            f"dataset's first release, declare it with {opt('first_release')}"
        )
    try:
        return ctx.open_ledger(req.ledger)
    except LedgerMissing as exc:  # a database without ledger tables
        if first_release:
            return None
        raise LedgerMissing(
            f"{exc}, so there is no earlier release to audit against: a typo in the ledger's "
            f"location? If this is the dataset's first release, declare it with "
            f"{opt('first_release')}"
        ) from None


def _collect(
    req: AuditRequest,
    ledger: ReleaseLedger,
    candidate: PublishedRelease,
    attempt: AttemptInfo | None,
    first_release: bool,
    priors: list[PublishedRelease],
    members: list[frozenset[str] | None],
    sources: list[dict[str, Any]],
    notes: list[str],
    scope: dict[str, Any],
    ctx: GateContext,
) -> Envelope | None:
    """The ledger's earlier releases; an envelope when the candidate is already published."""
    from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
    from airflow_privacy.ledger.models import DP_KIND

    known = set(ledger.datasets())
    everything = ledger.list(status="published")
    # a DP release composes by its budget (the ledger keeps it), not by intersection
    published = [i for i in everything if i.kind != DP_KIND]
    if len(published) < len(everything):
        notes.append(
            f"{len(everything) - len(published)} differentially private release(s) left out: "
            "they compose by their privacy budget, not by intersection"
        )
    with_history = {i.dataset for i in published}
    if req.against:
        infos = [ledger.resolve(ref) for ref in req.against]
        for i in infos:
            if i.content_status != "published":
                raise InputError(
                    f"{opt('against')} {i.name} (release #{i.id}) was never published: only "
                    "published releases are earlier releases"
                )
    else:
        wanted = list(req.datasets) if req.datasets else None
        if wanted:
            own = attempt.release.dataset if attempt is not None else None
            for d in wanted:
                # a declared first release excuses only its own dataset's missing history
                excused = first_release and (own is None or d == own)
                if d not in with_history and not excused:
                    hint = f" (datasets in the ledger: {', '.join(sorted(known))})" if known else ""
                    what = "is not in" if d not in known else "has no published release in"
                    raise InputError(
                        f"dataset {d!r} {what} ledger {ledger.url}{hint}: a typo? If this is "
                        f"its first release, declare it with {opt('first_release')}"
                    )
                if d in with_history and first_release and not req.attempt:
                    raise InputError(
                        f"{opt('first_release')} is declared, but dataset {d!r} has published "
                        f"releases to audit against: remove {opt('first_release')}"
                    )
            infos = [i for i in published if i.dataset in wanted]
        else:
            infos = list(published)
            if not infos and not first_release:
                raise InputError(
                    f"ledger {ledger.url} holds no published release to audit against: if this "
                    f"is the first release, declare it with {opt('first_release')}"
                )
    if attempt is not None and attempt.release.members:
        # the scope is people: every published release sharing people with the candidate
        # (by the identifier hashes its attempt recorded), whatever its dataset's name
        have = {i.id for i in infos}
        extra = [ledger.info(r) for r in ledger.sharing_releases(attempt.release.id)]
        extra = [i for i in extra if i.id not in have]
        if extra:
            infos = [*infos, *extra]
            scope["people"] = sorted(i.id for i in extra)
            notes.append(
                "audited also against release(s) sharing people with the candidate (by "
                "their identifier hashes), outside the datasets named: "
                + ", ".join(f"#{i.id} ({i.name})" for i in extra)
            )
    scope["seen"] = sorted(i.id for i in infos)
    own_id = attempt.release.id if attempt is not None else None
    own_hash = candidate.content_hash()
    for info in infos:
        if own_id is not None and info.id == own_id:
            continue
        if own_id is None and info.content_hash == own_hash:
            return Envelope(
                step="audit", name=req.name, outcome="already-published", safe=None,
                summary=f"the candidate is already published as release #{info.id} "
                f"({info.name}): an earlier release of itself, not audited again",
                release=ReleaseFacts(ref=req.candidate.describe(), records=candidate.n_records,
                                     groups=candidate.n_groups, sensitive=candidate.sensitive,
                                     kind=candidate.kind),
            )  # fmt: skip
        priors.append(ledger.release(info.id))
        members.append(ledger.member_hashes(info.id) if req.overlap == "known" else None)
        sources.append({"source": "ledger", "id": info.id, "uuid": info.uuid, "name": info.name})
    ctx.progress(f"{len(priors)} earlier release(s) from {ledger.url}")
    if not priors:
        notes.append("the ledger holds no earlier published release of these datasets")
    return None


def _dp_budget(
    req: AuditRequest, ledger: ReleaseLedger, attempt: AttemptInfo | None
) -> Budget | None:
    """The DP budget of the audited dataset (its attempt's, or the one dataset named), for
    the way forward of a block."""
    from airflow_privacy.gate.policy import dp_cap

    if attempt is not None:
        dataset = attempt.release.dataset
    elif req.datasets and len(req.datasets) == 1:
        dataset = req.datasets[0]
    else:
        return None
    return ledger.dp_budget(dataset, dp_cap)


def dp_advice(budget: Budget, marginals: int = 10) -> dict[str, Any]:
    """The differentially private way forward of a blocked composition audit (Ganta,
    Kasiviswanathan and Smith, KDD 2008, section 4: DP composes where partitions do not):
    the budget left and the error it buys, one person per record, on ``marginals``
    marginals."""
    import math

    from airflow_privacy.core.advice import Advice

    if budget.cap is None:
        text = (
            f"release noisy marginals with differential privacy instead (dp-release): they "
            f"compose where k-anonymous releases do not; the policy of {budget.dataset!r} sets "
            "no DP budget yet (an officer sets one: policy set --dp-rho-cap, or "
            "DatasetPolicyOperator's dp_rho_cap, approved by a "
            "second person)"
        )
        left = 0.0
    elif budget.left <= 0:
        text = (
            f"the DP budget of {budget.dataset!r} is spent ({budget.unit} {budget.cap:g}, "
            "never reset): no differentially private release is left either"
        )
        left = 0.0
    else:
        left = budget.left
        if budget.unit == "rho":  # discrete Gaussian: sigma = sqrt(marginals / (2 rho))
            sigma = math.sqrt(marginals / (2 * left))
        else:  # discrete Laplace of scale b = marginals / epsilon: about sqrt(2) b
            sigma = math.sqrt(2) * marginals / left
        text = (
            f"release noisy marginals with differential privacy instead (dp-release): they "
            f"compose where k-anonymous releases do not; {budget.unit} {left:.4g} of "
            f"{budget.cap:g} is left for {budget.dataset!r}: spent on {marginals} marginals "
            f"it gives each cell a standard deviation of about {sigma:.3g} (one record per "
            "person; more records per person scale it)"
        )
    return Advice(
        kind="dp-release", criterion="composition", text=text, parameter=budget.unit or "rho",
        passes_at=left, rechecked=False,
    ).to_dict()  # fmt: skip
