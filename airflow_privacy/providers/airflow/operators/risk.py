"""``RiskAnalysisOperator``: the re-identification risk of a release (prosecutor, journalist,
marketer; population uniqueness; SUDA2), every number explained in one sentence.

Its arguments are checked as the step declares them
(:class:`airflow_privacy.gate.steps.risk.RiskStep`), the declaration behind
``airflow-privacy risk``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.gate.steps.risk import DEFAULT_THRESHOLD, RISK
from airflow_privacy.providers.airflow.operators.base import CheckOperator


class RiskAnalysisOperator(CheckOperator):
    """Measure the re-identification risk of a release on its quasi-identifiers, as ARX and
    sdcMicro do (docs/operators/risk_analysis_operator.md). An analysis without a verdict:
    recorded under an attempt, it gives the gate no pass (the gate blocks, naming it), so run
    it without ``attempt`` beside the checks unless it is meant to hold the release back.

    :param release: the release (path/URI)
    :param sql_table: instead of ``release``, a table on the SQL connection ``conn_id``
    :param qis: the quasi-identifier columns (a list)
    :param population: the population table (path/URI), counted on the same ``qis``; it
        must contain the release
    :param population_size: the population's size (sampling fraction = records / size)
    :param sampling_fraction: the share of the population in the release, in (0, 1]
        (at most one of ``population``, ``population_size`` and ``sampling_fraction``)
    :param threshold: a record is at risk when its re-identification probability is above
        it, in (0, 1] (default 0.2, ARX's)
    :param suda: run SUDA2 (default True)
    :param suda_max_size: the largest special unique SUDA2 looks for (default: every QI)
    :param dis_fraction: DIS-SUDA's sampling fraction (default: the sampling fraction when
        known, else 0.01)
    :param records: a table file (.csv/.parquet) for the per-record SUDA scores by row number
    :param conn_id: the connection of a URI or SQL table
    :param entity_column: a column naming the person each row belongs to: the engines count
        people, classed by the multiset of their rows' QI tuples (DLP's ``entity_id``)
    :param weight_column: a column of sample weights (a record stands for ``w >= 1`` people):
        population group sizes are the sums of the weights, the sampling fraction records /
        sum unless given (not with ``population``)
    Also ``attempt``, ``attempt_task_id``, ``check_name``, ``privacy_ledger_conn_id``,
    ``on_unsafe`` (see :class:`CheckOperator`; the analysis gives no verdict, so
    ``on_unsafe`` never applies).

    Returns (XCom) the report envelope (step ``risk``): the measures with their sentences,
    the class-size histogram, SUDA's counts and attribute contributions; never a record's
    score or values.
    """

    #: derived from the step's declaration, plus the attempt
    template_fields: Sequence[str] = (*RISK.template_fields(), "attempt")

    def __init__(
        self,
        *,
        release: str | None = None,
        qis: Sequence[str],
        sql_table: str | None = None,
        population: str | None = None,
        population_size: int | str | None = None,
        sampling_fraction: float | str | None = None,
        threshold: float | str = DEFAULT_THRESHOLD,
        suda: bool = True,
        suda_max_size: int | str | None = None,
        dis_fraction: float | str | None = None,
        records: str | None = None,
        conn_id: str | None = None,
        entity_column: str | None = None,
        weight_column: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.release = release
        self.sql_table = sql_table
        self.qis = qis
        self.population = population
        self.population_size = population_size
        self.sampling_fraction = sampling_fraction
        self.threshold = threshold
        self.suda = suda
        self.suda_max_size = suda_max_size
        self.dis_fraction = dis_fraction
        self.records = records
        self.conn_id = conn_id
        self.entity_column = entity_column
        self.weight_column = weight_column
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it (:mod:`airflow_privacy.gate.steps.risk`;
        :func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, RISK, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.providers.airflow import steps

        return steps.execute(self, RISK, context)
