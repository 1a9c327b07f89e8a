"""Opening a ledger that is not what it should be: a corrupt or truncated file, a ledger
written by a newer version, a database of another application, unusual and malformed URLs.
Each is one line of bad input (exit 2) or, for a server that cannot be reached, a retryable
"unavailable" (exit 4); never an internal error, never a password in a message. Reading never
creates or changes anything."""

from __future__ import annotations

import contextlib
import io
import os
import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import OperationalError, ProgrammingError

from airflow_privacy.cli import main
from airflow_privacy.errors import InputError, LedgerUnavailable, PrivacyGateError
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.ledger.engine import classify, parse_url, safe_url
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.ledger.support import cli, sample, url
from tests.ledger_worker import make_release

__all__ = ["url"]


def _one_line_error(fn: Callable[[], object], kind: type[PrivacyGateError]) -> str:
    with pytest.raises(PrivacyGateError) as err:
        fn()
    assert isinstance(err.value, kind), f"{type(err.value).__name__}: {err.value}"
    message = str(err.value)
    assert message and "\n" not in message
    return message


def _read_everything(target: str) -> None:
    """What readers do: open, list, show every release with its groups and attempts."""
    with ReleaseLedger(target, create=False) as ledger:
        for info in ledger.list():
            ledger.release(info.id)
            ledger.attempts(info.id)
            ledger.verify(info.id)


def _cli_fails(code: int, *args: str) -> str:
    """``airflow-privacy ARGS`` (in this process: the same code path as the command, without
    the start-up time) fails with exit ``code`` and one line on stderr; that line."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        got = main(list(args), out)
    assert got == code, (got, err.getvalue()[-2000:])
    lines = err.getvalue().strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err.getvalue(), err.getvalue()
    return lines[0]


def _real_ledger(path: Path, groups: int = 4000) -> None:
    with ReleaseLedger(str(path)) as ledger:
        for seed in range(3):
            ledger.record("d", make_release(seed, groups), status="published")
    assert not Path(f"{path}-wal").exists()  # the last close checkpointed the log


# --------------------------------------------------------------------- files
def test_a_corrupt_file_is_bad_input_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.db"
    path.write_bytes(os.urandom(64 * 1024))
    before = path.read_bytes()
    for create in (False, True):
        message = _one_line_error(partial(ReleaseLedger, str(path), create=create), InputError)
        assert "not a readable ledger" in message and "file is not a database" in message
    assert "not a readable ledger" in _cli_fails(2, "ledger", "list", "--ledger", str(path))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.db"]


def test_a_truncated_ledger_is_bad_input(tmp_path: Path) -> None:
    whole = tmp_path / "whole.db"
    _real_ledger(whole)
    data = whole.read_bytes()
    cut = tmp_path / "cut.db"
    cut.write_bytes(data[: len(data) // 2])
    message = _one_line_error(lambda: _read_everything(str(cut)), InputError)
    assert "malformed" in message
    line = _cli_fails(2, "ledger", "show", "3", "--groups", "--ledger", str(cut))
    assert "malformed" in line
    _read_everything(str(whole))  # the whole file reads


def test_a_ledger_from_a_newer_version_is_refused_untouched(url: str) -> None:
    ReleaseLedger(url).record("d", sample())
    engine = create_engine(parse_url(url))
    with engine.begin() as conn:
        conn.execute(text("UPDATE ledger_alembic_version SET version_num = '0099_from_the_future'"))
    for create in (False, True):
        message = _one_line_error(partial(ReleaseLedger, url, create=create), InputError)
        assert "0099_from_the_future" in message and "newer airflow-privacy" in message
    line = _cli_fails(2, "ledger", "list", "--ledger", url)
    assert "newer airflow-privacy" in line and "airflow-privacy-test" not in line
    with engine.connect() as conn:  # not "upgraded" or stamped back
        version = conn.execute(text("SELECT version_num FROM ledger_alembic_version")).scalar()
        assert version == "0099_from_the_future"
    engine.dispose()


def test_a_database_of_another_application(url: str) -> None:
    engine = create_engine(parse_url(url))
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)"))
        conn.execute(text("INSERT INTO customers VALUES (1, 'Ada')"))
    sqlite_file = parse_url(url).database if url.startswith("sqlite") else None
    before = Path(sqlite_file).read_bytes() if sqlite_file else b""
    # a reader: bad input, and nothing created or changed (not even the journal mode)
    message = _one_line_error(lambda: ReleaseLedger(url, create=False), InputError)
    assert "holds no ledger yet" in message
    assert "holds no ledger yet" in _cli_fails(2, "ledger", "list", "--ledger", url)
    assert inspect(engine).get_table_names() == ["customers"]
    if sqlite_file:
        assert Path(sqlite_file).read_bytes() == before
        assert not Path(f"{sqlite_file}-wal").exists()
    # tables named like a ledger's without a revision: not ours, refused even to a writer
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE ledger_releases (id INTEGER PRIMARY KEY)"))
    message = _one_line_error(lambda: ReleaseLedger(url, create=True), InputError)
    assert "not a ledger this tool wrote" in message
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE ledger_releases"))
    # a writer may add a ledger beside the other application's tables
    with ReleaseLedger(url) as ledger:
        ledger.record("d", sample())
    with engine.connect() as conn:
        assert conn.execute(text("SELECT name FROM customers")).scalar() == "Ada"
    engine.dispose()


def test_reading_never_creates_a_ledger(tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    missing = tmp_path / "missing.db"
    message = _one_line_error(lambda: ReleaseLedger(str(missing), create=False), InputError)
    assert "does not exist" in message
    assert "does not exist" in _cli_fails(2, "ledger", "list", "--ledger", str(missing))
    assert list(tmp_path.iterdir()) == []
    # an empty file (touched by someone) stays empty
    empty = tmp_path / "empty.db"
    empty.touch()
    assert "holds no ledger yet" in _one_line_error(
        lambda: ReleaseLedger(str(empty), create=False), InputError
    )
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["empty.db"]
    # a PostgreSQL database without ledger tables is not migrated by a reader
    message = _one_line_error(lambda: ReleaseLedger(pg_url, create=False), InputError)
    assert "holds no ledger yet" in message
    assert "holds no ledger yet" in _cli_fails(2, "ledger", "list", "--ledger", pg_url)
    engine = create_engine(pg_url)
    assert inspect(engine).get_table_names() == []
    engine.dispose()


# ---------------------------------------------------------------------- URLs
def test_an_ipv6_url_parses_and_an_unreachable_server_is_unavailable() -> None:
    target = "postgresql+psycopg://u:p4ssw0rd@[::1]:1/db"
    parsed = parse_url(target)
    assert (parsed.host, parsed.port, parsed.database) == ("::1", 1, "db")
    assert safe_url(parsed) == "postgresql+psycopg://u:***@[::1]:1/db"
    message = _one_line_error(lambda: ReleaseLedger(target, create=False), LedgerUnavailable)
    assert "[::1]:1" in message and "p4ssw0rd" not in message
    proc = cli("ledger", "list", "--ledger", target)  # a real process: its exit status
    assert proc.returncode == 4 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "ledger unavailable" in proc.stderr and "p4ssw0rd" not in proc.stderr


def test_a_release_id_past_two_to_the_63_is_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    ReleaseLedger(str(path)).record("d", sample())
    with ReleaseLedger(str(path), create=False) as ledger:
        for ref in ("99999999999999999999", "#9223372036854775808", str(2**31)):
            assert "between 1 and" in _one_line_error(partial(ledger.resolve, ref), InputError)
        _one_line_error(lambda: ledger.info(2**63), InputError)
        _one_line_error(lambda: ledger.attempt(str(10**20)), InputError)
        _one_line_error(lambda: ledger.attempt(-1), InputError)
    line = _cli_fails(2, "ledger", "show", "99999999999999999999", "--ledger", str(path))
    assert "between 1 and" in line


def test_an_empty_url_is_bad_input() -> None:
    for empty in ("", "   ", "\t"):
        assert "empty" in _one_line_error(partial(ReleaseLedger, empty), InputError)
    assert "empty" in _cli_fails(2, "ledger", "list", "--ledger=")


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        ("postgresql+psycopg://u@127.0.0.1:1/db?password=s3cr3tpw", LedgerUnavailable),
        ("postgresql+psycopg://u@127.0.0.1:1/db?password=s3cr3tpw&sslmode=bogus", InputError),
        ("postgresql+psycopg://u@127.0.0.1:1/db?password=s3cr3tpw&foo=bar", InputError),
        ("postgresql+psycopg://u:s3cr3tpw@[::1/db", InputError),
        ("postgresql+psycopg://u:s3cr3tpw@host:99999999/db", InputError),
        ("mysql://u:s3cr3tpw@127.0.0.1/db", InputError),
    ],
)
def test_a_password_never_appears_in_a_message(target: str, kind: type[PrivacyGateError]) -> None:
    message = _one_line_error(lambda: ReleaseLedger(target, create=False), kind)
    assert "s3cr3tpw" not in message
    line = _cli_fails(4 if kind is LedgerUnavailable else 2, "ledger", "list", "--ledger", target)
    assert "s3cr3tpw" not in line


def test_classify_scrubs_secrets_and_sorts_errors() -> None:
    where = "postgresql+psycopg://u:***@h/db"
    echoed = OperationalError("connect", {}, Exception('auth for "u" with "hunter22" failed'))
    mapped = classify(echoed, where, ("hunter22",))
    assert isinstance(mapped, LedgerUnavailable) and "hunter22" not in str(mapped)
    bad = ProgrammingError("connect", {}, Exception('invalid connection option "foo"'))
    assert isinstance(classify(bad, where), InputError)
    locked = OperationalError("BEGIN IMMEDIATE", {}, sqlite3.OperationalError("database is locked"))
    assert isinstance(classify(locked, where), LedgerUnavailable)
    assert classify(ValueError("a bug"), where) is None


def test_a_sqlite_uri_with_a_password_query_is_not_echoed(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    target = f"sqlite:///{path}?password=s3cr3tpw"
    assert "s3cr3tpw" not in safe_url(target)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        main(["ledger", "list", "--ledger", target], out)
    assert "s3cr3tpw" not in err.getvalue() + out.getvalue()
