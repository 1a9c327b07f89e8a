"""The ``airflow-privacy`` command: exit codes, JSON contract, text wording, bad input."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_privacy.cli import main

# Figure 3 of Martin et al.: bucket M {Flu 2, Lung Cancer 2, Mumps 1}, bucket F {Flu 2,
# Breast Cancer 1, Heart Disease 1, Ovarian Cancer 1}
FIG3 = [
    ("M", "Flu"), ("M", "Lung Cancer"), ("M", "Mumps"), ("M", "Flu"), ("M", "Lung Cancer"),
    ("F", "Flu"), ("F", "Breast Cancer"), ("F", "Flu"), ("F", "Heart Disease"),
    ("F", "Ovarian Cancer"),
]  # fmt: skip


@pytest.fixture
def fig3_csv(tmp_path: Path) -> Path:
    path = tmp_path / "fig3.csv"
    lines = ["zip,sex,disease"] + [f"1485*,{s},{d}" for s, d in FIG3]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def fig3_parquet(tmp_path: Path) -> Path:
    path = tmp_path / "fig3.parquet"
    table = pa.table({"zip": ["1485*"] * 10, "sex": [s for s, _ in FIG3],
                      "disease": [d for _, d in FIG3]})  # fmt: skip
    pq.write_table(table, path)
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    err = capsys.readouterr().err
    return code, out.getvalue(), err


def base(path: Path) -> list[str]:
    return [str(path), "--sensitive", "disease", "--group", "zip", "--group", "sex", "--quiet"]


def test_ck_safety_json_contract_and_exit_codes(
    fig3_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # k = 1: true maximum disclosure is 2/3 (the paper's 10/19 is not the maximum)
    argv = ["check", *base(fig3_csv), "--criterion", "ck-safety", "--k", "1", "--format", "json"]
    code, out, _ = run([*argv, "--c", "0.7"], capsys)
    data = json.loads(out)
    assert code == 0 and data["safe"] is True
    assert data["step"] == "check" and data["outcome"] == "passed"
    (result,) = data["results"]
    assert result["criterion"] == "ck-safety" and result["safe"] is True
    assert result["max_disclosure"] == pytest.approx(float(Fraction(2, 3)), abs=1e-12)
    witness = result["witness"]
    assert witness["knowledge"] == "implications"
    assert len(witness["atoms"]) <= 1
    assert witness["target"]["group_label"] in ("zip=1485*, sex=M", "zip=1485*, sex=F")
    code, out, _ = run([*argv, "--c", "0.6"], capsys)
    data = json.loads(out)
    assert code == 1 and data["safe"] is False and data["outcome"] == "failed"
    assert data["results"][0]["safe"] is False


def test_several_criteria_in_one_envelope(
    fig3_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The release is counted once and judged by every criterion; it passes only if all do,
    and every failure is a reason."""
    argv = ["check", *base(fig3_csv), "--criterion", "k-anonymity:k=5", "--criterion",
            "ck-safety:c=0.6,k=1", "--criterion", "distinct-l-diversity:l=4",
            "--format", "json"]  # fmt: skip
    code, out, _ = run(argv, capsys)
    data = json.loads(out)
    assert code == 1 and data["safe"] is False and data["outcome"] == "failed"
    assert [(r["criterion"], r["safe"]) for r in data["results"]] == [
        ("k-anonymity", True),
        ("ck-safety", False),
        ("distinct-l-diversity", False),
    ]
    assert [r.split(":")[0] for r in data["reasons"]] == ["ck-safety", "distinct-l-diversity"]
    assert data["release"]["records"] == 10 and data["release"]["groups"] == 2
    assert data["summary"] == (
        "k-anonymity (k=5): SAFE; ck-safety (c=0.6, k=1): UNSAFE; "
        "distinct-l-diversity (l=4): UNSAFE"
    )
    passing = ["check", *base(fig3_csv), "--criterion", "k-anonymity:k=5", "--criterion",
               "ck-safety:c=0.7,k=1", "--format", "json"]  # fmt: skip
    code, out, _ = run(passing, capsys)
    data = json.loads(out)
    assert code == 0 and data["safe"] is True and data["reasons"] == []
    assert [r["safe"] for r in data["results"]] == [True, True]


def test_safe_means_strictly_below_c(fig3_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # k = 0: max disclosure is exactly 2/5; (c,k)-safety needs disclosure < c
    argv = ["check", *base(fig3_csv), "--criterion", "ck-safety", "--k", "0"]
    assert run([*argv, "--c", "0.4"], capsys)[0] == 1
    assert run([*argv, "--c", "0.4000001"], capsys)[0] == 0


def test_text_output_spells_out_the_witness(
    fig3_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", *base(fig3_csv), "--criterion", "ck-safety", "--c", "0.5", "--k", "1"]
    code, out, _ = run(argv, capsys)
    assert code == 1
    assert "UNSAFE" in out
    text = " ".join(out.split())  # the reason is folded over several lines
    assert "an adversary who knows that (1) the target does not have" in text
    assert "with probability 0.6667" in text


def test_parquet_and_csv_agree(
    fig3_csv: Path, fig3_parquet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outs = []
    for path in (fig3_csv, fig3_parquet):
        argv = ["disclosure", *base(path), "--k-max", "3", "--format", "json"]
        code, out, _ = run(argv, capsys)
        assert code == 0
        env = json.loads(out)
        assert env["step"] == "disclosure" and env["safe"] is None  # an exploration: no verdict
        outs.append([(p["k"], p["implications"], p["negations"]) for p in env["details"]["curve"]])
    assert outs[0] == outs[1]
    ks = [k for k, _, _ in outs[0]]
    assert ks == [0, 1, 2, 3]
    # the worked numbers: 2/5 at k = 0, 2/3 at k = 1, 1 at k = 2 (Mumps and Lung Cancer ruled out)
    assert outs[0][0][1] == pytest.approx(0.4, abs=1e-12)
    assert outs[0][1][1] == pytest.approx(2 / 3, abs=1e-12)
    assert outs[0][2][1] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(
    ("criterion", "params", "expected_code"),
    [
        ("k-anonymity", ["--k", "5"], 0),
        ("k-anonymity", ["--k", "6"], 1),
        ("distinct-l-diversity", ["--l", "3"], 0),
        ("distinct-l-diversity", ["--l", "4"], 1),
        ("negation-safety", ["--c", "0.5", "--k", "1"], 1),
        ("negation-safety", ["--c", "0.7", "--k", "1"], 0),
    ],
)
def test_other_criteria_exit_codes(
    fig3_csv: Path,
    capsys: pytest.CaptureFixture[str],
    criterion: str,
    params: list[str],
    expected_code: int,
) -> None:
    code, out, _ = run(["check", *base(fig3_csv), "--criterion", criterion, *params], capsys)
    assert code == expected_code, out


BAD_INPUTS = [
    (
        ["--criterion", "ck-safety", "--c", "0.5", "--k", "-1"],
        "ck-safety: k must be a whole number >= 0",
    ),
    (["--criterion", "ck-safety", "--c", "0", "--k", "1"], "ck-safety: c must be in (0, 1]"),
    (["--criterion", "ck-safety", "--c", "1.5", "--k", "1"], "ck-safety: c must be in (0, 1]"),
    (["--criterion", "ck-safety", "--c", "abc", "--k", "1"], "--c must be a number, got 'abc'"),
    (["--criterion", "ck-safety", "--c", "0.5", "--k", "two"], "--k must be a whole number"),
    (["--criterion", "ck-safety", "--c", "0.5"], "criterion ck-safety needs k"),
    (["--criterion", "k-anonymity", "--k", "2", "--t", "0.1"], "t does not apply to criterion"),
    (["--criterion", "no-such"], "unknown criterion 'no-such'"),
]


@pytest.mark.parametrize(("extra", "message"), BAD_INPUTS)
def test_bad_parameters_one_line_exit_2(
    fig3_csv: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, out, err = run(["check", *base(fig3_csv), *extra], capsys)
    assert code == 2
    assert out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1, err


def test_missing_group_column(fig3_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", str(fig3_csv), "--sensitive", "disease", "--group", "age",
            "--criterion", "k-anonymity", "--k", "2"]  # fmt: skip
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert "group column 'age' does not exist" in err
    assert len(err.strip().splitlines()) == 1


def test_missing_sensitive_column(fig3_parquet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", str(fig3_parquet), "--sensitive", "diagnosis", "--group", "sex",
            "--criterion", "k-anonymity", "--k", "2"]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 2
    assert "sensitive column 'diagnosis' does not exist" in err


def test_empty_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("zip,sex,disease\n", encoding="utf-8")
    code, _, err = run(["check", *base(path), "--criterion", "k-anonymity", "--k", "2"], capsys)
    assert code == 2
    assert "empty" in err and len(err.strip().splitlines()) == 1


def test_missing_file_and_unknown_extension(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["check", *base(tmp_path / "nope.csv"), "--criterion", "k-anonymity",
                        "--k", "2"], capsys)  # fmt: skip
    assert code == 2 and "does not exist" in err
    odd = tmp_path / "release.xlsx"
    odd.write_text("x", encoding="utf-8")
    code, _, err = run(["check", *base(odd), "--criterion", "k-anonymity", "--k", "2"], capsys)
    assert code == 2 and "cannot tell the format" in err


def test_missing_values_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "holes.parquet"
    pq.write_table(pa.table({"zip": ["1", "1", None], "sex": ["M"] * 3,
                             "disease": ["a", "b", "c"]}), path)  # fmt: skip
    code, _, err = run(["check", *base(path), "--criterion", "k-anonymity", "--k", "2"], capsys)
    assert code == 2 and "column 'zip' has 1 missing value" in err


def test_bad_k_max(fig3_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["disclosure", *base(fig3_csv), "--k-max", "-2"], capsys)
    assert code == 2 and "--k-max must be a whole number in [0, 10000], got -2" in err


def test_bad_input_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    run(["check", *base(tmp_path / "missing.parquet"), "--criterion", "k-anonymity",
         "--k", "2"], capsys)  # fmt: skip
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_console_script_end_to_end(fig3_csv: Path) -> None:
    exe = Path(sys.executable).with_name("airflow-privacy")
    assert exe.exists(), "the console script is installed with the package"
    ok = subprocess.run(
        [str(exe), "check", *base(fig3_csv), "--criterion", "ck-safety", "--c", "0.9", "--k", "1",
         "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    envelope = json.loads(ok.stdout)
    assert envelope["safe"] is True and envelope["results"][0]["safe"] is True
    bad = subprocess.run(
        [str(exe), "check", *base(fig3_csv), "--criterion", "ck-safety", "--c", "2", "--k", "1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "airflow-privacy: error: ck-safety: c must be in (0, 1], got 2"
    ]


def test_progress_goes_to_stderr(fig3_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", str(fig3_csv), "--sensitive", "disease", "--group", "sex",
            "--criterion", "k-anonymity", "--k", "2", "--format", "json"]  # fmt: skip
    code, out, err = run(argv, capsys)
    assert code == 0
    json.loads(out)  # stdout stays pure JSON
    assert "10 records in 2 groups" in err


def test_demo_writes_releases_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["demo", "--out", str(tmp_path / "demo"), "--quiet"], capsys)
    assert code == 0
    assert (tmp_path / "demo" / "adult_age20.parquet").exists()
    assert "ck-safety (c=0.7, k=3): SAFE" in out
    # the finer release passes the classic criteria but (c,k)-safety blocks it
    last = out.strip().splitlines()[-2]
    assert last.split() == ["adult_age10_sex.parquet", "pass", "pass", "BLOCK"]


def test_json_is_strict_even_for_infinite_values(
    fig3_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # recursive (c,l) with l larger than any group's distinct count: the ratio is infinite
    argv = ["check", *base(fig3_csv), "--criterion", "recursive-cl-diversity", "--c", "2",
            "--l", "6", "--format", "json"]  # fmt: skip
    code, out, _ = run(argv, capsys)
    assert code == 1
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert data["safe"] is False
    assert data["results"][0]["value"] == "inf"


def test_internal_error_is_exit_3_not_a_verdict(
    fig3_csv: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug must not read as "unsafe" (exit 1) to a pipeline gating on the exit code; its
    one line names the exception's type and place, never its message (which can quote a
    cell value); AIRFLOW_PRIVACY_DEBUG=1 adds the traceback."""
    import airflow_privacy.cli.check as check_cli

    def boom(*_args: object) -> int:
        raise OverflowError("cannot convert 'ZZ-SECRET-CELL' to float")

    monkeypatch.setattr(check_cli, "run", boom)
    argv = ["check", str(fig3_csv), "--sensitive", "disease", "--group", "zip",
            "--criterion", "k-anonymity", "--k", "2"]  # fmt: skip
    monkeypatch.delenv("AIRFLOW_PRIVACY_DEBUG", raising=False)
    code = main(argv, io.StringIO())
    err = capsys.readouterr().err
    assert code == 3
    assert "Traceback" not in err and "ZZ-SECRET-CELL" not in err
    place = (
        rf"OverflowError at test_cli\.py:{boom.__code__.co_firstlineno + 1} "
        r"\(called from airflow_privacy/cli/__init__\.py:\d+\)"
    )
    (only,) = err.strip().splitlines()
    assert re.fullmatch(
        r"airflow-privacy: internal error \(a bug, not a verdict\): "
        + place
        + r" \(set AIRFLOW_PRIVACY_DEBUG=1 for the traceback\)",
        only,
    )
    monkeypatch.setenv("AIRFLOW_PRIVACY_DEBUG", "1")
    code = main(argv, io.StringIO())
    err = capsys.readouterr().err
    assert code == 3
    assert "Traceback" in err and "ZZ-SECRET-CELL" in err  # the developer asked for it
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(r"airflow-privacy: internal error \(a bug, not a verdict\): " + place, last)
