"""``DPReleaseOperator``: noisy counts of declared marginals with differential privacy,
within the dataset's privacy budget kept in the ledger; the release is published through
its attempt like any other (``PublishOperator(attempt_task_id=<this task>)``).

Its arguments are checked as the step declares them
(:class:`airflow_privacy.gate.steps.dp_release.DPReleaseStep`), the declaration behind
``airflow-privacy dp-release``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_privacy.gate.steps.dp_release import DP_RELEASE
from airflow_privacy.providers.airflow.operators.base import LedgerOperator


class DPReleaseOperator(LedgerOperator):
    """Release noisy counts of ``marginals`` of ``source`` as a version of ``dataset``,
    spending ``rho`` (or ``epsilon``) of the dataset's budget.

    :param source: path/URI of the data (CSV or Parquet), counted by DuckDB
    :param sql_table: instead of ``source``, a table (``schema.name``) on the SQL connection
        ``conn_id``, counted in its database (one query; only counts leave it)
    :param dataset: the dataset whose budget the release spends (its policy sets the cap:
        ``DatasetPolicyOperator(dp_rho_cap=...)``)
    :param marginals: the marginals, each its columns joined by commas:
        ``["age", "age,sex", "salary-class"]``
    :param key_files: ``{column: file}``: the public values of each column of a marginal
        (a file whose lines' first field, ``;``-separated as ARX hierarchies, is a value);
        never read from the data
    :param output_file: the file to write the noisy counts to (``.csv`` or ``.parquet``)
    :param sums: also the sum of a numeric column in every cell, each ``"COL=LOW:HIGH"``
        (whole bounds; each value clamped to them and rounded): ``["hours-per-week=0:99"]``
    :param rho: the budget spent in zero-concentrated DP (discrete Gaussian noise)
    :param epsilon: instead of ``rho``, the budget in pure DP (discrete Laplace noise)
    :param entity_column: the column naming a person when a person may have several rows
        (default: every row is a different person)
    :param max_rows_per_person: the most rows of one person counted (default 1; the
        sensitivity of each marginal)
    :param delta: the delta of the report's (epsilon, delta) statement (default 1e-6)
    :param version: the version label (default: the dataset's next number)
    :param conn_id: the connection of a URI ``source``, or of ``sql_table``
    Also ``privacy_ledger_conn_id`` (see :class:`LedgerOperator`).

    Returns (XCom) the report envelope (step ``dp-release``; ``attempt.uuid`` is the attempt
    to publish). A release the budget does not hold, or a dataset whose policy sets no
    budget, fails the task: nothing is drawn, recorded or written, and the gate after it
    has no attempt, so the run is red.
    """

    #: derived from the step's declaration
    template_fields: Sequence[str] = DP_RELEASE.template_fields()
    ui_color = "#f3ecfb"
    blank_means_default = frozenset({"version"})

    def __init__(
        self,
        *,
        dataset: str,
        marginals: Sequence[str],
        key_files: Mapping[str, str],
        output_file: str,
        sums: Sequence[str] | None = None,
        source: str | None = None,
        sql_table: str | None = None,
        rho: float | str | None = None,
        epsilon: float | str | None = None,
        entity_column: str | None = None,
        max_rows_per_person: int = 1,
        delta: float = 1e-6,
        version: str | None = None,
        conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.source = source
        self.sql_table = sql_table
        self.dataset = dataset
        self.marginals = marginals
        self.key_files = key_files
        self.output_file = output_file
        self.sums = sums
        self.rho = rho
        self.epsilon = epsilon
        self.entity_column = entity_column
        self.max_rows_per_person = max_rows_per_person
        self.delta = delta
        self.version = version
        self.conn_id = conn_id
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it
        (:func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, DP_RELEASE, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.providers.airflow import steps

        return steps.execute(self, DP_RELEASE, context)
