"""Options every command shares, and that each command either honours or does not offer:
``--input-format``/``--delimiter`` reach every reader (the report's too), ``--conn`` exists
only where a SQL table can be read, repeated ``COL=FILE`` options are refused alike, output
names must say what is written, and text from the data never drives the terminal."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from airflow_privacy.cli import build_parser, main

ROWS = [("1", "AIDS"), ("1", "Flu"), ("1", "Flu"), ("2", "Flu"), ("2", "Cancer"), ("2", "AIDS")]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


@pytest.fixture
def semicolons(tmp_path: Path) -> Path:
    """A ';'-separated release under a name that says no format."""
    path = tmp_path / "release.dat"
    path.write_text("g;s\n" + "".join(f"{g};{s}\n" for g, s in ROWS), encoding="utf-8")
    return path


# ----------------------------------------------------------- --input-format, --delimiter
def test_report_reads_with_input_format_and_delimiter(
    semicolons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    argv = ["report", str(semicolons), "--sensitive", "s", "--group", "g", "--out", str(out),
            "--quiet", "--format", "json"]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 2 and "cannot tell the format" in err and not out.exists()
    code, text, err = run([*argv, "--input-format", "csv", "--delimiter", ";"], capsys)
    assert code == 0, err  # written; no check given, none failed
    env = json.loads(text)
    assert env["release"]["records"] == 6 and env["release"]["groups"] == 2
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_check_report_reads_the_release_as_the_check_did(
    semicolons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    argv = ["check", str(semicolons), "--sensitive", "s", "--group", "g", "--criterion",
            "k-anonymity:k=3", "--input-format", "csv", "--delimiter", ";", "--report",
            str(out), "--quiet"]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert "k-anonymity" in out.read_text(encoding="utf-8")


# ------------------------------------------------------------------------------- --conn
def _options(*command: str) -> set[str]:
    """The option strings of a (sub)command's parser."""
    parser: argparse.ArgumentParser = build_parser()
    for name in command:
        (subs,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = subs.choices[name]
    return {o for a in parser._actions for o in a.option_strings}


@pytest.mark.parametrize(
    ("command", "has_conn"),
    [
        (("check",), True),
        (("disclosure",), True),
        (("skyline",), True),
        (("maxent",), True),
        (("anonymize",), True),
        (("attempt",), True),
        (("audit",), True),
        (("report",), True),
        (("ledger", "import"), False),
        (("audit-algorithm",), False),
    ],
)
def test_conn_only_where_a_table_can_be_read(command: tuple[str, ...], has_conn: bool) -> None:
    options = _options(*command)
    assert ("--conn" in options) is has_conn
    assert {"--input-format", "--delimiter"} <= options


@pytest.mark.parametrize(
    "argv",
    [
        ["ledger", "import", "table:x", "--dataset", "d"],
    ],
)
def test_a_table_where_only_files_are_read_is_refused_as_such(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([*argv, "--ledger", str(tmp_path / "l.db"), "--quiet"], capsys)
    assert code == 2 and out == ""
    assert "names a SQL table, which this step does not read" in err
    assert "--conn" not in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["attempt", "table:x", "--dataset", "d", "--require", "check"],
        ["report", "table:x", "--sensitive", "s", "--group", "g", "--out", "r.html"],
        ["audit", "table:x", "--no-ledger", "--first-release"],
    ],
)
def test_a_table_without_its_connection_names_conn(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([*argv, "--ledger", str(tmp_path / "l.db"), "--quiet"], capsys)
    assert code == 2 and out == ""
    assert "table 'x' needs a connection (--conn)" in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_the_report_of_a_table_counts_it_in_the_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    import sqlite3

    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE r (g TEXT, s TEXT)")
        con.executemany("INSERT INTO r VALUES (?, ?)", ROWS)
    argv = ["check", "table:r", "--conn", f"sqlite:///{db}", "--sensitive", "s", "--group",
            "g", "--criterion", "k-anonymity:k=2", "--quiet"]  # fmt: skip
    assert run(argv, capsys)[0] == 0  # the table itself is checked in the database
    code, _, err = run([*argv, "--report", str(tmp_path / "r.html")], capsys)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "t.db"]


# ------------------------------------------------------------------- shared parsers
def test_anonymize_names_the_point_flag_as_it_is_spelled(
    semicolons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["anonymize", str(semicolons), "--input-format", "csv", "--qi", "g",
            "--sensitive", "s", "--method", "mondrian", "--criterion", "k-anonymity:k=2",
            "--point", "0,0,0,0.9", "--out", str(tmp_path / "o.csv"), "--quiet"]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 2
    assert "--point apply to a single --criterion given without parameters" in err
    assert "--points" not in err


@pytest.mark.parametrize("command", ["anonymize", "audit"])
def test_a_column_given_twice_a_hierarchy_is_refused(
    command: str, semicolons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h = tmp_path / "h.csv"
    h.write_text("1;*\n2;*\n", encoding="utf-8")
    twice = ["--hierarchy", f"g={h}", "--hierarchy", f" g ={h}"]
    if command == "anonymize":
        argv = ["anonymize", str(semicolons), "--input-format", "csv", "--qi", "g",
                "--sensitive", "s", "--method", "lattice", "--criterion", "k-anonymity:k=2",
                "--out", str(tmp_path / "o.csv"), *twice]  # fmt: skip
    else:
        argv = ["audit", str(semicolons), "--input-format", "csv", "--qi", "g",
                "--sensitive", "s", "--kind", "generalized", "--no-ledger",
                "--first-release", *twice]  # fmt: skip
    code, _, err = run([*argv, "--quiet"], capsys)
    assert code == 2
    assert "--hierarchy is given twice for column 'g'" in err
    code, _, err = run([*argv[: -len(twice)], "--hierarchy", "g", "--quiet"], capsys)
    assert code == 2 and "--hierarchy expects COL=FILE, got 'g'" in err


# ------------------------------------------------------------------------ output names
def test_a_table_output_named_html_is_refused_and_nothing_written(
    semicolons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    argv = ["anonymize", str(semicolons), "--input-format", "csv", "--qi", "g",
            "--sensitive", "s", "--method", "mondrian", "--criterion", "k-anonymity:k=2",
            "--out", str(out), "--quiet"]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 2 and "'r.html' is a table: name it .csv, .csv.gz or .parquet" in err
    assert "--input-format" not in err  # no reading advice for an output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release.dat"]


def test_a_report_not_named_html_is_refused_before_any_work(
    semicolons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", str(tmp_path / "missing.csv"), "--sensitive", "s", "--group", "g",
            "--criterion", "k-anonymity:k=2", "--report", str(tmp_path / "r.json")]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 2  # the report's name is checked before the release is looked at
    assert "the report (--report) 'r.json' is written as HTML: its name must end in .html" in err


# ------------------------------------------------------------------- report --check
def test_report_check_name_splits_at_the_first_equals_sign(
    semicolons: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--sensitive", "s", "--group", "g", "--input-format", "csv", "--delimiter", ";"]
    folder = tmp_path / "run=1"
    folder.mkdir()
    ck = folder / "ck.json"
    code, text, _ = run(["check", str(semicolons), *common, "--criterion", "k-anonymity:k=3",
                         "--format", "json", "--quiet"], capsys)  # fmt: skip
    assert code == 0
    ck.write_text(text, encoding="utf-8")
    out = tmp_path / "r.html"
    base = ["report", str(semicolons), *common, "--out", str(out), "--quiet", "--format", "json"]
    code, text, err = run([*base, "--check", f"mine={ck}"], capsys)  # the file holds a '='
    assert code == 0, err
    assert "mine" in out.read_text(encoding="utf-8")
    code, _, err = run([*base, "--check", str(ck)], capsys)  # no NAME: read as NAME=FILE
    assert code == 2 and "does not exist" in err
    code, _, err = run([*base, "--check", f"={ck}"], capsys)  # empty NAME: its own
    assert code == 0, err
    code, _, err = run([*base, "--check", "mine="], capsys)
    assert code == 2 and "--check expects [NAME=]FILE (NAME before the first '=')" in err


# ------------------------------------------------------------------ terminal safety
@pytest.mark.parametrize(
    "argv",
    [
        ["skyline", "--c", "0.9", "--max-l", "1", "--max-k", "1", "--max-m", "1"],
        ["disclosure", "--k-max", "1"],
    ],
)
def test_labels_from_the_data_do_not_drive_the_terminal(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "evil.csv"
    rows = [("\x1b[2Jx", "\x1b]0;pwned\x07a"), ("\x1b[2Jx", "b"), ("y", "a"), ("y", "b")]
    path.write_text("g,s\n" + "".join(f"{g},{s}\n" for g, s in rows), encoding="utf-8")
    code, out, _ = run([argv[0], str(path), "--sensitive", "s", "--group", "g", *argv[1:],
                        "--quiet"], capsys)  # fmt: skip
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b" in out


def test_audit_algorithm_text_is_cleaned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "people.csv"
    rows = [("\x1b[31mAnn", "1", "Flu"), ("Bob", "1", "Cold"), ("Cy", "2", "Flu"),
            ("Di", "2", "Cold")]  # fmt: skip
    path.write_text("name,zip,disease\n" + "".join(",".join(r) + "\n" for r in rows))
    code, out, err = run(["audit-algorithm", str(path), "--qi", "zip", "--sensitive",
                          "disease", "--id", "name", "--criterion", "k-anonymity:k=2",
                          "--quiet"], capsys)  # fmt: skip
    assert code in (0, 1), err
    assert "\x1b" not in out


def test_disclosure_k_max_bound_is_checked_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["disclosure", str(tmp_path / "missing.csv"), "--sensitive", "s",
                        "--group", "g", "--k-max", "100001"], capsys)  # fmt: skip
    assert code == 2
    assert err.strip() == (
        "airflow-privacy: error: --k-max must be a whole number in [0, 10000], got 100001"
    )


def test_ledger_show_json_has_the_documented_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from airflow_privacy.ledger import ReleaseLedger
    from tests.ledger_worker import make_release

    url = f"sqlite:///{tmp_path / 'l.db'}"
    with ReleaseLedger(url) as db:
        attempt = db.open_attempt("d", make_release(1, 3), required=["c"], first_release=True)
        db.block(attempt.uuid, ["a reason"], by="steward")
    code, text, _ = run(["ledger", "show", "1", "--ledger", url, "--format", "json"], capsys)
    assert code == 0
    payload = json.loads(text)
    assert {"created_at", "updated_at", "published_at", "reasons"} <= set(payload)
    (a,) = payload["attempts"]
    assert {"created_at", "updated_at", "decided_at", "checks", "reasons"} <= set(a)
    code, text, _ = run(["ledger", "list", "--ledger", url, "--format", "json"], capsys)
    assert "updated_at" in json.loads(text)["releases"][0]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["policy", "set", "--dataset", "d\udcff", "--require", "check", "--by", "a",
          "--reason", "r"], "--dataset"),
        (["policy", "set", "--dataset", "d", "--require", "check", "--by", "a\udcff",
          "--reason", "r"], "--by"),
        (["policy", "set", "--dataset", "d", "--require", "check", "--by", "a",
          "--reason", "r\udcff"], "--reason"),
        (["ledger", "list", "--dataset", "d\udcff"], "--dataset"),
        (["check", "r\udcff.csv", "--sensitive", "s", "--group", "g",
          "--criterion", "k-anonymity:k=2"], "RELEASE"),
    ],
)  # fmt: skip
def test_text_that_is_not_utf8_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], named: str
) -> None:
    """A byte that is not UTF-8 in an argument (kept by Python as a lone surrogate, which no
    database or JSON document takes) is refused naming the argument, before any work: no
    ledger is created."""
    from airflow_privacy.cli import main

    ledger = tmp_path / "l.db"
    extra = ["--ledger", f"sqlite:///{ledger}"] if argv[0] in ("policy", "ledger") else []
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err
    assert f"{named} holds bytes that are not UTF-8" in err
    assert not ledger.exists()


def test_airflow_home_that_is_a_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``$AIRFLOW_HOME`` naming a file (the ledger's default folder): exit 2 naming it, not a
    crash; nothing written beside it."""
    home = tmp_path / "home"
    home.write_text("not a folder")
    monkeypatch.setenv("AIRFLOW_HOME", str(home))
    argv = ["policy", "set", "--dataset", "d", "--require", "check", "--by", "a", "--reason", "r"]
    assert main(argv) == 2
    assert "($AIRFLOW_HOME) is a file, not a folder" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]


def _open_attempt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, Path, str]:
    """A checked attempt of a four-row release under a policy: (ledger URL, file, uuid)."""
    from tests.policy_setup import record_policy

    rel = tmp_path / "r.csv"
    rel.write_text("g,s\na,x\na,y\nb,x\nb,y\n")
    url = f"sqlite:///{tmp_path / 'l.db'}"
    record_policy(url, "d")
    argv = ["attempt", str(rel), "--dataset", "d", "--require", "chk", "--qi", "g",
            "--sensitive", "s", "--first-release", "--ledger", url, "--format", "json"]  # fmt: skip
    assert main(argv) == 0
    uuid = json.loads(capsys.readouterr().out)["attempt"]["uuid"]
    check = ["check", str(rel), "--sensitive", "s", "--group", "g", "--criterion",
             "k-anonymity:k=2", "--attempt", uuid, "--name", "chk", "--ledger", url]  # fmt: skip
    assert main(check) == 0
    capsys.readouterr()
    return url, rel, uuid


def test_publish_to_a_name_too_long_is_refused_before_the_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--to`` whose folder name is over 255 bytes: exit 2 naming ``--to`` (not a crash);
    the attempt stays open for a right ``--to``, which then publishes."""
    url, rel, uuid = _open_attempt(tmp_path, capsys)
    long = tmp_path / ("x" * 300)
    assert main(["publish", str(rel), "--attempt", uuid, "--to", str(long), "--ledger", url]) == 2
    assert "--to: cannot use" in capsys.readouterr().err
    assert main(["ledger", "list", "--ledger", url, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["releases"][0]["status"] == "candidate"
    good = tmp_path / "out"
    assert main(["publish", str(rel), "--attempt", uuid, "--to", str(good), "--ledger", url]) == 0
    assert (good / "r.csv").exists()


def test_a_release_table_name_too_long_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--out table:NAME`` longer than the dialect allows: exit 2 naming ``--out``, before
    anything is written (no table, no manifest)."""
    import sqlite3

    db = tmp_path / "w.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE src (g TEXT, s TEXT)")
        conn.executemany("INSERT INTO src VALUES (?, ?)", [("a", "x"), ("a", "y")])
    manifest = tmp_path / "m.json"
    argv = ["anonymize", "table:src", "--conn", f"sqlite:///{db}", "--qi", "g",
            "--sensitive", "s", "--method", "bucketize",
            "--criterion", "distinct-l-diversity:l=2", "--out", "table:" + "t" * 10_000,
            "--manifest", str(manifest)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the release table (--out)" in err and "10,000 characters" in err
    assert len(err) < 300
    assert not manifest.exists()
    with sqlite3.connect(db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
    assert tables == ["src"]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--max-lattice-size", "1000000000000", "must be a whole number in [1, 10000000]"),
        ("--disclosure-limit", str(10**100), "must be a whole number in [1, 10000000]"),
    ],
)  # fmt: skip
def test_lattice_knobs_are_bounded_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    """``anonymize``'s lattice knobs past what memory can hold (``1e12`` nodes asked 240 GiB,
    ``1e100`` worlds a MemoryError): exit 2 with the bound, before the input is read."""
    data = Path(__file__).resolve().parents[2] / "airflow_privacy" / "data" / "adult"
    out = tmp_path / "r.csv"
    argv = ["anonymize", str(data / "adult.csv.gz"), "--qi", "age", "--sensitive", "occupation",
            "--method", "lattice", "--criterion", "k-anonymity:k=5",
            "--hierarchy", f"age={data / 'adult_hierarchy_age.csv'}", "--out", str(out),
            option, value]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "reading" not in err
    assert not out.exists()
