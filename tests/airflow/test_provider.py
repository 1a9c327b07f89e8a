"""Provider metadata, plugin and the ledger view."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_privacy.core.composition import PublishedRelease
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow import get_provider_info

ROOT = Path(__file__).resolve().parents[2]


def test_provider_info_lists_importable_modules_and_classes() -> None:
    info = get_provider_info()
    assert info["package-name"] == "airflow-privacy"
    modules = [m for section in ("operators", "hooks") for e in info[section]
               for m in e["python-modules"]]  # fmt: skip
    assert len(modules) >= 6
    for name in modules:
        importlib.import_module(name)
    for entry in (*info["connection-types"], *info["plugins"]):
        dotted = entry.get("hook-class-name") or entry["plugin-class"]
        module, _, cls = dotted.rpartition(".")
        assert hasattr(importlib.import_module(module), cls), dotted
    (conn,) = info["connection-types"]
    assert conn["connection-type"] == "privacy_ledger"
    json.dumps(info)  # plain data


def test_entry_point_is_declared() -> None:
    from importlib.metadata import entry_points

    eps = entry_points(group="apache_airflow_provider")
    assert any(ep.value == "airflow_privacy.providers.airflow:get_provider_info" for ep in eps)


def test_plugins_folder_registers_the_plugin() -> None:
    from airflow.plugins_manager import AirflowPlugin

    spec = importlib.util.spec_from_file_location(
        "pf", ROOT / "plugins" / "airflow_privacy_plugin.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    plugin = module.AirflowPrivacyPlugin
    assert issubclass(plugin, AirflowPlugin) and plugin.name == "airflow_privacy"
    assert plugin.fastapi_apps[0]["url_prefix"] == "/privacy"
    assert plugin.external_views[0]["name"] == "Privacy ledger"
    info = get_provider_info()
    assert info["extra-links"] == [
        "airflow_privacy.providers.airflow.operators.report.ReleaseReportLink"
    ]


def test_ledger_view_is_read_only_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", url)
    release = PublishedRelease.from_groups(
        ["age"], "disease", [(["20-29"], {"flu": 2, "cold": 1}), (["30-39"], {"flu": 1, "cold": 2})]
    )
    with ReleaseLedger(url) as ledger:
        ledger.record("clinic", release, status="published")
    from airflow_privacy.providers.airflow.plugin import create_app

    client = TestClient(create_app(auth=False))  # Airflow's auth: tests/airflow/test_ui.py
    listed = client.get("/api/releases", params={"dataset": "clinic"}).json()
    assert [(r["dataset"], r["status"]) for r in listed] == [("clinic", "published")]
    one = client.get(f"/api/releases/{listed[0]['id']}").json()
    assert one["status"] == "published" and "groups" in one
    assert client.get("/api/releases/999").status_code == 404
    assert client.post("/api/releases").status_code == 405
