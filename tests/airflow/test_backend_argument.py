"""``CheckSafetyOperator(backend=...)``: checked when the DAG is parsed, spoken in the
operator's words, and passed through the gate to the envelope's ``details.backend``."""

from __future__ import annotations

from typing import Any

import pytest

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator

BASE: dict[str, Any] = {"release": "r.parquet", "sensitive": "s", "group_columns": ["g"],
                        "criteria": ["k-anonymity:k=2"]}  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"backend": "spark"}, r"^backend must be one of auto, arrow, duckdb, got 'spark'"),
        ({"backend": 3}, r"^backend must be one of auto, arrow, duckdb, got 3"),
        ({"backend": ""}, r"^backend is blank"),
        (
            {"backend": "duckdb", "release": None, "sql_table": "t", "conn_id": "c"},
            r"^backend duckdb does not apply with sql_table",
        ),
        (
            {"backend": "arrow", "entity_column": "p"},
            r"^backend arrow does not apply with entity_column",
        ),
    ],
)
def test_refused_when_parsed(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        CheckSafetyOperator(task_id="t", **{**BASE, **kwargs})
    assert "--" not in str(info.value)


@pytest.mark.parametrize("backend", ["auto", "arrow", "duckdb", "{{ params.backend }}"])
def test_accepted(backend: str) -> None:
    op = CheckSafetyOperator(task_id="t", **{**BASE, "backend": backend})
    assert op.backend == backend
    assert "backend" in op.template_fields


def test_gate_message_in_operator_words() -> None:
    """The gate's own check of the value names the operator's argument under Airflow."""
    from airflow_privacy.core.backends import check_backend
    from airflow_privacy.errors import speaking

    with speaking("airflow"):
        with pytest.raises(InputError) as info:
            check_backend("spark")
        text = str(info.value)
    assert text.startswith("backend must be one of")
