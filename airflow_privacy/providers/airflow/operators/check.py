"""``CheckSafetyOperator``: check a release against several criteria at once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.sources import ReleaseRef, load_bucketization
from airflow_privacy.providers.airflow.verdict import (
    check_on_unsafe,
    coerce,
    enforce,
    fail_on_input_error,
)


class CheckSafetyOperator(BaseOperator):
    """Check a release against every criterion in ``criteria``; all must pass.

    :param release: path or URI (``s3://...`` through ``conn_id``) of a CSV/Parquet release
    :param sql_table: instead of ``release``, a table on the SQL connection ``conn_id``; the
        per-group counting is pushed down to the database (``GROUP BY``)
    :param sensitive: the sensitive column
    :param group_columns: the columns that define the QI-groups
    :param criteria: ``[{"name": "ck-safety", "c": 0.7, "k": 3}, {"name": "k-anonymity",
        "k": 5}, ...]`` with the names and parameters of ``airflow-privacy check``
    :param on_unsafe: ``fail`` (default: ``AirflowFailException`` with the witness, no
        retries), ``skip``, or ``continue`` (report only)

    Returns (XCom) the report: ``{"check", "release", "safe", "results": [...], "reasons"}``.
    """

    template_fields: Sequence[str] = (
        "release",
        "sql_table",
        "conn_id",
        "sensitive",
        "group_columns",
        "criteria",
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"criteria": "json"}
    ui_color = "#e8f4ea"

    def __init__(
        self,
        *,
        sensitive: str,
        group_columns: Sequence[str],
        criteria: Sequence[Mapping[str, Any]],
        release: str | None = None,
        sql_table: str | None = None,
        conn_id: str | None = None,
        on_unsafe: str = "fail",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.release = release
        self.sql_table = sql_table
        self.conn_id = conn_id
        self.sensitive = sensitive
        self.group_columns = list(group_columns)
        self.criteria = [dict(c) for c in criteria]
        self.on_unsafe = check_on_unsafe(on_unsafe)
        if not self.criteria:
            raise ValueError("criteria is empty: name at least one criterion to check")

    def execute(self, context: Any) -> dict[str, Any]:
        try:
            report = run_checks(
                ReleaseRef(self.release, self.conn_id, self.sql_table),
                self.sensitive,
                self.group_columns,
                self.criteria,
            )
        except InputError as exc:
            raise fail_on_input_error(exc) from exc
        for result in report["results"]:
            verdict = "safe" if result["safe"] else "UNSAFE"
            self.log.info("%s: %s (%s)", result["criterion"], verdict, result["reason"])
        return enforce(report, self.on_unsafe, context)


def run_checks(
    ref: ReleaseRef,
    sensitive: str,
    group_columns: Sequence[str],
    criteria: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Validate every criterion first (cheap), then count once and check them all."""
    from airflow_privacy.core.criteria.registry import CRITERIA, validate
    from airflow_privacy.core.model import ReleaseSpec

    parsed: list[tuple[str, dict[str, Any]]] = []
    for item in criteria:
        spec = coerce(dict(item))
        name = spec.pop("name", None)
        if not isinstance(name, str):
            raise InputError(f"criterion {item!r} has no 'name'")
        parsed.append((name, validate(name, spec)))
    release_spec = ReleaseSpec(sensitive=sensitive, group_columns=tuple(group_columns))
    b = load_bucketization(ref, release_spec)
    results = [CRITERIA[name].run(b, params).to_dict() for name, params in parsed]
    from airflow_privacy.serialization import json_safe

    report: dict[str, Any] = json_safe(
        {
            "check": "CheckSafetyOperator",
            "release": {"ref": ref.describe(), "records": b.n_records, "groups": b.n_groups},
            "safe": all(r["safe"] for r in results),
            "results": results,
            "reasons": [f"{r['criterion']}: {r['reason']}" for r in results if not r["safe"]],
        }
    )
    return report
