"""``--benign VALUE`` on the command line (check, skyline, disclosure): one flag, the same
meaning everywhere; the envelope / JSON records the declared values and notes the absent
ones; a blank value is bad input (exit 2, one line naming ``--benign``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from airflow_privacy.cli import main

ROWS = [("a", "none")] * 5 + [("a", "flu"), ("a", "hiv"), ("a", "cold")]
ROWS += [("b", "none")] * 4 + [("b", "flu"), ("b", "hiv"), ("b", "cold"), ("b", "cold")]


@pytest.fixture
def release(tmp_path: Path) -> Path:
    path = tmp_path / "release.csv"
    path.write_text("g,s\n" + "".join(f"{g},{s}\n" for g, s in ROWS), encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main([*argv, "--quiet"], out)
    return code, out.getvalue(), capsys.readouterr().err


def test_check_with_a_frequent_benign_value(
    release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", str(release), "--sensitive", "s", "--group", "g", "--format", "json"]
    crit = ["--criterion", "ck-safety:c=0.6,k=1", "--criterion", "negation-safety:c=0.6,k=1",
            "--criterion", "skyline:points=1,0,0,0.6"]  # fmt: skip
    code, out, _ = run([*argv, *crit], capsys)
    plain = json.loads(out)
    assert code == 1 and all(not r["safe"] for r in plain["results"])
    code, out, _ = run([*argv, *crit, "--benign", "none"], capsys)
    env = json.loads(out)
    assert code == 0, env["reasons"]
    assert env["details"]["benign"] == ["none"] and "benign_absent" not in env["details"]
    for r in env["results"]:
        assert r["parameters"]["benign"] == ["none"]
        assert r["value"] < plain["results"][env["results"].index(r)]["value"]


def test_skyline_and_disclosure_take_the_flag(
    release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(release), "--sensitive", "s", "--group", "g", "--format", "json"]
    code, out, _ = run(["disclosure", *args, "--k-max", "2", "--benign", "none"], capsys)
    curve = json.loads(out)["details"]
    assert code == 0 and curve["benign"] == ["none"]
    code, out, _ = run(["disclosure", *args, "--k-max", "2"], capsys)
    before = json.loads(out)["details"]
    assert "benign" not in before
    for x, y in zip(curve["curve"], before["curve"], strict=True):
        assert x["implications"] <= y["implications"] and x["negations"] <= y["negations"]
    code, out, _ = run(["skyline", *args, "--c", "0.5", "--benign", "none", "--benign", "x"],
                       capsys)  # fmt: skip
    sky = json.loads(out)["details"]
    assert code == 0 and sky["benign"] == ["none", "x"] and sky["benign_absent"] == ["x"]


@pytest.mark.parametrize("command", ["check", "skyline", "disclosure"])
def test_a_blank_benign_value_is_bad_input(
    release: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    extra = {
        "check": ["--criterion", "ck-safety:c=0.5,k=1"],
        "skyline": ["--c", "0.5"],
        "disclosure": ["--k-max", "1"],
    }[command]
    code, out, err = run(
        [command, str(release), "--sensitive", "s", "--group", "g", *extra, "--benign", " "],
        capsys,
    )
    assert code == 2 and out == ""
    assert "--benign" in err and len(err.strip().splitlines()) == 1


def test_the_report_curve_assumes_the_checks_benign_values(
    release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report recomputes the disclosure curve from the release: with the benign values
    the check assumed (its results' parameters), so it shows what the check judged."""
    from airflow_privacy.core.criteria.worst_case import disclosure_curve
    from airflow_privacy.core.model import Bucketization, ReleaseSpec
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.report import build_release_report

    argv = ["check", str(release), "--sensitive", "s", "--group", "g", "--format", "json",
            "--criterion", "ck-safety:c=0.6,k=1", "--benign", "none"]  # fmt: skip
    code, out, _ = run(argv, capsys)
    assert code == 0
    env = Envelope.from_dict(json.loads(out))
    report = build_release_report(release, sensitive="s", group_columns=["g"], checks=[env])
    assert report.curve is not None
    import pyarrow.csv as pacsv

    b = Bucketization.from_arrow(pacsv.read_csv(release), ReleaseSpec("s", ("g",)))
    want = disclosure_curve(b.with_benign(["none"]), report.curve.k_max)
    plain = disclosure_curve(b, report.curve.k_max)
    got = [p.implications for p in report.curve.points]
    assert got == [p.implications.max_disclosure for p in want]
    assert got != [p.implications.max_disclosure for p in plain]


def _anonymize_argv(tmp_path: Path, *extra: str) -> list[str]:
    rows = ["age,zip,s"]
    for i in range(48):
        s = "none" if i % 4 else ("flu" if i % 8 else "hiv")
        rows.append(f"{20 + i % 12},{1000 + i % 5},{s}")
    src = tmp_path / "input.csv"
    src.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return ["anonymize", str(src), "--qi", "age", "--qi", "zip", "--sensitive", "s",
            "--method", "mondrian", "--out", str(tmp_path / "release.csv"), *extra]  # fmt: skip


def test_anonymize_takes_the_flag_and_its_recheck_command_repeats_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    crit = ["--criterion", "negation-safety:c=0.7,k=1"]
    # none is 75% of the records: without the flag not even one group passes
    code, _, err = run(_anonymize_argv(tmp_path, *crit), capsys)
    assert code == 2 and "no partitioning passes" in err
    code, out, _ = run([*_anonymize_argv(tmp_path, *crit, "--benign", "none")], capsys)
    assert code == 0
    line = next(x for x in out.splitlines() if x.strip().startswith("re-check:"))
    recheck = shlex.split(line.split("re-check:", 1)[1])
    assert recheck[:2] == ["airflow-privacy", "check"] and recheck[-2:] == ["--benign", "none"]
    # the printed command passes; without --benign the same check refuses the release
    assert run(recheck[1:], capsys)[0] == 0
    assert run(recheck[1:-2], capsys)[0] == 1
    manifest = json.loads((tmp_path / "release.csv.manifest.json").read_text(encoding="utf-8"))
    assert manifest["benign"] == ["none"] and manifest["groups"] > 1


def test_anonymize_bad_benign_input_is_exit_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    crit = ["--criterion", "alpha-k-anonymity:alpha=0.5,k=2,sensitive_value=none"]
    code, out, err = run(_anonymize_argv(tmp_path, *crit, "--benign", "none"), capsys)
    assert code == 2 and out == ""
    assert "sensitive_value" in err and "--benign" in err and len(err.strip().splitlines()) == 1
    code, out, err = run(_anonymize_argv(tmp_path, "--criterion", "k-anonymity:k=2",
                                         "--benign", " "), capsys)  # fmt: skip
    assert code == 2 and "--benign" in err
    assert not (tmp_path / "release.csv").exists()
    assert not (tmp_path / "release.csv.manifest.json").exists()
