"""The demo (``make demo``) runs on its own ledger, whatever the calling shell configured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_privacy.ledger.location import resolve
from airflow_privacy.providers.airflow import release_demo


def test_the_demo_never_uses_a_ledger_configured_in_the_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    production = "postgresql+psycopg://steward@db.example/ledger"
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", production)
    monkeypatch.setenv(
        "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT",
        json.dumps({"conn_type": "privacyledger", "extra": {"url": production}}),
    )
    env = release_demo._env(tmp_path)
    assert "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT" not in env
    assert production not in env.values()
    demo = f"sqlite:///{tmp_path / 'privacy_ledger.db'}"
    assert env["AIRFLOW_PRIVACY_LEDGER_URL"] == demo == release_demo.ledger_url(tmp_path)
    # the one resolution the tasks use finds the demo's ledger in that environment
    with monkeypatch.context() as m:
        for key in ("AIRFLOW_PRIVACY_LEDGER_URL", "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT"):
            m.delenv(key, raising=False)
        for key, value in env.items():
            m.setenv(key, value)
        assert resolve(None, lookup=lambda conn_id: None).url == demo
