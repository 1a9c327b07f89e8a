"""CheckSafetyOperator without a database: templates, verdicts, XCom report, data errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pendulum
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk import DAG
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.verdict import REPORT_KEY

FIG3 = [("M", "Flu"), ("M", "Lung Cancer"), ("M", "Mumps"), ("M", "Flu"), ("M", "Lung Cancer"),
        ("F", "Flu"), ("F", "Breast Cancer"), ("F", "Flu"), ("F", "Heart Disease"),
        ("F", "Ovarian Cancer")]  # fmt: skip


class FakeTI:
    def __init__(self) -> None:
        self.pushed: dict[str, Any] = {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value


@pytest.fixture
def release(tmp_path: Path) -> Path:
    path = tmp_path / "fig3.parquet"
    pq.write_table(pa.table({"sex": [s for s, _ in FIG3], "disease": [d for _, d in FIG3]}), path)
    return path


def make(release: Path, **kwargs: Any) -> CheckSafetyOperator:
    with DAG("t", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        return CheckSafetyOperator(
            task_id="check", release=str(release), sensitive="disease", group_columns=["sex"],
            **kwargs,
        )  # fmt: skip


def test_templated_thresholds_are_rendered_and_coerced(release: Path) -> None:
    op = make(
        release, criteria=[{"name": "ck-safety", "c": "{{ params.c }}", "k": "{{ params.k }}"}]
    )
    context: dict[str, Any] = {"params": {"c": 0.9, "k": 1}, "ti": FakeTI()}
    op.render_template_fields(context)  # type: ignore[arg-type]
    assert op.criteria == [{"name": "ck-safety", "c": "0.9", "k": "1"}]
    report = op.execute(context)
    assert report["safe"] is True
    assert report["results"][0]["max_disclosure"] == pytest.approx(2 / 3)
    assert context["ti"].pushed[REPORT_KEY] == report


def test_unsafe_fails_with_the_witness_and_pushes_the_report(release: Path) -> None:
    op = make(release, criteria=[{"name": "ck-safety", "c": 0.6, "k": 1},
                                 {"name": "k-anonymity", "k": 2}])  # fmt: skip
    ti = FakeTI()
    with pytest.raises(AirflowFailException) as info:
        op.execute({"ti": ti})
    message = str(info.value)
    assert "ck-safety" in message and "an adversary who knows that" in message
    assert "k-anonymity" not in message  # it passed
    report = ti.pushed[REPORT_KEY]
    assert report["safe"] is False
    assert [r["safe"] for r in report["results"]] == [False, True]


def test_skip_and_continue(release: Path) -> None:
    crit = [{"name": "k-anonymity", "k": 6}]
    with pytest.raises(AirflowSkipException):
        make(release, criteria=crit, on_unsafe="skip").execute({"ti": FakeTI()})
    report = make(release, criteria=crit, on_unsafe="continue").execute({"ti": FakeTI()})
    assert report["safe"] is False and report["reasons"][0].startswith("k-anonymity:")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"criteria": [{"name": "ck-safety", "c": 2, "k": 1}]}, "--c must be in (0, 1]"),
        ({"criteria": [{"name": "nope"}]}, "unknown criterion 'nope'"),
        ({"criteria": [{"name": "k-anonymity", "k": 2}], "sensitive": "diagnosis"},
         "sensitive column 'diagnosis' does not exist"),
    ],
)  # fmt: skip
def test_bad_input_fails_without_retry(release: Path, kwargs: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {"task_id": "check", "release": str(release), "sensitive": "disease",
                            "group_columns": ["sex"]}  # fmt: skip
    base.update(kwargs)
    with DAG("t2", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        op = CheckSafetyOperator(**base)
    with pytest.raises(AirflowFailException, match="bad input") as info:
        op.execute({"ti": FakeTI()})
    assert message in str(info.value)


def test_constructor_rejects_bad_policy(release: Path) -> None:
    with pytest.raises(ValueError, match="on_unsafe must be one of"):
        make(release, criteria=[{"name": "k-anonymity", "k": 2}], on_unsafe="explode")
