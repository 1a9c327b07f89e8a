"""The composition audit of a candidate release against the ledger and/or prior files.

One flow for the CLI (``airflow-privacy audit``) and the Airflow
``CompositionAuditOperator``: read the candidate (and its manifest), collect the earlier
releases (published releases of the ledger, optionally restricted to datasets, and release
files), read the population, run Algorithm 1 (:func:`composition_audit`) and gate on PVP_C.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_privacy.core.composition import composition_audit, gate
from airflow_privacy.core.composition.attack import MissingQI, Overlap
from airflow_privacy.core.composition.files import (
    ReleaseFile,
    read_population_file,
    read_release_file,
)
from airflow_privacy.core.composition.identifiers import DEFAULT_KEY_ENV
from airflow_privacy.core.composition.locate import Population
from airflow_privacy.core.composition.result import CompositionResult, Measure
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.errors import InputError
from airflow_privacy.ledger.api import ReleaseLedger


@dataclass(frozen=True)
class AuditRequest:
    """What to audit and how (the options of ``airflow-privacy audit``)."""

    candidate: str
    population: str | None = None
    qis: Sequence[str] | None = None
    sensitive: str | None = None
    kind: str | None = None
    bucket: str | None = None
    manifest: str | None = None
    fmt: Any = None
    delimiter: str | None = None
    datasets: Sequence[str] | None = None
    against: Sequence[str] | None = None
    prior_files: Sequence[str] | None = None
    overlap: Overlap = "worst-case"
    id_column: str | None = None
    key_env: str = DEFAULT_KEY_ENV
    hierarchies: Mapping[str, Any] = field(default_factory=dict)
    missing_qi: MissingQI = "error"
    top: int = 10
    confidence: float = 1.0
    max_pvp: float = 0.0
    measure: Measure = "ganta"


@dataclass
class AuditRun:
    """Everything an audit produced: the candidate file, the population, the attack's
    result, the gate's verdict and where each earlier release came from."""

    cand: ReleaseFile
    population: Population
    result: CompositionResult
    verdict: CriterionResult
    sources: list[dict[str, Any]]
    population_path: str


def run_audit(
    req: AuditRequest,
    ledger: ReleaseLedger | None,
    progress: Callable[[str], None] = lambda _msg: None,
) -> AuditRun:
    """Run the composition audit described by ``req`` (see the module docstring)."""
    if ledger is None and not req.prior_files:
        raise InputError("nothing to audit against: give a ledger and/or prior release files")
    progress(f"reading the candidate {req.candidate}")
    cand = read_release_file(
        req.candidate,
        qis=req.qis,
        sensitive=req.sensitive,
        kind=req.kind,
        bucket=req.bucket,
        manifest=req.manifest,
        fmt=req.fmt,
        delimiter=req.delimiter,
    )
    candidate = cand.release
    progress(f"candidate: {candidate.n_records:,} records in {candidate.n_groups:,} groups")
    if req.population:
        pop_path = req.population
    elif candidate.kind == "bucketized":
        pop_path = req.candidate
    else:
        raise InputError(
            f"the candidate publishes {candidate.kind} QIs, not its people's exact values; "
            "pass --population FILE with its original records"
        )

    key = ledger.hash_key() if (ledger is not None and req.id_column) else None
    if req.id_column and key is None:
        from airflow_privacy.core.composition.identifiers import key_from_env

        key = key_from_env(req.key_env)

    priors, members, sources = [], [], []
    if ledger is not None:
        own = candidate.content_hash()
        infos = (
            [ledger.resolve(ref) for ref in req.against]
            if req.against
            else ledger.list(status="published", datasets=req.datasets)
        )
        if req.against and req.datasets:
            infos = [i for i in infos if i.dataset in req.datasets]
        for info in infos:
            rel = ledger.release(info.id)
            if rel.content_hash() == own:
                progress(f"skipping ledger release #{info.id}: it is the candidate itself")
                continue
            priors.append(rel)
            members.append(ledger.member_hashes(info.id) if req.overlap == "known" else None)
            sources.append(
                {"source": "ledger", "id": info.id, "name": rel.name, "status": info.status}
            )
        progress(f"{len(priors)} earlier release(s) from {ledger.url}")
    for path in req.prior_files or []:
        has_manifest = Path(f"{path}.manifest.json").is_file()
        pf = read_release_file(
            path,
            qis=None if has_manifest else candidate.qis,
            sensitive=None if has_manifest else candidate.sensitive,
            kind=None if has_manifest else candidate.kind,
            bucket=None if has_manifest else cand.bucket,
            fmt=req.fmt,
            delimiter=req.delimiter,
        )
        priors.append(pf.release)
        members.append(None)
        sources.append({"source": "file", "path": str(path), "name": pf.release.name})
    if not priors:
        raise InputError(
            "no earlier release to audit against (no published release in the ledger"
            + (f" for dataset(s) {', '.join(req.datasets)}" if req.datasets else "")
            + ", and no --prior file)"
        )
    if req.overlap == "known":
        for src, m in zip(sources, members, strict=True):
            if m is None:
                raise InputError(
                    f"{src['name']} has no identifier hashes, so its overlap with the candidate "
                    "is unknown; use --overlap worst-case (or import it with --identifiers)"
                )

    qis = list(dict.fromkeys([*candidate.qis, *(q for r in priors for q in r.qis)]))
    progress(f"reading the population {pop_path}")
    population = read_population_file(
        pop_path,
        qis,
        id_column=req.id_column,
        hash_key=key,
        fmt=req.fmt if pop_path == req.candidate else None,
    )
    progress(f"locating {population.n:,} people in {len(priors) + 1} releases")
    result = composition_audit(
        population,
        candidate,
        priors,
        overlap=req.overlap,
        prior_members=members if req.overlap == "known" else None,
        hierarchies=req.hierarchies,
        missing_qi=req.missing_qi,
        top=req.top,
        confidences=sorted({1.0, 0.5, 1 / 3, 0.25, 0.2, req.confidence}, reverse=True),
    )
    verdict = gate(result, req.confidence, req.max_pvp, req.measure)
    return AuditRun(cand, population, result, verdict, sources, str(pop_path))
