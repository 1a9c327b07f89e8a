"""``RiskAnalysisOperator``: arguments checked when the DAG is parsed (in Airflow's words),
templates checked after rendering, the XCom is the envelope the command line prints (same
request, same numbers), and a gate error is bad input naming the operator's argument."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk.exceptions import AirflowFailException

from airflow_privacy.cli import main
from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow import OPERATOR_MODULES, get_provider_info
from airflow_privacy.providers.airflow.operators.risk import RiskAnalysisOperator
from tests.gate.parity_support import FakeTI, normal

QIS = ["age", "sex", "zip"]
ROWS = ["30,M,100", "30,M,100", "30,F,100", "40,F,200", "40,F,200", "50,M,300", "30,F,200"]


@pytest.fixture
def release(tmp_path: Path) -> Path:
    path = tmp_path / "release.csv"
    path.write_text("age,sex,zip\n" + "\n".join(ROWS) + "\n", encoding="utf-8")
    return path


def build(**kwargs: Any) -> RiskAnalysisOperator:
    args: dict[str, Any] = {"release": "r.csv", "qis": QIS, **kwargs}
    return RiskAnalysisOperator(task_id="risk", **args)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"qis": "age"}, r"^qis must be a list"),
        ({"qis": ["age", "age"]}, r"qis"),
        ({"threshold": 0}, r"^threshold must be in \(0, 1\]"),
        ({"threshold": "x"}, r"^threshold must be a number"),
        ({"sampling_fraction": 1.5}, r"^sampling_fraction must be in \(0, 1\]"),
        ({"population_size": 0}, r"^population_size must be a whole number"),
        ({"population_size": 10, "sampling_fraction": 0.5}, r"^give at most one of population"),
        ({"suda": "yes"}, r"^suda must be true or false"),
        ({"suda_max_size": 0}, r"^suda_max_size must be a whole number"),
        ({"dis_fraction": 0}, r"^dis_fraction must be in"),
        ({"release": None}, r"^give exactly one of release and sql_table"),
        ({"release": None, "sql_table": "t"}, r"^sql_table needs conn_id"),
    ],
)
def test_bad_arguments_when_the_dag_is_parsed(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        build(**kwargs)
    assert "--" not in str(info.value)


def test_templates_wait_for_rendering() -> None:
    op = build(threshold="{{ params.t }}", sampling_fraction="{{ params.f }}")
    assert op.threshold == "{{ params.t }}"
    assert "threshold" in op.template_fields and "release" in op.template_fields


def test_registered_with_the_provider() -> None:
    assert "airflow_privacy.providers.airflow.operators.risk" in OPERATOR_MODULES
    modules = get_provider_info()["operators"][0]["python-modules"]
    assert "airflow_privacy.providers.airflow.operators.risk" in modules


def test_xcom_is_the_cli_envelope(release: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(release.parent)
    out = io.StringIO()
    code = main(["risk", "release.csv", *[x for q in QIS for x in ("--qi", q)],
                 "--population-size", "30", "--threshold", "0.3", "--name", "risk",
                 "--format", "json", "--quiet"], out)  # fmt: skip
    assert code == 0
    via_cli = json.loads(out.getvalue())
    op = build(release="release.csv", population_size="30", threshold="0.3")
    via_op = op.execute({"ti": FakeTI()})
    assert normal(via_op) == normal(via_cli)
    assert via_op["step"] == "risk" and via_op["safe"] is None


def test_gate_errors_name_the_operator_argument(release: Path) -> None:
    op = build(release=str(release), population_size=3)
    with pytest.raises(AirflowFailException, match=r"population_size 3 is smaller"):
        op.execute({"ti": FakeTI()})
    op = build(release=str(release), qis=["age", "nope"])
    with pytest.raises(AirflowFailException, match=r"qis column 'nope' does not exist"):
        op.execute({"ti": FakeTI()})
