"""``CheckSafetyOperator``: a release against several criteria at once (one count).

An adapter over :func:`airflow_privacy.gate.check.run_check`, the service behind
``airflow-privacy check``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from airflow_privacy.providers.airflow.operators.base import CheckOperator
from airflow_privacy.providers.airflow.params import columns, templated, text


class CheckSafetyOperator(CheckOperator):
    """Check a release against every criterion in ``criteria``; all must pass.

    :param release: path or URI (``s3://...`` through ``conn_id``) of a CSV/Parquet release
        (templated)
    :param sql_table: instead of ``release``, a table on the SQL connection ``conn_id``; the
        per-group counting runs in the database (``GROUP BY``)
    :param conn_id: the connection of a URI or of ``sql_table``
    :param sensitive: the sensitive column
    :param group_columns: the columns that define the QI-groups (a list)
    :param criteria: a list of criteria, each ``{"name": "ck-safety", "c": 0.7, "k": 3}`` or
        ``"ck-safety:c=0.7,k=3"``; names and parameters as ``airflow-privacy check``
    :param missing_as: publish blank sensitive cells as this value (default: blank cells are
        bad input)
    Also ``attempt``, ``attempt_task_id``, ``check_name``, ``privacy_ledger_conn_id``,
    ``on_unsafe`` (see :class:`CheckOperator`).

    Returns (XCom) the report envelope (step ``check``).
    """

    template_fields: Sequence[str] = (
        "release", "sql_table", "conn_id", "sensitive", "group_columns", "criteria",
        "missing_as", "attempt",
    )  # fmt: skip
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
        missing_as: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.release = release
        self.sql_table = sql_table
        self.conn_id = conn_id
        self.sensitive = sensitive
        self.group_columns = group_columns
        self.criteria = criteria
        self.missing_as = missing_as
        self._validate()

    def _validate(self) -> None:
        """Everything not templated, at parse time (a DAG import error names it)."""
        from airflow_privacy.gate.criteria import parse_criteria

        if not templated(self.group_columns):
            columns(self.group_columns, "group_columns")
        if not templated(self.sensitive):
            text(self.sensitive, "sensitive")
        if not templated(self.criteria):
            from airflow_privacy.errors import speaking

            with speaking("airflow"):
                parse_criteria(self.criteria, "criteria")
        if (self.release is None) == (self.sql_table is None):
            from airflow_privacy.errors import InputError

            raise InputError("give exactly one of release and sql_table")

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.check import CheckRequest, run_check
        from airflow_privacy.gate.refs import ReleaseRef

        def service(ctx: Any, attempt: str | None) -> Any:
            ref = (
                ReleaseRef(sql_table=text(self.sql_table, "sql_table"), conn=self.conn_id)
                if self.sql_table is not None
                else ReleaseRef(path=text(self.release, "release"), conn=self.conn_id)
            )
            return run_check(
                CheckRequest(
                    release=ref,
                    sensitive=str(text(self.sensitive, "sensitive")),
                    group_columns=columns(self.group_columns, "group_columns") or [],
                    criteria=self.criteria,
                    name=self.name,
                    attempt=attempt,
                    missing_as=text(self.missing_as, "missing_as", required=False),
                ),
                ctx,
            )

        return self.attempt_service(context, service)
