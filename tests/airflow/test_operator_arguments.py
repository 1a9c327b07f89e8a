"""The operators' promise about their arguments (docs/operators/common.md,
``providers/airflow/params.py``): a non-templated argument of the wrong type, in
command-line syntax or out of range is bad input when the DAG is parsed, naming the
operator's argument; templated ones are checked the same way after rendering; a given
argument that renders blank is bad input, never its default; messages from the gate speak
the operators' argument names."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pendulum
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk import DAG, BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from airflow_privacy.errors import InputError, opt, render
from airflow_privacy.providers.airflow import OPERATOR_MODULES
from airflow_privacy.providers.airflow.operators.anonymize import (
    AnonymizeLatticeOperator,
    BucketizeOperator,
)
from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
from airflow_privacy.providers.airflow.operators.maxent import MaxEntRiskOperator
from airflow_privacy.providers.airflow.params import check_rendered

PACKAGE = Path(__file__).resolve().parents[2] / "airflow_privacy"

CHECK = {"release": "r.parquet", "sensitive": "s", "group_columns": ["g"],
         "criteria": ["k-anonymity:k=2"]}  # fmt: skip
MAXENT = {"release": "r.parquet", "sensitive": "s", "threshold": 0.9}
ANON = {"source": "in.parquet", "release": "r.parquet", "qis": ["age", "zip"],
        "sensitive": "s", "criteria": ["k-anonymity:k=2"]}  # fmt: skip
ATTEMPT = {"release": "r.parquet", "dataset": "adult", "required_checks": ["check"]}
AUDIT = {"candidate": "c.parquet"}
BASES: dict[type[BaseOperator], dict[str, Any]] = {
    CheckSafetyOperator: CHECK,
    MaxEntRiskOperator: MAXENT,
    BucketizeOperator: ANON,
    AnonymizeLatticeOperator: ANON,
    OpenAttemptOperator: ATTEMPT,
    CompositionAuditOperator: AUDIT,
}
# a command-line flag in a message (not a value the user gave, which is quoted)
FLAG = re.compile(r"(?<![\w'\"=-])--[a-z]")


def build(cls: type[BaseOperator], **kwargs: Any) -> Any:
    return cls(task_id="t", **{**BASES[cls], **kwargs})


REFUSED: list[tuple[type[BaseOperator], dict[str, Any], str]] = [
    (CheckSafetyOperator, {"release": 123}, r"^release must be text, got int 123"),
    (CheckSafetyOperator, {"release": "--release=x"}, r"^release='--release=x' looks like"),
    (CheckSafetyOperator, {"check_name": 5}, r"^check_name must be text"),
    (CheckSafetyOperator, {"check_name": ""}, r"^check_name is blank"),
    (CheckSafetyOperator, {"missing_as": 0}, r"^missing_as must be text, got int 0"),
    (CheckSafetyOperator, {"conn_id": 7}, r"^conn_id must be text"),
    (CheckSafetyOperator, {"sensitive": ""}, r"^sensitive is blank"),
    (CheckSafetyOperator, {"group_columns": ["g", 3]}, r"^group_columns: 3 is not a column"),
    (CheckSafetyOperator, {"release": None, "sql_table": "t"}, r"^sql_table needs conn_id"),
    (CheckSafetyOperator, {"attempt": "--attempt"}, r"^attempt='--attempt' looks like"),
    (CheckSafetyOperator, {"attempt_task_id": 1}, r"^attempt_task_id must be text"),
    (MaxEntRiskOperator, {"rule_widths": "12"}, r"^rule_widths must be a non-empty list"),
    (MaxEntRiskOperator, {"rule_widths": [2, 0]}, r"^rule_widths: 0 is not a whole number"),
    (MaxEntRiskOperator, {"rule_widths": []}, r"^rule_widths must be a non-empty list"),
    (MaxEntRiskOperator, {"top_positive": -1}, r"^top_positive must be a whole number in"),
    (MaxEntRiskOperator, {"top_positive": 3}, r"^top_positive/top_negative mine rules from"),
    (MaxEntRiskOperator, {"min_support": "abc"}, r"^min_support must be a whole number"),
    (MaxEntRiskOperator, {"min_support": None}, r"^min_support must have a value"),
    (MaxEntRiskOperator, {"bucket_column": 3}, r"^bucket_column must be text"),
    (MaxEntRiskOperator, {"not_sensitive": "Flu"}, r"^not_sensitive must be a list of values"),
    (MaxEntRiskOperator, {"not_sensitive": ["Flu", 5]}, r"^not_sensitive: 5 is not a value"),
    (MaxEntRiskOperator, {"threshold": "nan"}, r"^threshold must be a number, got nan"),
    (MaxEntRiskOperator, {"threshold": float("inf")}, r"^threshold must be a number"),
    (MaxEntRiskOperator, {"threshold": ""}, r"^threshold is blank"),
    (MaxEntRiskOperator, {"threshold": 0}, r"^threshold must be in \(0, 1\]"),
    (MaxEntRiskOperator, {"qis": ["q", "s"]}, r"^qis must not name the sensitive column"),
    (MaxEntRiskOperator, {"joint": "yes"}, r"^joint must be true or false"),
    (BucketizeOperator, {"intervals": {"age": "5,10"}},
     r"^intervals\['age'\] must be a list of whole-number widths, got the text '5,10' "
     r"\(write intervals=\{'age': \[5, 10\]\}\)"),
    (BucketizeOperator, {"intervals": {"age": [10, 5]}}, r"^intervals\['age'\]: the widths must"),
    (BucketizeOperator, {"intervals": {"age": [5, 1.5]}}, r"^intervals\['age'\]: width 1.5"),
    (BucketizeOperator, {"intervals": {"age": []}}, r"^intervals\['age'\] must be a non-empty"),
    (BucketizeOperator, {"intervals": [5, 10]}, r"^intervals must be a mapping"),
    (BucketizeOperator, {"intervals": {"sex": [5]}}, r"^intervals is given for column 'sex'"),
    (BucketizeOperator, {"masks": {"zip": -1}}, r"^masks\['zip'\] must be a whole number >= 0"),
    (BucketizeOperator, {"masks": {"zip": True}}, r"^masks\['zip'\] must be a whole number"),
    (BucketizeOperator, {"intervals": {"age": [5]}, "masks": {"age": 1}},
     r"^column 'age' has both intervals and masks"),
    (BucketizeOperator, {"hierarchies": {"age": "h.csv"}, "intervals": {"age": [5]}},
     r"^column 'age' has both hierarchies and intervals"),
    (BucketizeOperator, {"hierarchies": {"zip": 3}}, r"^hierarchies\['zip'\] must be a path"),
    (BucketizeOperator, {"seed": -1}, r"^seed must be a whole number in \[0, "),
    (BucketizeOperator, {"seed": None}, r"^seed must have a value"),
    (BucketizeOperator, {"method_options": {"bogus": 1}},
     r"^method_options: 'bogus' is not an option \(options: bucket_column\)"),
    (BucketizeOperator, {"method_options": {"utility": "loss"}},
     r"^method_options: 'utility' applies to method lattice only"),
    (BucketizeOperator, {"method_options": {"bucket_column": 5}},
     r"^method_options\['bucket_column'\] must be text"),
    (BucketizeOperator, {"method_options": "bucket_column=b"},
     r"^method_options must be a mapping"),
    (BucketizeOperator, {"source": None, "source_table": "t"}, r"^source_table needs source_conn"),
    (BucketizeOperator, {"benign_values": "none"}, r"^benign_values must be a list of values"),
    (AnonymizeLatticeOperator, {"benign_values": ["none", " "]},
     r"^benign_values: ' ' is not a value"),
    (AnonymizeLatticeOperator, {"method_options": {"suppression_limit": "nan"}},
     r"^method_options\['suppression_limit'\] must be a number, got nan"),
    (AnonymizeLatticeOperator, {"method_options": {"suppression_limit": "inf"}},
     r"^method_options\['suppression_limit'\] must be a number"),
    (AnonymizeLatticeOperator, {"method_options": {"suppression_limit": 1}},
     r"^method_options\['suppression_limit'\] must be in \[0, 1\)"),
    (AnonymizeLatticeOperator, {"method_options": {"max_lattice_size": 0}},
     r"^method_options\['max_lattice_size'\] must be a whole number in \[1, "),
    (AnonymizeLatticeOperator, {"method_options": {"max_lattice_size": 10**12}},
     r"^method_options\['max_lattice_size'\] must be a whole number in \[1, 10000000\]"),
    (AnonymizeLatticeOperator, {"method_options": {"disclosure_limit": 10**100}},
     r"^method_options\['disclosure_limit'\] must be a whole number in \[1, 10000000\]"),
    (AnonymizeLatticeOperator, {"method_options": {"utility": "best"}},
     r"^method_options\['utility'\] must be one of loss, "),
    (AnonymizeLatticeOperator, {"method_options": {"bucket_column": "b"}},
     r"^method_options: 'bucket_column' applies to method bucketize only"),
    (AnonymizeLatticeOperator, {"method": "mondrian", "method_options": {"utility": "loss"}},
     r"^method_options: 'utility' applies to method lattice only \(method mondrian\)"),
    (OpenAttemptOperator, {"version": 3},
     r"^version must be text \(the ledger stores it as text\), got int 3 \(write version='3'\)"),
    (OpenAttemptOperator, {"version": "--version=3"}, r"^version=.--version=3. looks like"),
    (OpenAttemptOperator, {"required_checks": ["check", "audit", "check"]},
     r"^required_checks names 'check' more than once"),
    (OpenAttemptOperator, {"required_checks": "check"},
     r"^required_checks must be a list of check names, got the text"),
    (OpenAttemptOperator, {"required_checks": [""]}, r"^required_checks: '' is not a check name"),
    (OpenAttemptOperator, {"dataset": "d" * 300}, r"^dataset is longer than 255"),
    (OpenAttemptOperator, {"population": "p.parquet"}, r"^population and id_column go together"),
    (OpenAttemptOperator, {"first_release": "maybe"}, r"^first_release must be true or false"),
    (CompositionAuditOperator, {"candidate": 5}, r"^candidate must be text, got int 5"),
    (CompositionAuditOperator, {"confidence": None}, r"^confidence must have a value"),
    (CompositionAuditOperator, {"confidence": "abc"}, r"^confidence must be a number"),
    (CompositionAuditOperator, {"max_pvp": 101}, r"^max_pvp must be in \[0, 100\]"),
    (CompositionAuditOperator, {"datasets": "adult"},
     r"^datasets must be a list of dataset names, got the text 'adult'"),
    (CompositionAuditOperator, {"datasets": [None]}, r"^datasets: None is not a dataset name"),
    (CompositionAuditOperator, {"prior_files": ["--prior"]},
     r"^prior_files: '--prior' looks like a command-line option, not a path"),
    (CompositionAuditOperator, {"hierarchies": {"age": None}}, r"^hierarchies\['age'\] must be"),
    (CompositionAuditOperator, {"overlap": "known"}, r"^overlap known needs id_column"),
    (CompositionAuditOperator, {"use_ledger": False}, r"^nothing to audit against"),
    (CompositionAuditOperator, {"missing_qi": "ignore"}, r"^missing_qi must be one of"),
    (CompositionAuditOperator, {"top": -1}, r"^top must be a whole number"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("cls", "kwargs", "message"),
    REFUSED,
    ids=[f"{c.__name__}-{'-'.join(k)}-{i}" for i, (c, k, _) in enumerate(REFUSED)],
)
def test_wrong_arguments_are_bad_input_when_the_dag_is_parsed(
    cls: type[BaseOperator], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=message) as info:
        build(cls, **kwargs)
    assert not FLAG.search(str(info.value)), str(info.value)  # the argument, never a flag
    assert not isinstance(info.value, TypeError)


@pytest.mark.parametrize(
    "criteria",
    [
        [{"name": "ck-safty", "c": "{{ params.c }}", "k": 3}],
        ["ck-safty:c={{ params.c }},k=3"],
        [{"name": "ck-safety", "c": "{{ params.c }}", "k": -1}],
        ["ck-safety:c={{ params.c }},k=abc"],
        [{"name": "ck-safety", "c": "{{ params.c }}"}],
        [{"name": "ck-safety", "c": "{{ params.c }}", "k": 3, "t": 0.2}],
        [{"name": "skyline", "points": ["{{ params.point }}", "1,2,x,0.9"]}],
        [{"name": "k-anonymity", "k": "{{ params.k }}"}, "ck-safety:c=2,k=3"],
    ],
)
def test_criteria_with_a_templated_value_still_have_names_and_other_values_checked(
    criteria: list[Any],
) -> None:
    with pytest.raises(InputError, match=r"ck-safty|ck-safety|skyline"):
        build(CheckSafetyOperator, criteria=criteria)
    with pytest.raises(InputError):
        build(BucketizeOperator, criteria=criteria)


@pytest.mark.parametrize(
    "criteria",
    [
        [{"name": "ck-safety", "c": "{{ params.c }}", "k": "{{ params.k }}"}],
        ["ck-safety:c={{ params.c }},k=3", "k-anonymity:k={{ params.k }}"],
        [{"name": "skyline", "points": ["{{ params.point }}", "1,2,2,0.9"]}],
        ["skyline:points={{ params.points }}"],
        ["{{ params.criterion }}"],
        [{"name": "{{ params.name }}", "c": 0.7}],
        "{{ params.criteria }}",
    ],
)
def test_templated_criteria_wait_for_rendering(criteria: Any) -> None:
    build(CheckSafetyOperator, criteria=criteria)


def test_templates_are_not_checked_before_rendering() -> None:
    build(CheckSafetyOperator, release="{{ params.r }}", sensitive="{{ params.s }}",
          group_columns=["{{ params.g }}", "bucket"], missing_as="{{ params.m }}")  # fmt: skip
    build(MaxEntRiskOperator, threshold="{{ params.t }}", top_positive="{{ params.k }}",
          original="{{ params.o }}", min_support="{{ params.m }}")  # fmt: skip
    build(BucketizeOperator, seed="{{ params.seed }}", hierarchies={"age": "{{ params.h }}"})
    build(AnonymizeLatticeOperator, method="{{ params.method }}",
          method_options={"utility": "precision"})  # fmt: skip
    build(OpenAttemptOperator, version="{{ params.version }}", first_release="{{ params.f }}")
    build(CompositionAuditOperator, confidence="{{ params.c }}", overlap="{{ params.o }}",
          datasets="{{ params.datasets }}")  # fmt: skip


# ------------------------------------------------------------------ after rendering
class FakeTI:
    dag_id, run_id, task_id, try_number = "t", "manual__1", "task", 1

    def __init__(self) -> None:
        self.pushed: dict[str, Any] = {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed[key] = value

    def xcom_pull(self, task_ids: str, key: str = "return_value") -> Any:
        return None


def rendered(cls: type[BaseOperator], params: dict[str, Any], native: bool = False,
             **kwargs: Any) -> Any:  # fmt: skip
    with DAG("t", schedule=None, start_date=pendulum.datetime(2026, 1, 1),
             render_template_as_native_obj=native):  # fmt: skip
        op = build(cls, **kwargs)
    op.render_template_fields({"params": params, "ti": FakeTI()})
    return op


@pytest.fixture
def release(tmp_path: Path) -> Path:
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"g": ["a", "a", "b", "b"], "s": ["x", "y", "x", "y"]}), path)
    return path


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("empty", ["", None])
@pytest.mark.parametrize(
    ("cls", "name", "kwargs"),
    [
        (CompositionAuditOperator, "confidence", {}),
        (CompositionAuditOperator, "max_pvp", {}),
        (MaxEntRiskOperator, "threshold", {}),
        (MaxEntRiskOperator, "top_negative", {"original": "o.parquet"}),
        (CheckSafetyOperator, "missing_as", {}),
        (CheckSafetyOperator, "attempt", {}),
        (BucketizeOperator, "seed", {}),
    ],
)
def test_a_templated_argument_that_renders_blank_is_bad_input_not_its_default(
    cls: type[BaseOperator], name: str, kwargs: dict[str, Any], empty: Any, native: bool
) -> None:
    """``confidence="{{ params.c }}"`` rendering empty must not become confidence 1 (the
    weakest setting), nor ``threshold`` no verdict: the task fails as bad input naming it,
    before anything is read."""
    op = rendered(cls, {"x": empty}, native, **{**kwargs, name: "{{ params.x }}"})
    with pytest.raises(AirflowFailException, match=rf"^bad input: {name} .*blank"):
        op.execute({"ti": FakeTI()})


def test_a_version_that_renders_blank_is_the_next_number() -> None:
    """The one documented exception (the sample DAG's ``version`` parameter: empty means
    the dataset's next number)."""
    for native in (False, True):
        op = rendered(OpenAttemptOperator, {"v": None}, native, version="{{ params.v }}")
        check_rendered(op)
        assert op.check_arguments(parsing=False)["version"] is None


def test_rendered_values_get_the_checks_of_parse_time(release: Path) -> None:
    op = rendered(CheckSafetyOperator, {"g": "--group"}, release=str(release),
                  group_columns=["{{ params.g }}"])  # fmt: skip
    with pytest.raises(AirflowFailException, match="bad input: group_columns: '--group' looks"):
        op.execute({"ti": FakeTI()})
    op = rendered(BucketizeOperator, {"seed": -3}, seed="{{ params.seed }}")
    with pytest.raises(AirflowFailException, match=r"bad input: seed must be a whole number"):
        op.execute({"ti": FakeTI()})
    op = rendered(MaxEntRiskOperator, {"t": "nan"}, threshold="{{ params.t }}")
    with pytest.raises(AirflowFailException, match=r"bad input: threshold must be a number"):
        op.execute({"ti": FakeTI()})
    op = rendered(CheckSafetyOperator, {"c": "None"}, release=str(release),
                  criteria=[{"name": "ck-safety", "c": "{{ params.c }}", "k": 1}])  # fmt: skip
    with pytest.raises(AirflowFailException, match=r"bad input: ck-safety: c must be"):
        op.execute({"ti": FakeTI()})
    ok = rendered(CheckSafetyOperator, {"c": "0.9"}, release=str(release),
                  criteria=[{"name": "ck-safety", "c": "{{ params.c }}", "k": 0}])  # fmt: skip
    assert ok.execute({"ti": FakeTI()})["safe"] is True


# ------------------------------------------------------- messages in Airflow's words
def operator_arguments() -> set[str]:
    names: set[str] = set()
    for module in OPERATOR_MODULES:
        for value in vars(importlib.import_module(module)).values():
            if isinstance(value, type) and issubclass(value, BaseOperator):
                for klass in value.__mro__:
                    if klass is BaseOperator or not issubclass(klass, BaseOperator):
                        break
                    if "__init__" in vars(klass):
                        names |= set(inspect.signature(vars(klass)["__init__"]).parameters)
    # the custom check's front end in Airflow is a function a task calls, not an operator
    from airflow_privacy.providers.airflow import record_check

    return names | set(inspect.signature(record_check).parameters)


# parameters of the command line only: no operator passes them, so no operator shows them
# (``input_format`` is named only when the command line is the front end in effect,
# and ``identifiers`` belongs to ``ledger import``, which has no operator)
CLI_ONLY = {
    "check",
    "delimiter",
    "qit",
    "st",
    "input_format",
    "identifiers",
    "exact_limit",
    "samples",
}  # fmt: skip  (audit-algorithm has no operator)
NAMED = re.compile(r"\bopt\(\s*['\"]([A-Za-z0-9_\-]+)['\"]\s*\)")
# gate helpers that name their parameter through opt()
NAMED_BY_HELPER = re.compile(
    r"\b(?:column|columns|parse_criteria|_whole|_qi)\((?:[^()]|\([^()]*\))*?,\s*['\"]([A-Za-z_\-]+)['\"]"
)


def test_every_parameter_a_message_names_is_an_operator_argument_in_airflow() -> None:
    """Each ``opt(name)`` of the layers below the front ends renders, in Airflow, as an
    argument some operator has (``hierarchy`` -> ``hierarchies``, ``conn`` -> ``conn_id``,
    ...), and as a flag on the command line."""
    arguments = operator_arguments()
    found: dict[str, str] = {}
    for path in [*(PACKAGE / "core").rglob("*.py"), *(PACKAGE / "gate").rglob("*.py")]:
        if path.parent.name == "risk":
            # the risk engines' Python API (class_sizes, population_sizes, delta_min, ...):
            # the risk step (gate/risk.py) and the risk criteria (core/criteria/k_map.py,
            # prosecutor_risk.py) check their own parameters, in their front end's words,
            # before calling them, so these names never reach a CLI or Airflow user
            continue
        source = path.read_text(encoding="utf-8")
        for m in NAMED.finditer(source):
            found[m.group(1)] = path.name
        if path.parent.name == "gate":
            for m in NAMED_BY_HELPER.finditer(source):
                found[m.group(1)] = path.name
    assert {"hierarchy", "interval", "conn", "not_sensitive", "bucket"} <= set(found)
    wrong = {
        name: (render(opt(name), "airflow"), where)
        for name, where in found.items()
        if name not in CLI_ONLY and render(opt(name), "airflow") not in arguments
    }
    assert wrong == {}
    for name in found:  # a flag, or a positional's metavar (INPUT)
        spelled = render(opt(name), "cli")
        assert spelled.startswith("--") or spelled.isupper(), (name, spelled)


@pytest.mark.parametrize(
    ("name", "airflow", "cli"),
    [
        ("hierarchy", "hierarchies", "--hierarchy"),
        ("interval", "intervals", "--interval"),
        ("mask", "masks", "--mask"),
        ("conn", "conn_id", "--conn"),
        ("bucket", "bucket_column", "--bucket"),
        ("rule_width", "rule_widths", "--rule-width"),
        ("not_sensitive", "not_sensitive", "--not-sensitive"),
    ],
)
def test_each_front_end_spells_the_parameter(name: str, airflow: str, cli: str) -> None:
    assert render(opt(name), "airflow") == airflow
    assert render(opt(name), "cli") == cli


def test_the_composition_engine_names_bucket_through_opt() -> None:
    from airflow_privacy.core.composition.release import PublishedRelease
    from airflow_privacy.errors import FrontEnd, speaking

    table = pa.table({"q": ["a"], "s": ["x"]})
    spelled: list[tuple[FrontEnd, str]] = [("airflow", "(bucket_column)"), ("cli", "(--bucket)")]
    for front_end, shown in spelled:
        with speaking(front_end), pytest.raises(InputError) as info:
            PublishedRelease.from_arrow(table, ["q"], "s", kind="bucketized", name="r")
        with speaking(front_end):
            assert shown in str(info.value)


def test_a_benign_value_absent_from_the_release_is_noted_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "bucketized.parquet"
    table = pa.table({"q": ["a", "b", "a", "b"], "bucket": [1, 1, 2, 2],
                      "s": ["x", "y", "x", "y"]})  # fmt: skip
    pq.write_table(table, path)
    op = build(MaxEntRiskOperator, release=str(path), not_sensitive=["z"], benign_values=["y"])
    env = op.execute({"ti": FakeTI()})
    assert env["details"]["benign"] == ["y", "z"]
    assert env["details"]["benign_absent"] == ["z"]


# ------------------------------------------------------------------- record_check
def test_record_check_runs_through_the_adapter() -> None:
    """``record_check`` maps outcomes as the operators do (adapter.run): the envelope in
    XCom, a False verdict recorded without failing the task, bad input failing it."""
    from airflow_privacy.providers.airflow import record_check

    ti = FakeTI()
    data = record_check({"ti": ti}, "gx", safe=False, summary="1 failed", attempt_task_id="",
                        reasons=["expectation X failed"])  # fmt: skip
    assert data["safe"] is False and data["name"] == "gx"
    assert ti.pushed["privacy_report"] == data
    with pytest.raises(AirflowFailException, match=r"^bad input: .*true or false"):
        record_check({"ti": FakeTI()}, "gx", safe="yes", summary="", attempt_task_id="")  # type: ignore[arg-type]
    with pytest.raises(AirflowFailException, match=r"^bad input: attempt_task_id 'open' pushed"):
        record_check({"ti": FakeTI()}, "gx", safe=True, summary="", attempt_task_id="open")


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (CheckSafetyOperator, {"check_name": "{{ params.name }}"}),
        (MaxEntRiskOperator, {"qis": ["{{ params.qi }}"]}),
        (MaxEntRiskOperator, {"conn_id": "{{ var.value.conn }}"}),
        (CompositionAuditOperator, {"top": "{{ params.top }}"}),
        (OpenAttemptOperator, {"required_checks": ["{{ params.check }}"]}),
    ],
)
def test_a_template_in_an_argument_that_is_not_templated_is_refused(
    cls: type[BaseOperator], kwargs: dict[str, Any]
) -> None:
    """It would be used as written (a connection named ``{{ var.value.conn }}``)."""
    name = next(iter(kwargs))
    with pytest.raises(InputError, match=rf"^{name} is not templated: .* would be used as"):
        build(cls, **kwargs)
