"""``CheckSafetyOperator``: a release against several criteria at once (one count).

Its arguments are checked as the step declares them
(:class:`airflow_privacy.gate.steps.check.CheckStep`, the declaration ``airflow-privacy
check`` is derived from too); the signature stays explicit for IDEs, and a test keeps it equal
to the declaration."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from airflow_privacy.gate.steps.check import CHECK
from airflow_privacy.providers.airflow.operators.base import CheckOperator


class CheckSafetyOperator(CheckOperator):
    """Check a release against every criterion in ``criteria``; all must pass.

    :param release: path or URI (``s3://...`` through ``conn_id``) of a CSV/Parquet release
        (templated)
    :param sql_table: instead of ``release``, a table on the SQL connection ``conn_id``; the
        per-group counting runs in the database (``GROUP BY``)
    :param spark_table: instead of ``release``, a table of the Spark catalog
        (``db.name``), counted by Spark (``groupBy``) in the session Spark's own
        configuration gives (docs/spark.md); no ``attempt`` (the ledger gates files and SQL
        tables)
    :param conn_id: the connection of a URI or of ``sql_table`` (``sql_table`` needs it)
    :param sensitive: the sensitive column
    :param group_columns: the columns that define the QI-groups (a list)
    :param criteria: a list of criteria, each ``{"name": "ck-safety", "c": 0.7, "k": 3}`` or
        ``"ck-safety:c=0.7,k=3"``; names and parameters as ``airflow-privacy check``
    :param entity_column: a column naming the person each row belongs to: each person counts
        once, grouped by the multiset of their rows' group tuples (DLP's ``entity_id``);
        criteria that read the sensitive values need one value per person
    :param missing_as: publish blank sensitive cells as this value (default: blank cells are
        bad input)
    :param benign_values: sensitive values whose disclosure is not a breach (a list of text,
        e.g. ``["none"]``): every criterion protects the other values only; a value absent
        from the release is noted in the envelope, not an error
    :param population: path or URI (through ``conn_id``) of a population table, counted on
        the same ``group_columns``: k-map without ``sampling_fraction``/``population_size``
        and delta-presence are decided against it (required by them: checked when the DAG
        is parsed); the envelope records its reference and size, never its rows
    :param backend: where a release file is counted: ``"auto"`` (default: DuckDB from 4 MiB
        of Parquet or ``.csv.gz`` and 64 MiB of CSV, else in process), ``"arrow"`` (in
        process), ``"duckdb"`` (an embedded ``GROUP BY``, out of core) or ``"spark"`` (a
        Parquet file or folder, by Spark); a ``sql_table`` is counted in its database
        (``auto`` only), a ``spark_table`` by Spark. The envelope records it in
        ``details.backend`` (docs/backends.md)
    :param hierarchies: for the way forward only, ``{group column: ARX hierarchy file}``:
        when a criterion fails, the advice includes the fewest further generalization steps
        that pass (re-checked on the merged groups)
    Also ``attempt``, ``attempt_task_id``, ``check_name``, ``privacy_ledger_conn_id``,
    ``on_unsafe`` (see :class:`CheckOperator`).

    Returns (XCom) the report envelope (step ``check``).
    """

    #: derived from the step's declaration, plus the attempt
    template_fields: Sequence[str] = (*CHECK.template_fields(), "attempt")
    template_fields_renderers: ClassVar[dict[str, str]] = {"criteria": "json"}
    ui_color = "#e8f4ea"

    def __init__(
        self,
        *,
        sensitive: str,
        group_columns: Sequence[str],
        criteria: Sequence[Mapping[str, Any] | str],
        release: str | None = None,
        sql_table: str | None = None,
        conn_id: str | None = None,
        entity_column: str | None = None,
        missing_as: str | None = None,
        benign_values: Sequence[str] = (),
        population: str | None = None,
        backend: str = "auto",
        spark_table: str | None = None,
        hierarchies: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.spark_table = spark_table
        self.hierarchies = hierarchies
        self.backend = backend
        self.population = population
        self.benign_values = benign_values
        self.release = release
        self.sql_table = sql_table
        self.conn_id = conn_id
        self.sensitive = sensitive
        self.group_columns = group_columns
        self.criteria = criteria
        self.missing_as = missing_as
        self.entity_column = entity_column
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it (:mod:`airflow_privacy.gate.steps.check`;
        :func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, CHECK, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.providers.airflow import steps

        return steps.execute(self, CHECK, context)


def require_population_for(criteria: Any) -> None:
    """Criteria decided against a population table without ``population``: bad input when
    the DAG is parsed (a templated criteria list waits for the task)."""
    from airflow_privacy.core.criteria.registry import create
    from airflow_privacy.gate.criteria import parse_criteria
    from airflow_privacy.gate.population import require_population
    from airflow_privacy.providers.airflow.params import templated

    if templated(criteria):
        return
    require_population([create(n, p) for n, p in parse_criteria(criteria, "criteria")], None)
