"""PrivacyLedgerHook: its own engine from its own connection type, SQLite by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_privacy.providers.airflow.hooks.ledger import PrivacyLedgerHook


def test_default_is_a_sqlite_file_under_airflow_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    monkeypatch.delenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", raising=False)
    hook = PrivacyLedgerHook()
    url = hook.url()
    assert url.drivername == "sqlite"
    assert Path(url.database or "") == tmp_path / "privacy_ledger.db"
    with hook.get_conn() as ledger:
        assert ledger.list() == []
    assert (tmp_path / "privacy_ledger.db").exists()


def test_connection_fields_make_a_postgres_url(monkeypatch: pytest.MonkeyPatch) -> None:
    conn = {"conn_type": "privacy_ledger", "host": "db.internal", "port": 5433,
            "schema": "ledger", "login": "steward", "password": "p@ss/word",
            "extra": {"dialect": "postgresql"}}  # fmt: skip
    monkeypatch.setenv("AIRFLOW_CONN_LEDGER_PG", json.dumps(conn))
    url = PrivacyLedgerHook("ledger_pg").url()
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database, url.username) == (
        "db.internal",
        5433,
        "ledger",
        "steward",
    )
    assert url.password == "p@ss/word"  # special characters survive, no string pasting


def test_sqlite_connection_and_full_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "nested" / "ledger.db"
    conn = {"conn_type": "privacy_ledger", "extra": {"dialect": "sqlite", "path": str(path)}}
    monkeypatch.setenv("AIRFLOW_CONN_LEDGER_FILE", json.dumps(conn))
    with PrivacyLedgerHook("ledger_file").get_conn() as ledger:
        assert ledger.list() == []
    assert path.exists()
    full = {"conn_type": "privacy_ledger", "extra": {"url": f"sqlite:///{tmp_path / 'u.db'}"}}
    monkeypatch.setenv("AIRFLOW_CONN_LEDGER_URL", json.dumps(full))
    assert PrivacyLedgerHook("ledger_url").url().database == str(tmp_path / "u.db")


def test_unknown_named_connection_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow.sdk.exceptions import AirflowNotFoundException

    with pytest.raises(AirflowNotFoundException):
        PrivacyLedgerHook("no_such_ledger").url()
