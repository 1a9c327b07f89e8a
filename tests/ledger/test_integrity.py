"""A corrupted ledger (``airflow_privacy.ledger.integrity``): a value the ledger cannot read
is named by table, row and column, and the command exits 2 -- never a crash, never a
verdict. SQLite only: PostgreSQL enforces the column types, so none of these can be stored
there."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from airflow_privacy.cli import main
from tests.policy_setup import record_policy

#: (the corruption, the table, the column named, what is wrong)
CORRUPTIONS = [
    ("UPDATE ledger_releases SET qis = '{bad'", "ledger_releases", "column qis", "not JSON"),
    ("UPDATE ledger_releases SET spec = '[1,'", "ledger_releases", "column spec", "not JSON"),
    ("UPDATE ledger_releases SET n_records = 'many'", "ledger_releases", "column n_records",
     "not a whole number"),
    ("UPDATE ledger_releases SET created_at = 'yesterday'", "ledger_releases",
     "column created_at", "not a timestamp"),
    ("UPDATE ledger_attempts SET required = 'nope{'", "ledger_attempts", "column required",
     "not JSON"),
    ("UPDATE ledger_attempts SET release_id = 99", "ledger_attempts",
     "refers to a row of ledger_releases", "does not exist"),
    ("UPDATE ledger_policies SET policy = '{'", "ledger_policies", "column policy", "not JSON"),
]  # fmt: skip


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """A ledger with a policy, a release and an open attempt: (ledger file, release, uuid)."""
    folder = tmp_path_factory.mktemp("integrity")
    rel = folder / "r.csv"
    rel.write_text("g,s\na,x\na,y\nb,x\nb,y\n")
    db = folder / "clean.db"
    url = f"sqlite:///{db}"
    record_policy(url, "d")
    out = io.StringIO()
    argv = ["attempt", str(rel), "--dataset", "d", "--require", "chk", "--qi", "g",
            "--sensitive", "s", "--first-release", "--ledger", url, "--format", "json"]  # fmt: skip
    assert main(argv, out) == 0
    return db, rel, json.loads(out.getvalue())["attempt"]["uuid"]


@pytest.mark.parametrize(("sql", "table", "column", "what"), CORRUPTIONS)
def test_a_corrupted_value_is_named_and_refused(
    clean: tuple[Path, Path, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    sql: str,
    table: str,
    column: str,
    what: str,
) -> None:
    db, rel, uuid = clean
    broken = tmp_path / "ledger.db"
    shutil.copyfile(db, broken)
    with sqlite3.connect(broken) as conn:
        conn.execute(sql)
    url = f"sqlite:///{broken}"
    commands = [
        ["ledger", "list", "--ledger", url],
        ["ledger", "show", "1", "--ledger", url],
        ["policy", "show", "--dataset", "d", "--ledger", url],
        ["check", str(rel), "--sensitive", "s", "--group", "g", "--criterion",
         "k-anonymity:k=2", "--attempt", uuid, "--name", "chk", "--ledger", url],
        ["publish", str(rel), "--attempt", uuid, "--to", str(tmp_path / "out"),
         "--ledger", url],
    ]  # fmt: skip
    refused = 0
    for argv in commands:
        code = main(argv, io.StringIO())
        err = capsys.readouterr().err
        assert code in (0, 1, 2), (argv, code, err)  # never a crash (3)
        if code == 2 and "cannot read" in err:
            assert f"table {table}" in err and column in err and what in err, err
            assert "restore the ledger from a backup" in err
            refused += 1
    assert refused >= 1  # the corruption is met by at least one command
    assert not (tmp_path / "out").exists()  # nothing published from a corrupted ledger
