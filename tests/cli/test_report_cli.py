"""``--report FILE.html`` on check / maxent / audit, and ``airflow-privacy report``: the file
is written atomically, nothing is written on error, exit codes stay those of the command; a
report says "published" only when the ledger's attempt was published."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from airflow_privacy.cli import main
from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.datasets import load_adult
from airflow_privacy.errors import InputError
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.tables import write_outputs
from airflow_privacy.ledger import ReleaseLedger
from tests.policy_setup import record_policy
from tests.report_html_checker import by_id, find, parse

QIS = ["age", "marital-status", "race", "sex"]
SENS = "occupation"


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--quiet"], out)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("report_cli")
    adult = load_adult()
    pq.write_table(adult.slice(0, 1500), d / "input.parquet")
    for name, lo, seed in (("release", 0, 0), ("prior", 700, 1)):
        r = anonymize(adult.slice(lo, 1500), QIS, SENS, "bucketize",
                      [("k-anonymity", {"k": 4})], seed=seed)  # fmt: skip
        pq.write_table(r.release, d / f"{name}.parquet")
        (d / f"{name}.parquet.manifest.json").write_text(json.dumps(r.manifest.to_dict()))
    return {"dir": d, "release": d / "release.parquet", "prior": d / "prior.parquet",
            "input": d / "input.parquet"}  # fmt: skip


def _check(data: dict[str, Path], *extra: str) -> list[str]:
    return ["check", str(data["release"]), "--sensitive", SENS, "--group", "bucket", *extra]


def _maxent(data: dict[str, Path], *extra: str) -> list[str]:
    qis = [a for q in QIS for a in ("--qi", q)]
    return ["maxent", str(data["release"]), "--sensitive", SENS, "--bucket", "bucket", *qis,
            *extra]  # fmt: skip


def _audit(data: dict[str, Path], *extra: str) -> list[str]:
    return ["audit", str(data["release"]), "--population", str(data["input"]), "--prior",
            str(data["prior"]), "--no-ledger", *extra]  # fmt: skip


def _stable(envelope: dict[str, Any]) -> dict[str, Any]:
    """An envelope without what differs between two runs (its time stamp, solver timings)."""
    out = {k: v for k, v in envelope.items() if k != "created_at"}
    solver = out["details"].get("solver")
    if isinstance(solver, dict):
        out["details"] = {**out["details"], "solver": {**solver, "seconds": None}}
    return out


def _sections(html: str) -> dict[str, str]:
    root = parse(html)
    return {s.attrs["id"]: s.all_text() for s in find(root, "section")}


@pytest.mark.parametrize(
    ("command", "safe_args", "unsafe_args"),
    [
        (
            _check,
            ("--criterion", "k-anonymity", "--k", "4"),
            ("--criterion", "k-anonymity", "--k", "1000"),
        ),
        (_maxent, ("--c", "1"), ("--c", "0.3")),
        (_audit, ("--max-pvp", "100"), ()),
    ],
)
def test_report_option_writes_the_report_and_keeps_the_exit_code(
    data: dict[str, Path], tmp_path: Path, command: Any, safe_args: tuple[str, ...],
    unsafe_args: tuple[str, ...],
) -> None:  # fmt: skip
    for args, want in ((safe_args, 0), (unsafe_args, 1)):
        plain, text = _cli(*command(data, *args, "--format", "json"))
        out = tmp_path / f"r{want}.html"
        code, text2 = _cli(*command(data, *args, "--format", "json", "--report", str(out)))
        assert code == plain == want
        first, second = _stable(json.loads(text)), _stable(json.loads(text2))
        assert second == first  # stdout unchanged by --report
        assert first["safe"] is (want == 0)
        html = out.read_text(encoding="utf-8")
        sections = _sections(html)
        verdict = sections["verdict"]
        # the report of one check is a look at its numbers, never a publication decision
        assert "Verdict: CHECKED" in verdict and "PUBLISHED" not in verdict
        assert ("criteria did not pass" in verdict) == (want == 1)
        assert ("every criterion evaluated passed" in verdict) == (want == 0)
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_maxent_report_has_the_heatmap(data: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "m.html"
    code, _ = _cli(*_maxent(data, "--report", str(out)))
    assert code == 0
    root = parse(out.read_text(encoding="utf-8"))
    assert by_id(root, "maxent-heatmap")
    assert "not run" not in by_id(root, "maxent").all_text()


def test_audit_report_has_the_composition(data: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "a.html"
    _cli(*_audit(data, "--report", str(out)))
    root = parse(out.read_text(encoding="utf-8"))
    assert by_id(root, "pvp-chart")
    assert "Worst individuals" in by_id(root, "composition").all_text()


@pytest.mark.parametrize("command", [_check, _maxent, _audit])
def test_bad_report_path_exits_2_before_any_work(
    data: dict[str, Path], tmp_path: Path, command: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no" / "such" / "r.html"
    extra = ("--criterion", "k-anonymity", "--k", "2") if command is _check else ()
    code, out = _cli(*command(data, *extra, "--report", str(missing)))
    assert code == 2 and out == ""
    assert "folder" in capsys.readouterr().err
    assert not missing.parent.exists()
    code, _ = _cli(*command(data, *extra, "--report", str(tmp_path)))
    assert code == 2


def test_nothing_is_written_when_the_command_fails(data: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    args = ["check", str(data["release"]), "--sensitive", "nope", "--group", "bucket",
            "--criterion", "k-anonymity", "--k", "2", "--report", str(out)]  # fmt: skip
    code, _ = _cli(*args)
    assert code == 2
    assert list(tmp_path.iterdir()) == []


def test_write_report_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports are written like every output (gate.tables.write_outputs): an error leaves
    the old file as it was and no temporary file."""
    target = tmp_path / "r.html"
    target.write_text("old")
    ctx = GateContext()

    def broken(fd: int) -> None:
        raise OSError(28, "disk full")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(InputError, match="disk full; nothing was written"):
        write_outputs({ReleaseRef(path=str(target)): "<!DOCTYPE html>new"}, ctx)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]
    monkeypatch.undo()
    write_outputs({ReleaseRef(path=str(target)): "new"}, ctx)
    assert target.read_text() == "new"
    assert oct(target.stat().st_mode & 0o777) == "0o644"


# ------------------------------------------------------------------- the command
def _json_of(data: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    files = {}
    for name, argv in (
        ("ck", _check(data, "--criterion", "k-anonymity", "--k", "4")),
        ("me", _maxent(data)),
        ("au", _audit(data)),
    ):
        _, text = _cli(*argv, "--format", "json")
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(text)
    return files


def test_report_command_writes_every_section(data: dict[str, Path], tmp_path: Path) -> None:
    files = _json_of(data, tmp_path)
    out = tmp_path / "report.html"
    code, text = _cli(
        "report", str(data["release"]), "--out", str(out), "--dataset", "adult",
        "--version", "4", "--format", "json",
        *[a for n, f in files.items() for a in ("--check", f"{n}={f}")],
    )  # fmt: skip
    assert code == 1  # the audit blocks (any perfect breach)
    payload = json.loads(text)
    assert payload["step"] == "report" and payload["outputs"] == {"report": str(out)}
    # checks given as files: a look at the numbers, never a publication decision
    assert payload["details"]["status"] == "checked" and payload["safe"] is None
    # the audit failed; the MaxEnt estimate (no --c) gave no verdict, which never counts as
    # passed
    assert payload["details"]["checks_failed"] == 2
    assert payload["summary"].startswith("CHECKED (not a publication decision): 2 of")
    assert any(r.startswith("composition: ") for r in payload["reasons"])
    assert any(r.startswith("me: under the given knowledge") for r in payload["reasons"])
    sections = _sections(out.read_text(encoding="utf-8"))
    for sid in ("curve", "skyline", "composition", "maxent", "utility"):
        assert "not run" not in sections[sid], sid
    verdict = sections["verdict"]
    assert verdict.index("Every reason given:") < verdict.index("composition: ")
    assert "PUBLISHED" not in verdict
    assert "adult" in sections["release"]


def test_report_of_an_attempt_takes_its_status_from_the_ledger(
    data: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Published only when the gate published the attempt; the report (at its default path
    beside the release) is stored in the ledger with the attempt."""
    files = _json_of(data, tmp_path)
    db = str(tmp_path / "ledger.db")
    release = str(data["release"])
    default = Path(f"{data['release']}.report.html")
    record_policy(f"sqlite:///{db}", "adult")
    try:
        code, text = _cli("attempt", release, "--dataset", "adult", "--require", "ck",
                          "--first-release", "--ledger", db, "--format", "json")  # fmt: skip
        assert code == 0
        attempt = json.loads(text)["attempt"]["uuid"]
        code, _ = _cli(*_check(data, "--criterion", "k-anonymity", "--k", "4", "--attempt",
                               attempt, "--name", "ck", "--ledger", db))  # fmt: skip
        assert code == 0
        # the gate has not decided yet: not published, whatever the checks say
        code, text = _cli("report", release, "--attempt", attempt, "--ledger", db)
        assert code == 1 and text.startswith("NOT PUBLISHED")
        assert "the gate did not decide" in text
        code, _ = _cli("publish", "--attempt", attempt, "--ledger", db)
        assert code == 0
        code, text = _cli("report", release, "--attempt", attempt, "--ledger", db)
        assert code == 0
        assert text.startswith("PUBLISHED") and str(default) in text
        sections = _sections(default.read_text(encoding="utf-8"))
        assert "not run" in sections["composition"] and "not run" in sections["maxent"]
        with ReleaseLedger(db, create=False) as ledger:
            stored = ledger.attempt_report(attempt)
            info = ledger.attempt(attempt).release
        assert stored is not None
        assert stored["verdict"]["status"] == "published"
        assert stored["facts"]["release_id"] == info.id and stored["facts"]["dataset"] == "adult"
        # with an attempt the checks are the ledger's: files do not mix in
        code, _ = _cli("report", release, "--attempt", attempt, "--ledger", db, "--check",
                       str(files["ck"]))  # fmt: skip
        assert code == 2 and "do not mix" in capsys.readouterr().err
    finally:
        default.unlink(missing_ok=True)
    # without an attempt nothing says "published", even when every check given passed
    out = tmp_path / "checked.html"
    code, text = _cli("report", release, "--check", str(files["ck"]), "--out", str(out))
    assert code == 0 and text.startswith("CHECKED (not a publication decision)")
    assert "PUBLISHED" not in _sections(out.read_text(encoding="utf-8"))["verdict"]
    # the status cannot be given by hand any more
    code, _ = _cli("report", release, "--check", str(files["ck"]), "--status", "published")
    assert code == 2 and "unrecognized arguments: --status published" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--check", "missing.json"], "does not exist"),
        (["--check", "{bad}"], "not JSON"),
        (["--check", "old.json"], "is not a report envelope of this version (missing step"),
        (["--check", "lax.json"], "safe must be true, false or null, got 'false'"),
        (["--out", "/no/such/dir/r.html"], "folder"),
        (["--c", "2"], "c must be in"),
        (["--sensitive", "nope"], "nope"),
    ],
)
def test_report_command_bad_input(
    data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], extra: list[str], message: str,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    (tmp_path / "{bad}").write_text("{not json")
    (tmp_path / "old.json").write_text(json.dumps({"criterion": "k-anonymity", "safe": True}))
    lax = {"step": "check", "name": "ck", "outcome": "passed", "safe": "false", "summary": "s"}
    (tmp_path / "lax.json").write_text(json.dumps(lax))
    out = tmp_path / "r.html"
    argv = ["report", str(data["release"])]
    if "--out" not in extra:
        argv += ["--out", str(out)]
    code, _ = _cli(*argv, *extra)
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
