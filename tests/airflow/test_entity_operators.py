"""``entity_column`` (CheckSafetyOperator, RiskAnalysisOperator) and ``weight_column``
(RiskAnalysisOperator): checked when the DAG is parsed, and a gate error names the
operator's argument (``entity_column``, ``weight_column``), never a flag, a value or an
identifier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowFailException

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.risk import RiskAnalysisOperator
from tests.gate.parity_support import FakeTI

SECRET_ID = "ZZ-PERSON-4711"


def check(**kwargs: Any) -> CheckSafetyOperator:
    args: dict[str, Any] = {"release": "r.csv", "sensitive": "s", "group_columns": ["g"],
                            "criteria": ["k-anonymity:k=2"], **kwargs}  # fmt: skip
    return CheckSafetyOperator(task_id="check", **args)


def risk(**kwargs: Any) -> RiskAnalysisOperator:
    args: dict[str, Any] = {"release": "r.csv", "qis": ["g"], **kwargs}
    return RiskAnalysisOperator(task_id="risk", **args)


@pytest.mark.parametrize(
    ("build", "kwargs", "message"),
    [
        (check, {"entity_column": 3}, r"entity_column"),
        (check, {"entity_column": "g"}, r"^entity_column 'g' is also a group_columns column"),
        (check, {"entity_column": "s"}, r"^entity_column 's' is also a sensitive column"),
        (risk, {"entity_column": "g"}, r"^entity_column 'g' is also a qis column"),
        (risk, {"weight_column": "g"}, r"^weight_column 'g' is also a qis or entity_column column"),
        (risk, {"weight_column": "w", "population": "p.csv"}, r"^give weight_column or pop"),
        (risk, {"entity_column": "pid", "records": "x.csv"}, r"^records lists records"),
    ],
)
def test_bad_arguments_when_the_dag_is_parsed(
    build: Any, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=message) as info:
        build(**kwargs)
    assert "--" not in str(info.value)


def test_templated_columns_wait_for_rendering() -> None:
    op = check(entity_column="{{ params.entity }}")
    assert "entity_column" in op.template_fields
    op2 = risk(entity_column="{{ params.e }}", weight_column="{{ params.w }}")
    assert {"entity_column", "weight_column"} <= set(op2.template_fields)


def test_gate_errors_name_the_operator_argument(tmp_path: Path) -> None:
    rel = tmp_path / "r.csv"
    rel.write_text(f"pid,g,s,w\n{SECRET_ID},a,flu,1\n{SECRET_ID},a,cold,0.5\nq,a,flu,2\n",
                   encoding="utf-8")  # fmt: skip
    op = check(release=str(rel), entity_column="pid", criteria=["distinct-l-diversity:l=2"])
    with pytest.raises(AirflowFailException) as info:
        op.execute({"ti": FakeTI()})
    msg = str(info.value)
    assert "entity_column: 1 of 2 entities" in msg and SECRET_ID not in msg and "cold" not in msg
    op2 = risk(release=str(rel), weight_column="w", suda=False)
    with pytest.raises(AirflowFailException) as info:
        op2.execute({"ti": FakeTI()})
    msg = str(info.value)
    assert "weight_column: the weight of data row 2" in msg and "0.5" not in msg
