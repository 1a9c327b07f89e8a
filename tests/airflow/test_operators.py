"""The operators without Airflow's database: templated arguments rendered and checked, the
envelope in XCom, verdicts and ``on_unsafe``, bad input that fails without retries and speaks
the operator's argument names, a ledger outage that leaves retries to Airflow, arguments of
the wrong type refused when the DAG is parsed. (The whole lifecycle runs through the
operators in tests/gate/test_parity.py and end to end in test_release_dag.py.)"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pendulum
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk import DAG
from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

from airflow_privacy.core.datasets import load_adult
from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.adapter import REPORT_KEY, LedgerUnavailableError
from airflow_privacy.providers.airflow.operators.anonymize import (
    AnonymizeLatticeOperator,
    BucketizeOperator,
)
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator

FIG3 = [
    ("M", "Flu"),
    ("M", "Lung Cancer"),
    ("M", "Mumps"),
    ("M", "Flu"),
    ("M", "Lung Cancer"),
    ("F", "Flu"),
    ("F", "Breast Cancer"),
    ("F", "Flu"),
    ("F", "Heart Disease"),
    ("F", "Ovarian Cancer"),
]


class FakeTI:
    dag_id, run_id, task_id, try_number = "t", "manual__1", "task", 1

    def __init__(self) -> None:
        self.pushed: dict[str, Any] = {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value

    def xcom_pull(self, task_ids: str, key: str = "return_value") -> Any:
        return None


@pytest.fixture
def release(tmp_path: Path) -> Path:
    path = tmp_path / "fig3.parquet"
    pq.write_table(pa.table({"sex": [s for s, _ in FIG3], "disease": [d for _, d in FIG3]}), path)
    return path


def check(release: Path, **kwargs: Any) -> CheckSafetyOperator:
    with DAG("t", schedule=None, start_date=pendulum.datetime(2026, 1, 1)):
        return CheckSafetyOperator(
            task_id="check",
            release=str(release),
            sensitive="disease",
            group_columns=["sex"],
            **kwargs,
        )


def test_templated_thresholds_are_rendered_and_coerced(release: Path) -> None:
    op = check(
        release, criteria=[{"name": "ck-safety", "c": "{{ params.c }}", "k": "{{ params.k }}"}]
    )
    ti = FakeTI()
    context: dict[str, Any] = {"params": {"c": 0.9, "k": 1}, "ti": ti}
    op.render_template_fields(context)  # type: ignore[arg-type]
    assert op.criteria == [{"name": "ck-safety", "c": "0.9", "k": "1"}]
    env = op.execute(context)
    assert env["step"] == "check" and env["safe"] is True
    assert env["results"][0]["max_disclosure"] == pytest.approx(2 / 3)
    assert ti.pushed[REPORT_KEY] == env


def test_unsafe_fails_with_the_witness_and_pushes_the_envelope(release: Path) -> None:
    op = check(release, criteria=["ck-safety:c=0.6,k=1", {"name": "k-anonymity", "k": 2}])
    ti = FakeTI()
    blocked = r"release blocked by check: ck-safety: .*0\.6667"
    with pytest.raises(AirflowFailException, match=blocked):
        op.execute({"ti": ti})
    env = ti.pushed[REPORT_KEY]
    assert env["safe"] is False and [r["safe"] for r in env["results"]] == [False, True]


def test_skip_and_continue(release: Path) -> None:
    unsafe = ["ck-safety:c=0.6,k=1"]
    with pytest.raises(AirflowSkipException):
        check(release, criteria=unsafe, on_unsafe="skip").execute({"ti": FakeTI()})
    env = check(release, criteria=unsafe, on_unsafe="continue").execute({"ti": FakeTI()})
    assert env["safe"] is False and env["outcome"] == "failed"


def test_bad_input_fails_without_retry_in_the_operators_words(
    release: Path, tmp_path: Path
) -> None:
    with pytest.raises(AirflowFailException, match=r"bad input: .*'diagnosis' does not exist"):
        CheckSafetyOperator(
            task_id="c",
            release=str(release),
            sensitive="diagnosis",
            group_columns=["sex"],
            criteria=["k-anonymity:k=2"],
        ).execute({"ti": FakeTI()})
    blank = tmp_path / "blank.csv"
    blank.write_text("sex,disease\nM,Flu\nF,\n")
    with pytest.raises(AirflowFailException, match="pass missing_as VALUE") as info:
        check(blank, criteria=["k-anonymity:k=1"]).execute({"ti": FakeTI()})
    assert "--" not in str(info.value)  # no command-line flag inside Airflow
    ok = check(blank, criteria=["k-anonymity:k=1"], missing_as="Unknown").execute({"ti": FakeTI()})
    assert ok["safe"] is True


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"group_columns": "sex"}, "group_columns must be a list of column names, got the text"),
        ({"criteria": "ck-safety:c=0.7,k=3"}, "criteria must be a list of criteria"),
        ({"criteria": ["--criterion ck-safety --c 0.7"]}, "looks like command-line options"),
        ({"criteria": [{"name": "ck-safety", "c": "abc", "k": 1}]}, "ck-safety: "),
        ({"criteria": [{"name": "ck-safety", "c": 0.7}]}, "criterion ck-safety needs k"),
        ({"group_columns": ["--group"]}, "looks like a command-line option"),
        ({"on_unsafe": "explode"}, "on_unsafe must be one of fail, skip, continue"),
        ({"attempt": "a", "attempt_task_id": "b"}, "give attempt or attempt_task_id, not both"),
    ],
)
def test_wrong_arguments_are_refused_when_the_dag_is_parsed(
    release: Path, kwargs: dict[str, Any], message: str
) -> None:
    args: dict[str, Any] = {"group_columns": ["sex"], "criteria": ["k-anonymity:k=2"], **kwargs}
    with pytest.raises(InputError, match=message):
        CheckSafetyOperator(task_id="c", release=str(release), sensitive="disease", **args)


def test_other_operators_refuse_wrong_arguments_at_parse_time(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="qis must be a list of column names"):
        BucketizeOperator(
            task_id="b",
            source="in.parquet",
            release="r.parquet",
            qis="age",
            sensitive="s",
            criteria=["k-anonymity:k=2"],
        )
    with pytest.raises(InputError, match="method must be one of lattice, mondrian"):
        AnonymizeLatticeOperator(
            task_id="b",
            source="in.parquet",
            release="r.parquet",
            qis=["age"],
            sensitive="s",
            criteria=["k-anonymity:k=2"],
            method="incognito",
        )
    with pytest.raises(InputError, match="confidence must be in \\(0, 1\\]"):
        CompositionAuditOperator(task_id="a", candidate="c.parquet", confidence=2)
    with pytest.raises(InputError, match="overlap must be one of"):
        CompositionAuditOperator(task_id="a", candidate="c.parquet", overlap="sometimes")
    with pytest.raises(InputError, match="give attempt or attempt_task_id"):
        PublishReleaseOperator(task_id="p", release="r.parquet", publish_to="pub")


def test_a_ledger_outage_is_left_to_retries_and_never_shows_the_password(release: Path) -> None:
    url = "postgresql+psycopg://steward:s3cret-pw@127.0.0.1:1/ledger"
    conn = json.dumps({"conn_type": "privacyledger", "extra": {"url": url}})
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", conn)
        op = check(
            release, criteria=["k-anonymity:k=2"], attempt="6dcdf51e-c8ad-4ea7-874f-a32be297ecc3"
        )
        with pytest.raises(LedgerUnavailableError, match="ledger unavailable") as info:
            op.execute({"ti": FakeTI()})
    assert not isinstance(info.value, AirflowFailException)  # retries apply
    assert "s3cret-pw" not in str(info.value)


def test_bucketize_writes_real_gzip_that_the_reader_reads(tmp_path: Path) -> None:
    source = tmp_path / "in.parquet"
    pq.write_table(load_adult().slice(0, 500).select(["age", "sex", "occupation"]), source)
    out = tmp_path / "release.csv.gz"
    env = BucketizeOperator(
        task_id="anonymize",
        source=str(source),
        release=str(out),
        qis=["age", "sex"],
        sensitive="occupation",
        criteria=["k-anonymity:k=3"],
    ).execute({"ti": FakeTI()})
    assert env["outputs"]["release"] == str(out)
    assert gzip.decompress(out.read_bytes()).startswith(b'"age","sex","bucket","occupation"')
    recheck = CheckSafetyOperator(
        task_id="c",
        release=str(out),
        sensitive="occupation",
        group_columns=["bucket"],
        criteria=["k-anonymity:k=3"],
    ).execute({"ti": FakeTI()})
    assert recheck["safe"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "in.parquet",
        "release.csv.gz",
        "release.csv.gz.manifest.json",
    ]


def test_impossible_criterion_fails_as_bad_input_and_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "in.parquet"
    pq.write_table(load_adult().slice(0, 300).select(["age", "sex", "occupation"]), source)
    op = BucketizeOperator(
        task_id="a",
        source=str(source),
        release=str(tmp_path / "r.parquet"),
        qis=["age", "sex"],
        sensitive="occupation",
        criteria=[{"name": "k-anonymity", "k": 10**6}],
    )
    with pytest.raises(AirflowFailException, match="bad input"):
        op.execute({"ti": FakeTI()})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]


def test_lattice_operator_safe_disclosure_mode(tmp_path: Path) -> None:
    """Zhang et al.'s patients through the operator: method_options reach the anonymizer;
    the safe mode skips table (c), which the naive search publishes."""
    source = tmp_path / "patients.parquet"
    pq.write_table(
        pa.table(
            {
                "age": ["Old", "Old", "Middle", "Middle", "Young", "Young"],
                "sex": ["M", "M", "M", "F", "F", "F"],
                "condition": [
                    "Heart Disease",
                    "Viral Infection",
                    "Cancer",
                    "Cancer",
                    "Flu",
                    "Ulcer",
                ],
            }
        ),
        source,
    )
    levels = {}
    for mode in ("naive", "safe"):
        env = AnonymizeLatticeOperator(
            task_id=f"a_{mode}",
            source=str(source),
            release=str(tmp_path / f"{mode}.parquet"),
            qis=["age", "sex"],
            sensitive="condition",
            criteria=[{"name": "entropy-l-diversity", "l": 2}],
            method_options={"disclosure": mode},
        ).execute({"ti": FakeTI()})
        manifest = json.loads(Path(env["outputs"]["manifest"]).read_text())
        levels[mode] = manifest["details"]["levels"]
    assert levels == {"naive": {"age": 1, "sex": 0}, "safe": {"age": 1, "sex": 1}}
    with pytest.raises(InputError, match=r"method_options\['disclosure'\] must be one of naive"):
        AnonymizeLatticeOperator(  # refused when the DAG is parsed
            task_id="bad",
            source=str(source),
            release=str(tmp_path / "bad.parquet"),
            qis=["age", "sex"],
            sensitive="condition",
            criteria=[{"name": "entropy-l-diversity", "l": 2}],
            method_options={"disclosure": "paranoid"},
        )
    assert not (tmp_path / "bad.parquet").exists()


def test_report_without_an_attempt_says_nothing_was_published(tmp_path: Path) -> None:
    op = ReleaseReportOperator(
        task_id="report", attempt_task_id="open_attempt", release=str(tmp_path / "r.parquet")
    )
    op.as_teardown()  # as intended: it fails (and so fails the run), saying why
    ti = FakeTI()
    with pytest.raises(AirflowFailException, match="not published"):
        op.execute({"ti": ti})
    env = ti.pushed[REPORT_KEY]
    assert env["step"] == "report" and env["outcome"] == "not-published" and env["safe"] is False
