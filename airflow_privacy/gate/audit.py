"""The composition audit step: the intersection attack of Ganta, Kasiviswanathan and Smith
(KDD 2008, Algorithm 1) on a candidate and every earlier release of the same people.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, LedgerMissing, opt
from airflow_privacy.gate.attempts import (
    begin_check,
    has_manifest,
    read_candidate,
    record,
    skipped,
)
from airflow_privacy.gate.benign import benign_details, benign_values
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
from airflow_privacy.gate.refs import ReleaseRef

if TYPE_CHECKING:
    from airflow_privacy.core.composition.release import PublishedRelease
    from airflow_privacy.ledger import AttemptInfo, ReleaseLedger

OVERLAPS = ("worst-case", "known")
MEASURES = ("ganta", "posterior")
MISSING_QI = ("error", "suppressed")


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


def _check(req: AuditRequest) -> None:
    from airflow_privacy.core.composition.result import check_confidence, check_max_pvp

    check_max_pvp(req.max_pvp)
    check_confidence(req.confidence)
    benign_values(req.benign)
    if req.overlap not in OVERLAPS:
        raise InputError(f"{opt('overlap')} must be worst-case or known, got {req.overlap!r}")
    if req.measure not in MEASURES:
        raise InputError(f"{opt('measure')} must be ganta or posterior, got {req.measure!r}")
    if req.missing_qi not in MISSING_QI:
        raise InputError(f"{opt('missing_qi')} must be error or suppressed, got {req.missing_qi!r}")
    if isinstance(req.top, bool) or not isinstance(req.top, int) or not 0 <= req.top <= 10_000:
        raise InputError(f"{opt('top')} must be a whole number in [0, 10000], got {req.top!r}")
    if req.overlap == "known" and not req.id_column:
        raise InputError(
            f"{opt('overlap')} known needs {opt('id_column')} (of {opt('population')})"
        )
    for name, value in (("datasets", req.datasets), ("against", req.against)):
        if value is not None and (isinstance(value, str) or not isinstance(value, Sequence)):
            raise InputError(f"{opt(name)} must be a list, got {value!r}")
    if not req.use_ledger and (req.datasets or req.against or req.attempt):
        raise InputError(f"{opt('dataset')} and {opt('against')} need the ledger")
    if not req.use_ledger and not req.prior_files:
        raise InputError(f"nothing to audit against: use the ledger and/or {opt('prior')} FILE")


def _hierarchies(specs: Mapping[str, str]) -> dict[str, Any]:
    from airflow_privacy.core.hierarchy import Hierarchy

    if not isinstance(specs, Mapping):
        raise InputError(f"{opt('hierarchy')}: expected column -> file")
    return {col: Hierarchy.from_arx_csv(str(path), col) for col, path in specs.items()}


def run_audit(req: AuditRequest, ctx: GateContext) -> Envelope:
    """Audit ``req.candidate`` (module doc)."""
    from airflow_privacy.core.composition import composition_audit, gate
    from airflow_privacy.gate.tables import check_writable

    _check(req)
    if req.individuals is not None:
        from airflow_privacy.gate.tables import check_not_input

        check_writable(req.individuals, "the individuals file", option="individuals", kind="table")
        reads: list[ReleaseRef | str | None] = [req.candidate, req.population, *req.prior_files]
        if isinstance(req.hierarchies, Mapping):
            reads += [str(path) for path in req.hierarchies.values()]
        check_not_input(req.individuals, "the individuals file", reads, option="individuals")
    hierarchies = _hierarchies(req.hierarchies)
    start = begin_check(req.attempt, req.ledger, ctx, reads=req.candidate)
    attempt = start.info
    if start.skip:
        return skipped("audit", req.name, attempt)
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
    notes: list[str] = []
    # what the gate compares with the ledger when it decides: a release published in this
    # scope after the audit read the ledger was not audited against (the attempt is blocked)
    scope: dict[str, Any] | None = None
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
                already = _collect(req, ledger, candidate, attempt, first_release, priors,
                                   members, sources, notes, scope, ctx)  # fmt: skip
                if already is not None:
                    return already
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
                    f"{src['name']} has no identifier hashes, so its overlap with the candidate "
                    f"is unknown; use {opt('overlap')} worst-case"
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
        return record(env, start, req.ledger, ctx)

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
    )
    verdict = gate(result, req.confidence, req.max_pvp, req.measure)  # type: ignore[arg-type]
    ctx.progress(f"composition: {'PASS' if verdict.safe else 'BLOCKED'}")
    outputs: dict[str, str] = {}
    if req.individuals is not None:
        from airflow_privacy.gate.tables import write_outputs

        write_outputs({req.individuals: result.individuals_table()}, ctx)
        outputs["individuals"] = req.individuals.describe()
        ctx.progress(f"per-individual results (confidential) written to {outputs['individuals']}")
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
    )
    return record(env, start, req.ledger, ctx)


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
    known = set(ledger.datasets())
    published = ledger.list(status="published")
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
