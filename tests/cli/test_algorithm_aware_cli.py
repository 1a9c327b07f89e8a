"""``airflow-privacy audit-algorithm`` and ``anonymize --disclosure safe``: the paper's
example end to end, JSON and text, bad input (exit 2 naming the culprit), and the skyline
re-check command printed by ``anonymize``."""

from __future__ import annotations

import io
import json
import shlex
from pathlib import Path

import pytest

from airflow_privacy.cli import main

PATIENTS = """name,age,sex,condition
Alan,Old,M,Heart Disease
Bob,Old,M,Viral Infection
Clark,Middle,M,Cancer
Diana,Middle,F,Cancer
Ellen,Young,F,Flu
Fen,Young,F,Ulcer
"""
SEQ = ["--candidate", "age,sex", "--candidate", "age", "--candidate", "sex", "--candidate", "*"]


@pytest.fixture()
def patients(tmp_path: Path) -> Path:
    path = tmp_path / "patients.csv"
    path.write_text(PATIENTS, encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


def base(path: Path) -> list[str]:
    return ["audit-algorithm", str(path), "--qi", "age", "--qi", "sex", "--sensitive",
            "condition", "--id", "name", "--criterion", "entropy-l-diversity:l=2",
            "--quiet"]  # fmt: skip


def test_naive_release_is_flagged(patients: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([*base(patients), *SEQ, "--format", "json"], capsys)
    assert code == 1
    envelope = json.loads(out)
    assert envelope["step"] == "audit-algorithm" and envelope["safe"] is False
    payload = envelope["details"]
    assert payload["released"] == "sex"
    assert payload["disclosure_set_size"] == 4
    # people by row number (Clark and Diana are rows 2 and 3), never by name or value
    assert payload["redacted"] is True
    assert sorted(p["row"] for p in payload["people"] if p["flagged"]) == [2, 3]
    top = {p["row"]: p for p in payload["people"]}
    assert top[2]["top_posterior"] == 1.0
    assert "Clark" not in out and "Cancer" not in out


def test_safe_mode_passes_with_the_lattice_order(
    patients: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([*base(patients), "--mode", "safe", "--format", "json"], capsys)
    assert code == 0
    payload = json.loads(out)["details"]
    assert payload["candidate_source"] == "lattice order (loss)"
    assert payload["candidates"] == ["age,sex", "age", "sex", "*"]
    assert payload["released"] == "*" and payload["predicate_on_set"]["passes"] is True


def test_text_output_and_sampling(patients: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([*base(patients), "--released", "sex", "--exact-limit", "10",
                        "--samples", "2000", "--people", "2"], capsys)  # fmt: skip
    assert code == 1
    assert "UNSAFE" in out and "sampled worlds in the disclosure set" in out
    assert "row 2" in out and " 1.000 [" in out
    assert "Clark" not in out and "Cancer" not in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--qi", "zip"], "column 'zip' does not exist"),
        (["--threshold", "0"], "threshold must be in (0, 1]"),
        (["--threshold", "1.2"], "threshold must be in (0, 1]"),
        (["--released", "age,zip"], "unknown column 'zip'"),
        ([*SEQ[:2], *SEQ[-2:], "--released", "age"], "unknown candidate 'age'"),
        (["--candidate", "age=4"], "level 4 of 'age'"),
        (["--confidence", "1"], "confidence must be in (0, 1)"),
        (["--mode", "safe", "--criterion", "ck-safety:c=0.9,k=1"], "no disclosure-set form"),
        ([*SEQ, "--samples", str(2**63)], "--samples must be a whole number in [1, 10000000]"),
        ([*SEQ, "--exact-limit", "1" + "0" * 100], "--exact-limit must be a whole number in [1,"),
    ],
)
def test_bad_input_exits_2(
    patients: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    argv = base(patients)
    if "--criterion" in extra:  # replace the criterion
        i = argv.index("--criterion")
        argv = argv[:i] + argv[i + 2 :]
    code, out, err = run([*argv, *extra], capsys)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


def test_anonymize_disclosure_safe(
    patients: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rel = tmp_path / "release.csv"
    argv = ["anonymize", str(patients), "--qi", "age", "--qi", "sex", "--sensitive", "condition",
            "--method", "lattice", "--criterion", "entropy-l-diversity:l=2", "--out", str(rel),
            "--quiet", "--format", "json"]  # fmt: skip
    code, out, _ = run([*argv, "--disclosure", "safe"], capsys)
    assert code == 0
    envelope = json.loads(out)
    manifest = json.loads(Path(envelope["outputs"]["manifest"]).read_text())
    assert manifest["details"]["levels"] == {"age": 1, "sex": 1}
    assert manifest["details"]["disclosure"]["naive_rank"] == 3
    method = envelope["details"]["method_details"]
    assert method["levels"] == {"age": 1, "sex": 1} and method["disclosure"]["naive_rank"] == 3
    code, out, _ = run([*argv, "--replace"], capsys)  # the same --out, written over
    envelope = json.loads(out)
    manifest = json.loads(Path(envelope["outputs"]["manifest"]).read_text())
    assert code == 0 and manifest["details"]["levels"] == {"age": 1, "sex": 0}
    assert envelope["details"]["method_details"]["levels"] == {"age": 1, "sex": 0}
    bad = [*argv, "--disclosure", "safe"]
    bad[bad.index("lattice")] = "mondrian"
    code, _, err = run(bad, capsys)
    assert code == 2 and "--disclosure applies to --method lattice only" in err


def test_anonymize_skyline_recheck_uses_point_flags(
    patients: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rel = tmp_path / "release.csv"
    code, out, _ = run(["anonymize", str(patients), "--qi", "age", "--qi", "sex", "--sensitive",
                        "condition", "--method", "lattice", "--criterion", "skyline",
                        "--point", "1,1,1,0.9", "--point", "2,0,0,0.95", "--out", str(rel),
                        "--quiet"], capsys)  # fmt: skip
    assert code == 0
    (line,) = [x for x in out.splitlines() if x.startswith("  re-check: ")]
    recheck = line.removeprefix("  re-check: ")
    assert "--point 1,1,1,0.9 --point 2,0,0,0.95" in recheck and "[(" not in recheck
    argv = shlex.split(recheck)[1:]
    code, _, _ = run([*argv, "--quiet"], capsys)
    assert code == 0
