"""``CheckSafetyOperator(backend=...)``: checked when the DAG is parsed, spoken in the
operator's words, and passed through the gate to the envelope's ``details.backend``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator

BASE: dict[str, Any] = {"release": "r.parquet", "sensitive": "s", "group_columns": ["g"],
                        "criteria": ["k-anonymity:k=2"]}  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"backend": "sql"}, r"^backend must be one of auto, arrow, duckdb, spark, got 'sql'"),
        ({"backend": 3}, r"^backend must be one of auto, arrow, duckdb, spark, got 3"),
        ({"backend": ""}, r"^backend is blank"),
        (
            {"backend": "duckdb", "release": None, "sql_table": "t", "conn_id": "c"},
            r"^backend duckdb does not apply to table:t: a SQL table is counted in its own",
        ),
        (
            {"backend": "arrow", "entity_column": "p"},
            r"^backend arrow does not apply with entity_column",
        ),
        (
            {"backend": "duckdb", "release": None, "spark_table": "db.t"},
            r"^backend duckdb does not apply to spark:db.t: a Spark table is counted by Spark",
        ),
        (
            {"release": "r.parquet", "spark_table": "db.t"},
            r"^give exactly one of release, sql_table and spark_table",
        ),
    ],
)
def test_refused_when_parsed(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        CheckSafetyOperator(task_id="t", **{**BASE, **kwargs})
    assert "--" not in str(info.value)


@pytest.mark.parametrize("backend", ["auto", "arrow", "duckdb", "spark", "{{ params.backend }}"])
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
            check_backend("sql")
        text = str(info.value)
    assert text.startswith("backend must be one of")


def test_spark_table_arguments() -> None:
    """``spark_table`` (check) and ``source_spark_table``/``release_spark_table``
    (anonymize) are checked when the DAG is parsed, in the operator's words."""
    from airflow_privacy.providers.airflow.operators.anonymize import AnonymizeLatticeOperator

    op = CheckSafetyOperator(task_id="t", **{**BASE, "release": None, "spark_table": "db.t"})
    assert "spark_table" in op.template_fields
    with pytest.raises(
        InputError,
        match=r"^spark:db.t is a Spark table: the ledger gates files and SQL tables \(no attempt\)",
    ):
        CheckSafetyOperator(task_id="t", **{**BASE, "release": None, "spark_table": "db.t"},
                            attempt_task_id="open_attempt")  # fmt: skip
    anon: dict[str, Any] = {"qis": ["g"], "sensitive": "s", "criteria": ["k-anonymity:k=2"]}
    AnonymizeLatticeOperator(task_id="a", source_spark_table="db.in",
                             release_spark_table="db.out", manifest="m.json", **anon)  # fmt: skip
    cases = [
        ({"source_spark_table": "db.in", "release": "r.parquet"},
         r"^a Spark table input \(source\) is anonymized by Spark into a Spark table: give "
         "release as one"),
        ({"source": "in.parquet", "release_spark_table": "db.out"},
         r"^the release spark:db.out \(release\) is a Spark table: give manifest"),
        ({"source": "in.parquet", "release": "r.parquet", "release_spark_table": "db.out"},
         "^give exactly one of release, release_table and release_spark_table"),
    ]  # fmt: skip
    for kwargs, message in cases:
        with pytest.raises(InputError, match=message) as info:
            AnonymizeLatticeOperator(task_id="a", **anon, **kwargs)
        assert "--" not in str(info.value)


def test_cli_and_operator_agree_through_the_gate(tmp_path: Path) -> None:
    """``--backend duckdb`` and ``backend="duckdb"`` reach the same service: the same
    envelope, ``details.backend`` included; the Arrow path's differs only there."""
    from tests.gate.parity_support import FakeTI, cli, inside, normal

    rows = ["g,h,s"] + [f"{g},{h},{s}" for g in "ab" for h in ["01", "1"] for s in "xyz"]
    (tmp_path / "release.csv").write_text("\n".join(rows) + "\n")
    argv = ["check", "release.csv", "--sensitive", "s", "--group", "g", "--group", "h",
            "--criterion", "ck-safety:c=0.9,k=1", "--name", "check_safety"]  # fmt: skip
    with inside(tmp_path):
        code, by_cli = cli([*argv, "--backend", "duckdb"])
        _, by_arrow = cli([*argv, "--backend", "arrow"])
        op = CheckSafetyOperator(
            task_id="check_safety", release="release.csv", sensitive="s",
            group_columns=["g", "h"], criteria=["ck-safety:c=0.9,k=1"], backend="duckdb",
        )  # fmt: skip
        by_op = op.execute({"ti": FakeTI()})
    assert code == 0
    assert normal(by_cli) == normal(by_op)
    assert by_op["details"]["backend"] == "duckdb"
    assert by_cli["release"]["groups"] == 4  # "01" and "1" stay apart
    assert by_arrow["details"].pop("backend") == "arrow"
    by_cli["details"].pop("backend")
    assert normal(by_arrow) == normal(by_cli)
