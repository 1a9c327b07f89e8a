"""``CompositionAuditOperator``: the intersection attack against every earlier release.

Its arguments are checked as the step declares them
(:class:`airflow_privacy.gate.steps.audit.AuditStep`; Ganta et al. 2008), the
service behind ``airflow-privacy audit``: the candidate is located, person by person, in
every published release of the ledger and intersected; PVP_C above the limit blocks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_privacy.gate.steps.audit import AUDIT
from airflow_privacy.providers.airflow.operators.base import CheckOperator


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
    :param benign_values: sensitive values whose disclosure is not a breach (a list of text):
        a person pinned to benign values only is not counted in PVP_C
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

    #: derived from the step's declaration, plus the attempt
    template_fields: Sequence[str] = (*AUDIT.template_fields(), "attempt")

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
        benign_values: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.benign_values = benign_values
        self.candidate = candidate
        self.population = population
        self.qis = qis
        self.sensitive = sensitive
        self.datasets = datasets
        self.against = against
        self.prior_files = prior_files
        self.use_ledger = use_ledger
        self.first_release = first_release
        self.confidence = confidence
        self.max_pvp = max_pvp
        self.measure = measure
        self.overlap = overlap
        self.id_column = id_column
        self.hierarchies = hierarchies
        self.missing_qi = missing_qi
        self.top = top
        self.individuals = individuals
        self.conn_id = conn_id
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it (:mod:`airflow_privacy.gate.steps.audit`;
        :func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, AUDIT, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.providers.airflow import steps

        return steps.execute(self, AUDIT, context)
