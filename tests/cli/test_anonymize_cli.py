"""``airflow-privacy anonymize``: releases re-checkable by ``check``, the manifest and the
QIT / ST files, option parsing, and bad input (exit 2, one line naming the culprit, nothing
written)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from airflow_privacy.cli import anonymize as cli_anonymize
from airflow_privacy.cli import main
from airflow_privacy.core.datasets import adult_hierarchy_path, load_adult
from airflow_privacy.core.io import read_release
from airflow_privacy.gate import tables as gate_tables
from airflow_privacy.gate.criteria import parse_spec
from airflow_privacy.gate.envelope import Envelope

QIS = ["age", "sex", "race", "marital-status", "education"]


@pytest.fixture(scope="module")
def adult_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("adult") / "adult.csv"
    pacsv.write_csv(load_adult().slice(0, 4000), path)
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


def hier(*cols: str) -> list[str]:
    return [x for c in cols for x in ("--hierarchy", f"{c}={adult_hierarchy_path(c)}")]


def base(src: Path, out: Path, method: str) -> list[str]:
    qis = [x for q in QIS for x in ("--qi", q)]
    return ["anonymize", str(src), *qis, "--sensitive", "occupation", "--method", method,
            "--out", str(out), "--quiet"]  # fmt: skip


def check(path: Path, groups: list[str], criterion: list[str]) -> list[str]:
    grouping = [x for g in groups for x in ("--group", g)]
    return ["check", str(path), "--sensitive", "occupation", *grouping,
            "--criterion", *criterion, "--quiet"]  # fmt: skip


def test_lattice_release_is_rechecked_by_check(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, manifest = tmp_path / "rel.parquet", tmp_path / "m.json"
    argv = [*base(adult_csv, out, "lattice"), *hier(*QIS), "--criterion", "ck-safety:c=0.7,k=3",
            "--criterion", "k-anonymity:k=5", "--manifest", str(manifest), "--utility",
            "discernibility", "--format", "json"]  # fmt: skip
    code, stdout, err = run(argv, capsys)
    assert code == 0, err
    payload = json.loads(stdout)
    m = json.loads(manifest.read_text())
    # the envelope names the files written and carries the manifest's headline numbers
    assert payload["step"] == "anonymize" and payload["outcome"] == "written"
    assert payload["safe"] is True
    assert payload["outputs"] == {"release": str(out), "manifest": str(manifest)}
    d = payload["details"]
    assert d["method"] == m["method"] and d["criteria"] == m["criteria"]
    assert (d["records_in"], d["records_out"], d["groups"]) == (
        m["records_in"], m["records_out"], m["groups"],
    )  # fmt: skip
    assert d["utility"] == m["utility"]
    assert d["method_details"]["levels"] == m["details"]["levels"]
    assert d["method_details"]["search"] == m["details"]["search"]
    assert [r["criterion"] for r in payload["results"]] == ["ck-safety", "k-anonymity"]
    assert all(r["safe"] is True for r in payload["results"])
    assert m["method"] == "lattice" and m["safe"] is True
    assert m["parameters"]["utility"] == "discernibility"
    assert [c["name"] for c in m["criteria"]] == ["ck-safety", "k-anonymity"]
    assert set(m["details"]["levels"]) == set(QIS)
    assert m["details"]["search"]["nodes_checked"] <= m["details"]["search"]["lattice_size"]
    recheck = cli_anonymize.recheck_command(Envelope.from_dict(payload))
    assert recheck.startswith(f"airflow-privacy check {out} --sensitive occupation")
    assert m["group_columns"] == QIS == d["group_columns"]
    assert run(check(out, QIS, ["ck-safety", "--c", "0.7", "--k", "3"]), capsys)[0] == 0
    assert run(check(out, QIS, ["k-anonymity", "--k", "5"]), capsys)[0] == 0
    # the written release is exactly the in-memory one the manifest describes
    assert read_release(out).num_rows == m["records_out"]


def test_mondrian_release_is_rechecked_by_check(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rel.csv"
    argv = [*base(adult_csv, out, "mondrian"), *hier("education", "marital-status"),
            "--criterion", "entropy-l-diversity", "--l", "2.5"]  # fmt: skip
    code, stdout, err = run(argv, capsys)
    assert code == 0, err
    assert "anonymize (mondrian): release written to" in stdout
    assert "criterion: entropy-l-diversity (l=2.5): SAFE" in stdout
    # without --manifest the manifest is written beside the release
    beside = tmp_path / "rel.csv.manifest.json"
    assert f"manifest: {beside}" in stdout
    assert json.loads(beside.read_text())["method"] == "mondrian"
    rel = read_release(out)
    assert all("-" in a or a.isdigit() for a in rel.column("age").to_pylist())
    assert run(check(out, QIS, ["entropy-l-diversity", "--l", "2.5"]), capsys)[0] == 0


def test_bucketize_writes_both_forms(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, qit, st = tmp_path / "one.csv.gz", tmp_path / "qit.parquet", tmp_path / "st.csv"
    argv = [*base(adult_csv, out, "bucketize"), "--criterion", "ck-safety", "--c", "0.7",
            "--k", "3", "--qit", str(qit), "--st", str(st), "--seed", "7"]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 0, err
    one = read_release(out)
    assert one.column_names == [*QIS, "bucket", "occupation"]
    assert pq.read_table(qit).column_names == [*QIS, "bucket"]
    st_rows = read_release(st).to_pylist()
    assert sum(int(r["count"]) for r in st_rows) == one.num_rows == 4000
    assert run(check(out, ["bucket"], ["ck-safety", "--c", "0.7", "--k", "3"]), capsys)[0] == 0


def test_criteria_file(adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "criteria.yaml"
    spec.write_text("- name: k-anonymity\n  parameters: {k: 4}\n"
                    "- name: negation-safety\n  parameters: {c: 0.8, k: 2}\n")  # fmt: skip
    out = tmp_path / "rel.csv"
    code, stdout, err = run(
        [*base(adult_csv, out, "mondrian"), "--criteria-file", str(spec)], capsys
    )
    assert code == 0, err
    assert "k-anonymity (k=4): SAFE" in stdout and "negation-safety (c=0.8, k=2): SAFE" in stdout


def test_progress_goes_to_stderr(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [a for a in base(adult_csv, tmp_path / "r.csv", "lattice") if a != "--quiet"]
    code, stdout, err = run([*argv, "--criterion", "k-anonymity:k=2", *hier("age")], capsys)
    assert code == 0
    assert "lattice:" in err and "wrote" in err and "lattice:" not in stdout


# ------------------------------------------------------------------------- bad input
def _bad_hierarchy(tmp_path: Path, kind: str) -> Path:
    src = adult_hierarchy_path("education").read_text().splitlines()
    if kind == "missing":
        lines = [line for line in src if not line.startswith("Masters;")]
    elif kind == "two-parents":  # 'Undergraduate' at level 1 under two level-2 labels
        lines = [src[0].replace("Higher education", "Other"), *src[1:]]
    else:  # ragged: one row with a level missing
        lines = [src[0], src[1].rsplit(";", 1)[0], *src[2:]]
    path = tmp_path / f"edu_{kind}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("missing", "value 'Masters' of column 'education' is not in its hierarchy"),
        ("two-parents", "'Undergraduate' at level 1 has two parents at level 2"),
        ("ragged", "edu_ragged.csv, line 2: 3 levels, expected 4"),
    ],
)
@pytest.mark.parametrize("method", ["lattice", "mondrian"])
def test_bad_hierarchies_are_named_and_nothing_is_written(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, message: str,
    method: str,
) -> None:  # fmt: skip
    out, manifest = tmp_path / "rel.csv", tmp_path / "m.json"
    argv = [*base(adult_csv, out, method), "--criterion", "k-anonymity:k=2", "--hierarchy",
            f"education={_bad_hierarchy(tmp_path, kind)}", "--manifest", str(manifest)]  # fmt: skip
    code, stdout, err = run(argv, capsys)
    assert code == 2 and stdout == ""
    assert message in err and err.count("\n") == 1
    assert not out.exists() and not manifest.exists()
    assert list(tmp_path.glob(".*tmp")) == []


@pytest.mark.parametrize("method", ["lattice", "mondrian", "bucketize"])
def test_impossible_criterion_is_named_and_nothing_is_written(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], method: str
) -> None:
    out = tmp_path / "rel.csv"
    argv = [*base(adult_csv, out, method), "--criterion", "distinct-l-diversity:l=20"]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert "passes criterion distinct-l-diversity (l=20)" in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--criterion", "k-anon:k=2"], "unknown criterion 'k-anon'"),
        (["--criterion", "k-anonymity:k"], "expected PARAM=VALUE, got 'k'"),
        (["--criterion", "k-anonymity:k=2", "--criterion", "ck-safety", "--c", "0.5"],
         "apply to a single --criterion given without parameters"),
        (["--criterion", "ck-safety:c=0.5"], "criterion ck-safety needs k"),
        (["--criterion", "k-anonymity:k=2", "--utility", "loss"],
         "--utility applies to --method lattice only"),
        (["--criterion", "k-anonymity:k=2", "--st", "x.csv"],
         "--qit and --st apply to --method bucketize only"),
        (["--criterion", "k-anonymity:k=2", "--hierarchy", "age"], "--hierarchy expects COL=FILE"),
        (["--criterion", "k-anonymity:k=2", "--hierarchy", "age=/no/such.csv"],
         "hierarchy file '/no/such.csv' does not exist"),
        (["--criterion", "k-anonymity:k=2", "--seed", "x"], "--seed must be a whole number"),
        ([], "at least one criterion is required"),
    ],
)  # fmt: skip
def test_bad_options_exit_2(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
    message: str,
) -> None:  # fmt: skip
    out = tmp_path / "rel.csv"
    code, stdout, err = run([*base(adult_csv, out, "mondrian"), *extra], capsys)
    assert code == 2 and stdout == ""
    assert message in err
    assert not out.exists()


def test_lattice_only_options_and_suppression(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, manifest = tmp_path / "rel.csv", tmp_path / "m.json"
    argv = [*base(adult_csv, out, "lattice"), "--criterion", "k-anonymity", "--k", "10",
            "--suppression", "0.02", "--interval", "age=5,10,20",
            "--manifest", str(manifest)]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 0, err
    m = json.loads(manifest.read_text())
    s = m["details"]["suppression"]
    assert s["budget"] == 80 and m["suppressed"] == s["suppressed"] <= 80
    assert m["records_out"] == 4000 - m["suppressed"]
    assert m["details"]["hierarchies"]["age"]["height"] == 5  # value, 5, 10, 20, *
    assert run(check(out, QIS, ["k-anonymity", "--k", "10"]), capsys)[0] == 0


def test_output_paths_are_checked(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*base(adult_csv, adult_csv, "mondrian"), "--criterion", "k-anonymity:k=2"]
    code, _, err = run(argv, capsys)
    assert code == 2 and f"the release (--out) would overwrite the input '{adult_csv}'" in err
    out = tmp_path / "r.txt.json"
    code, _, err = run(
        [*base(adult_csv, out, "mondrian"), "--criterion", "k-anonymity:k=2"], capsys
    )
    assert code == 2 and "'r.txt.json' is a table: name it .csv, .csv.gz or .parquet" in err
    out = tmp_path / "r.xlsx"
    code, _, err = run(
        [*base(adult_csv, out, "mondrian"), "--criterion", "k-anonymity:k=2"], capsys
    )
    assert code == 2 and "cannot tell the format to write" in err and "--input-format" not in err


def test_a_failing_write_leaves_nothing_behind(
    adult_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    real = gate_tables._serialize
    calls: list[str] = []
    out, qit, st = tmp_path / "one.csv", tmp_path / "qit.csv", tmp_path / "st.csv"

    def flaky(content: Any, name: str, sink: Any) -> None:
        calls.append(name)
        if name == qit.name:  # the release and its manifest are written by then
            raise OSError(28, "disk full")
        real(content, name, sink)

    monkeypatch.setattr(gate_tables, "_serialize", flaky)
    argv = [*base(adult_csv, out, "bucketize"), "--criterion", "k-anonymity:k=3",
            "--qit", str(qit), "--st", str(st)]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 2
    assert calls[:2] == [out.name, "one.csv.manifest.json"] and calls[-1] == qit.name
    assert f"cannot write '{qit}': disk full; nothing was written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_parse_criterion() -> None:
    assert parse_spec("ck-safety:c=0.7,k=3") == ("ck-safety", {"c": 0.7, "k": 3})
    assert parse_spec("t-closeness:t=0.2,ordered=false") == (
        "t-closeness",
        {"t": 0.2, "ordered": False},
    )
    assert parse_spec("k-anonymity") == ("k-anonymity", {})
