"""PrivacyLedgerHook and the location of the ledger: one resolution for hook, operators, UI
and command line (a named connection, else $AIRFLOW_PRIVACY_LEDGER_URL, else the default
connection, else $AIRFLOW_HOME/privacy_ledger.db); reading never creates a ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_privacy.errors import InputError, LedgerMissing
from airflow_privacy.ledger.location import resolve
from airflow_privacy.providers.airflow.hooks.ledger import PrivacyLedgerHook


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    monkeypatch.delenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", raising=False)
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_URL", raising=False)


def test_default_is_a_sqlite_file_under_airflow_home_and_reading_creates_nothing(
    tmp_path: Path,
) -> None:
    hook = PrivacyLedgerHook()
    loc = hook.location()
    assert loc.url == f"sqlite:///{tmp_path / 'privacy_ledger.db'}"
    with pytest.raises(LedgerMissing, match="does not exist"):
        hook.get_conn()
    assert not (tmp_path / "privacy_ledger.db").exists()
    with hook.get_conn(create=True) as ledger:
        assert ledger.list() == []
    assert (tmp_path / "privacy_ledger.db").exists()


def test_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = {"conn_type": "privacyledger", "extra": {"url": "sqlite:///from-conn.db"}}
    monkeypatch.setenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", json.dumps(default))
    assert PrivacyLedgerHook().location().url == "sqlite:///from-conn.db"
    assert resolve().url == "sqlite:///from-conn.db"  # the CLI reads the same connection
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", "sqlite:///from-env.db")
    assert PrivacyLedgerHook().location().url == "sqlite:///from-env.db"
    assert resolve().url == "sqlite:///from-env.db"
    other = {"conn_type": "privacyledger", "extra": {"url": "sqlite:///named.db"}}
    monkeypatch.setenv("AIRFLOW_CONN_LEDGER_NAMED", json.dumps(other))
    assert PrivacyLedgerHook("ledger_named").location().url == "sqlite:///named.db"
    assert resolve("explicit.db").url == "explicit.db"


def test_connection_fields_make_a_postgres_url(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = {
        "conn_type": "privacyledger",
        "host": "db.internal",
        "port": 5433,
        "schema": "ledger",
        "login": "steward",
        "password": "p@ss/word",
        "extra": {"dialect": "postgresql", "hmac_key_env": "MY_KEY"},
    }
    monkeypatch.setenv("AIRFLOW_CONN_LEDGER_PG", json.dumps(conn))
    loc = PrivacyLedgerHook("ledger_pg").location()
    from sqlalchemy.engine import make_url

    url = make_url(loc.url)
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database, url.username) == (
        "db.internal",
        5433,
        "ledger",
        "steward",
    )
    assert url.password == "p@ss/word"  # special characters survive, no string pasting
    assert loc.key_env == "MY_KEY"
    assert "p@ss/word" not in loc.display


def test_sqlite_connection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ledger.db"
    conn = {"conn_type": "privacyledger", "extra": {"dialect": "sqlite", "path": str(path)}}
    monkeypatch.setenv("AIRFLOW_CONN_LEDGER_FILE", json.dumps(conn))
    with PrivacyLedgerHook("ledger_file").get_conn(create=True) as ledger:
        assert ledger.list() == []
    assert path.exists()


def test_a_named_connection_that_does_not_exist_is_bad_input() -> None:
    with pytest.raises(InputError, match="ledger connection 'no_such_ledger' does not exist"):
        PrivacyLedgerHook("no_such_ledger").location()
