"""``RiskAnalysisOperator``: the re-identification risk of a release (prosecutor, journalist,
marketer; population uniqueness; SUDA2), every number explained in one sentence.

An adapter over :func:`airflow_privacy.gate.risk.run_risk`, the service behind
``airflow-privacy risk``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.providers.airflow.operators.base import CheckOperator
from airflow_privacy.providers.airflow.params import Args

DEFAULT_THRESHOLD = 0.2  # airflow_privacy.gate.risk.DEFAULT_THRESHOLD (ARX's)


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

    template_fields: Sequence[str] = (
        "release", "sql_table", "conn_id", "population", "population_size",
        "sampling_fraction", "threshold",
        "suda_max_size", "dis_fraction", "records", "attempt", "entity_column",
        "weight_column",
    )  # fmt: skip

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
        """Every argument (:meth:`PrivacyOperator.check_arguments`)."""
        from airflow_privacy.errors import InputError

        a = Args(self, parsing)
        out = {
            "release": a.text("release", optional=True),
            "sql_table": a.text("sql_table", optional=True),
            "qis": a.names("qis", unique=True),
            "population": a.text("population", optional=True),
            "population_size": a.whole("population_size", 1, 10**15, optional=True),
            "sampling_fraction": a.number("sampling_fraction", 0, 1, optional=True, open_low=True),
            "threshold": a.number("threshold", 0, 1, open_low=True),
            "suda": a.flag("suda"),
            "suda_max_size": a.whole("suda_max_size", 1, 64, optional=True),
            "dis_fraction": a.number("dis_fraction", 0, 1, optional=True, open_low=True),
            "records": a.text("records", optional=True),
            "conn_id": a.text("conn_id", optional=True),
            "entity_column": a.text("entity_column", optional=True),
            "weight_column": a.text("weight_column", optional=True),
        }
        if (self.release is None) == (self.sql_table is None):
            raise InputError("give release (a path or URI) or sql_table (with conn_id), not both")
        given = [
            k for k in ("population", "population_size", "sampling_fraction")
            if getattr(self, k) is not None
        ]  # fmt: skip
        if len(given) > 1:
            raise InputError(
                "give at most one of population, population_size and sampling_fraction "
                f"(got {', '.join(given)})"
            )
        if self.sql_table is not None and self.conn_id is None:
            raise InputError("sql_table needs conn_id (the database connection)")
        if self.weight_column is not None and self.population is not None:
            raise InputError("give weight_column or population, not both")
        qis = self.qis if isinstance(self.qis, list | tuple) else []
        for arg in ("entity_column", "weight_column"):
            value = getattr(self, arg)
            if isinstance(value, str) and value in qis:
                raise InputError(f"{arg} {value!r} is also one of qis")
        if self.entity_column is not None and self.records is not None:
            raise InputError(
                "records lists records by row number; with entity_column SUDA scores "
                "entities, which have no row number: leave one of them out"
            )
        return out

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.refs import ReleaseRef
        from airflow_privacy.gate.risk import RiskRequest, run_risk

        def service(ctx: Any, attempt: str | None) -> Any:
            a = self.check_arguments(parsing=False)
            conn = a["conn_id"]
            release = (
                ReleaseRef(sql_table=a["sql_table"], conn=conn)
                if a["sql_table"] is not None
                else ReleaseRef(path=a["release"], conn=conn)
            )
            return run_risk(
                RiskRequest(
                    release=release,
                    qis=a["qis"],
                    population=(
                        ReleaseRef(path=a["population"], conn=conn) if a["population"] else None
                    ),
                    population_size=a["population_size"],
                    sampling_fraction=a["sampling_fraction"],
                    threshold=a["threshold"],
                    suda=a["suda"],
                    suda_max_size=a["suda_max_size"],
                    dis_fraction=a["dis_fraction"],
                    records=ReleaseRef(path=a["records"]) if a["records"] else None,
                    name=self.name,
                    attempt=attempt,
                    entity=a["entity_column"],
                    weight=a["weight_column"],
                ),
                ctx,
            )

        return self.attempt_service(context, service)
