"""``CompositionAuditOperator``: the intersection attack against every earlier release.

An adapter over :func:`airflow_privacy.gate.audit.run_audit` (Ganta et al. 2008), the
service behind ``airflow-privacy audit``: the candidate is located, person by person, in
every published release of the ledger and intersected; PVP_C above the limit blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_privacy.providers.airflow.operators.base import CheckOperator
from airflow_privacy.providers.airflow.params import (
    choice,
    columns,
    flag,
    mapping,
    number,
    templated,
    text,
    whole,
)

MEASURES = ("ganta", "posterior")
OVERLAPS = ("worst-case", "known")


class CompositionAuditOperator(CheckOperator):
    """Audit a candidate release against the published releases in the ledger.

    :param candidate: path/URI of the candidate release (its ``.manifest.json`` beside it
        names the QIs and the sensitive column; else give ``qis``, ``sensitive``)
    :param population: the candidate's original records (exact QI values), needed unless the
        candidate is bucketized
    :param qis: the candidate's QI columns (default: its manifest's)
    :param sensitive: its sensitive column (default: its manifest's)
    :param datasets: audit against the published releases of these datasets only (default:
        every published release in the ledger); a dataset without published releases is bad
        input unless ``first_release`` (or the attempt declares it)
    :param against: audit against these published ledger releases (ids, UUIDs or
        ``DATASET@VERSION``)
    :param prior_files: further earlier releases as files (paths/URIs)
    :param use_ledger: read the ledger (default True; False: ``prior_files`` only)
    :param first_release: declare the candidate the dataset's first release (no ledger or no
        history is then not an error); with ``attempt``, the attempt's declaration counts
    :param confidence: the confidence C of PVP_C (default 1: perfect breaches)
    :param max_pvp: the largest tolerated PVP_C in percent (default 0: any breach blocks)
    :param measure: ``ganta`` (C_i = 1/|S_i|) or ``posterior`` (frequency-aware)
    :param overlap: ``worst-case`` (everyone locatable is present) or ``known`` (identifier
        hashes: needs ``id_column``, and earlier releases recorded with hashes)
    :param id_column: the identifier column of ``population`` (hashed with the ledger's key)
    :param hierarchies: ``{column: ARX hierarchy CSV}`` to locate hierarchy labels
    :param missing_qi: ``error`` (default) or ``suppressed``: a candidate QI an earlier
        release does not publish
    :param top: how many of the worst individuals to report, by row (default 10)
    :param individuals: write the confidential per-individual table here (path)
    :param conn_id: the connection of URIs
    Also ``attempt``, ``attempt_task_id``, ``check_name``, ``privacy_ledger_conn_id``,
    ``on_unsafe`` (see :class:`CheckOperator`).

    Returns (XCom) the report envelope (step ``audit``); the worst individuals appear by row
    number only, never with their values.
    """

    template_fields: Sequence[str] = (
        "candidate", "population", "datasets", "prior_files", "confidence", "max_pvp",
        "hierarchies", "first_release", "attempt", "overlap", "measure", "against", "id_column",
        "individuals",
    )  # fmt: skip

    def __init__(
        self,
        *,
        candidate: str,
        population: str | None = None,
        qis: Sequence[str] | None = None,
        sensitive: str | None = None,
        datasets: Sequence[str] | None = None,
        against: Sequence[str] | None = None,
        prior_files: Sequence[str] | None = None,
        use_ledger: bool = True,
        first_release: bool | str = False,
        confidence: float | str = 1.0,
        max_pvp: float | str = 0.0,
        measure: str = "ganta",
        overlap: str = "worst-case",
        id_column: str | None = None,
        hierarchies: Mapping[str, str] | None = None,
        missing_qi: str = "error",
        top: int = 10,
        individuals: str | None = None,
        conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.candidate = candidate
        self.population = population
        self.qis = qis
        self.sensitive = sensitive
        self.datasets = datasets
        self.against = against
        self.prior_files = prior_files
        self.use_ledger = flag(use_ledger, "use_ledger")
        self.first_release = first_release
        self.confidence = confidence
        self.max_pvp = max_pvp
        self.measure = measure if templated(measure) else choice(measure, "measure", MEASURES)
        self.overlap = overlap if templated(overlap) else choice(overlap, "overlap", OVERLAPS)
        self.id_column = id_column
        self.hierarchies = hierarchies or {}
        self.missing_qi = choice(missing_qi, "missing_qi", ("error", "suppressed"))
        self.top = whole(top, "top", 0, 10_000)
        self.individuals = individuals
        self.conn_id = conn_id
        for name, value in (("datasets", datasets), ("prior_files", prior_files),
                            ("against", against), ("qis", qis)):  # fmt: skip
            if value is not None and not templated(value):
                columns(value, name)
        if not templated(hierarchies):
            mapping(hierarchies, "hierarchies")
        if not templated(first_release):
            flag(first_release, "first_release")
        if not templated(confidence):
            number(confidence, "confidence", 0, 1, open_low=True)
        if not templated(max_pvp):
            number(max_pvp, "max_pvp", 0, 100)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.audit import AuditRequest, run_audit
        from airflow_privacy.gate.refs import ReleaseRef

        def service(ctx: Any, attempt: str | None) -> Any:
            pop = text(self.population, "population", required=False)
            ind = text(self.individuals, "individuals", required=False)
            return run_audit(
                AuditRequest(
                    candidate=ReleaseRef(path=text(self.candidate, "candidate"), conn=self.conn_id),
                    population=ReleaseRef(path=pop, conn=self.conn_id) if pop else None,
                    qis=columns(self.qis, "qis", required=False),
                    sensitive=text(self.sensitive, "sensitive", required=False),
                    datasets=columns(self.datasets, "datasets", required=False),
                    against=columns(self.against, "against", required=False),
                    prior_files=[
                        ReleaseRef(path=p, conn=self.conn_id)
                        for p in columns(self.prior_files, "prior_files", required=False) or []
                    ],
                    overlap=choice(self.overlap, "overlap", OVERLAPS),
                    id_column=text(self.id_column, "id_column", required=False),
                    hierarchies=mapping(self.hierarchies, "hierarchies"),
                    missing_qi=self.missing_qi,
                    top=self.top if self.top is not None else 10,
                    confidence=number(self.confidence, "confidence", 0, 1, open_low=True) or 1.0,
                    max_pvp=number(self.max_pvp, "max_pvp", 0, 100) or 0.0,
                    measure=choice(self.measure, "measure", MEASURES),
                    first_release=flag(self.first_release, "first_release"),
                    individuals=ReleaseRef(path=ind) if ind else None,
                    use_ledger=self.use_ledger,
                    attempt=attempt,
                    name=self.name,
                ),
                ctx,
            )

        return self.attempt_service(context, service)
