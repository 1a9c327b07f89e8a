"""Provider metadata, plugin registration and the ledger view."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_privacy.core.composition import PublishedRelease
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow import get_provider_info
from tests.airflow.metadata_db import AIRFLOW

ROOT = Path(__file__).resolve().parents[2]


def test_provider_info_lists_importable_modules_and_classes() -> None:
    info = get_provider_info()
    assert info["package-name"] == "airflow-privacy"
    modules = [m for section in ("operators", "hooks") for e in info[section]
               for m in e["python-modules"]]  # fmt: skip
    assert len(modules) >= 6
    for name in modules:
        importlib.import_module(name)
    for dotted in (
        *(e["hook-class-name"] for e in info["connection-types"]),
        *info["extra-links"],
    ):
        module, _, cls = dotted.rpartition(".")
        assert hasattr(importlib.import_module(module), cls), dotted
    (conn,) = info["connection-types"]
    assert conn["connection-type"] == "privacyledger"  # RFC 3986 scheme: no underscore
    # the plugin is registered by the airflow.plugins entry point only (registered once)
    assert "plugins" not in info
    assert info["extra-links"] == [
        "airflow_privacy.providers.airflow.operators.report.ReleaseReportLink"
    ]
    json.dumps(info)  # plain data


def test_entry_points_are_declared() -> None:
    from importlib.metadata import entry_points

    providers = entry_points(group="apache_airflow_provider")
    assert any(
        ep.value == "airflow_privacy.providers.airflow:get_provider_info" for ep in providers
    )
    (plugin,) = [ep for ep in entry_points(group="airflow.plugins") if ep.name == "airflow_privacy"]
    assert plugin.value == "airflow_privacy.providers.airflow.plugin:AirflowPrivacyPlugin"
    from airflow.plugins_manager import AirflowPlugin

    cls = plugin.load()
    assert issubclass(cls, AirflowPlugin) and cls.name == "airflow_privacy"
    # the plugins-folder copy defines no plugin where the entry point is installed (here):
    # Airflow registers the plugin once
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "folder_copy", ROOT / "plugins" / "airflow_privacy_plugin.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert not [v for v in vars(module).values()
                if isinstance(v, type) and issubclass(v, AirflowPlugin)]  # fmt: skip


PLUGINS_PROBE = """
import json
from airflow import plugins_manager
plugins, errors = plugins_manager._get_plugins()
mine = [p for p in plugins if p.name == "airflow_privacy"]
print("RESULT " + json.dumps({
    "names": [p.name for p in plugins],
    "errors": errors,
    "source": str(mine[0].source) if mine else None,
    "prefixes": [a["url_prefix"] for p in mine for a in p.fastapi_apps],
    "views": [[v["name"], v["destination"]] for p in mine for v in p.external_views],
    "react_apps": [[a["name"], a["destination"]] for p in mine for a in p.react_apps],
}))
"""


def test_airflow_loads_the_plugin_once_from_its_entry_point(tmp_path: Path) -> None:
    """Airflow's plugins manager, as every Airflow component runs it (an empty plugins
    folder, providers discovered eagerly and lazily): the plugin is there, once."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    for lazy in ("True", "False"):
        home = tmp_path / f"home-{lazy}"
        (home / "plugins").mkdir(parents=True)
        env = base | {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__LAZY_DISCOVER_PROVIDERS": lazy,
            "PYTHONPATH": str(ROOT),
        }
        proc = subprocess.run([sys.executable, "-c", PLUGINS_PROBE], env=env, text=True,
                              capture_output=True, timeout=300, cwd=tmp_path)  # fmt: skip
        line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        assert proc.returncode == 0 and line, proc.stdout[-2000:] + proc.stderr[-3000:]
        out = json.loads(line[0][len("RESULT ") :])
        assert out["names"].count("airflow_privacy") == 1, out
        # ours loads cleanly (another provider's plugin may be reported twice: the
        # OpenLineage provider's is, by Airflow 3.3 itself)
        mine = {k: v for k, v in out["errors"].items()
                if "privacy" in k.lower() or "airflow_privacy" in str(v)}  # fmt: skip
        assert mine == {}, out["errors"]
        assert "airflow_privacy.providers.airflow.plugin" in (out["source"] or ""), out
        assert out["prefixes"] == ["/privacy"]
        # the menu; a tab of each run and of each task instance
        assert out["views"] == [["Privacy ledger", "nav"], ["Privacy report", "dag_run"],
                                ["Privacy report", "task_instance"]], out["views"]  # fmt: skip
        assert out["react_apps"] == [["Privacy releases", "dashboard"]]


def test_ledger_view_is_read_only_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", url)
    release = PublishedRelease.from_groups(
        ["age"], "disease", [(["20-29"], {"flu": 2, "cold": 1}), (["30-39"], {"flu": 1, "cold": 2})]
    )
    with ReleaseLedger(url) as ledger:
        info = ledger.record("clinic", release, status="published")
    from airflow_privacy.providers.airflow.plugin import create_app

    client = TestClient(create_app(auth=False))  # Airflow's auth: tests/airflow/test_ui.py
    listed = client.get("/api/releases", params={"dataset": "clinic"}).json()
    assert [(r["dataset"], r["status"], r["uuid"]) for r in listed] == [
        ("clinic", "published", info.uuid)
    ]
    one = client.get(f"/api/releases/{info.uuid}").json()
    assert one["status"] == "published" and one["groups"] == 2
    assert [a["status"] for a in one["attempts"]] == ["published"]  # imported history
    assert client.get(f"/api/releases/{info.id}").json() == one  # an id is accepted too
    assert client.get("/api/releases/999").status_code == 404
    assert client.post("/api/releases").status_code == 405
    with ReleaseLedger(url, create=False) as ledger:  # nothing was written by reading
        assert [r.updated_at for r in ledger.list()] == [info.updated_at]


def test_airflow_config_lists_the_privacy_section(tmp_path: Path) -> None:
    """The [privacy] section comes from the provider metadata of a pip install: ``airflow
    config list`` shows its options with their defaults and descriptions."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(AIRFLOW_HOME=str(tmp_path), AIRFLOW__CORE__LOAD_EXAMPLES="False",
               AIRFLOW__PRIVACY__OUTPUT_DIR="/srv/from-airflow-config")  # fmt: skip
    out = subprocess.run([AIRFLOW, "config", "list", "--section", "privacy", "--show-values"],
                         env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert "[privacy]" in out.stdout
    for option in ("ledger_url", "ledger_conn_id", "output_dir", "ui_auth"):
        assert option in out.stdout, option
    assert "/srv/from-airflow-config" in out.stdout  # Airflow's own environment form
    got = subprocess.run([AIRFLOW, "config", "get-value", "privacy", "ui_auth"], env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert got.stdout.strip() == "airflow"


def test_settings_read_the_projects_variable_then_airflows_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from airflow_privacy.ledger.location import resolve
    from airflow_privacy.providers.airflow.config import setting
    from airflow_privacy.providers.airflow.plugin import auth_mode

    for name in ("AIRFLOW_PRIVACY_LEDGER_URL", "AIRFLOW_PRIVACY_UI_AUTH",
                 "AIRFLOW__PRIVACY__LEDGER_URL", "AIRFLOW__PRIVACY__UI_AUTH",
                 "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    assert setting("ledger_url") is None and auth_mode() == "airflow"
    configured = f"sqlite:///{tmp_path / 'configured.db'}"
    monkeypatch.setenv("AIRFLOW__PRIVACY__LEDGER_URL", configured)
    monkeypatch.setenv("AIRFLOW__PRIVACY__UI_AUTH", "none")
    assert auth_mode() == "none"
    for config in (setting, None):  # inside Airflow, and the command line's environment form
        loc = resolve(None, lookup=lambda _c: None, config=config)
        assert loc.url == configured and loc.source == "[privacy] ledger_url"
    # the project's own variables override the section
    monkeypatch.setenv("AIRFLOW_PRIVACY_UI_AUTH", "airflow")
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", "sqlite:////elsewhere.db")
    assert auth_mode() == "airflow"
    assert resolve(None, lookup=lambda _c: None, config=setting).url == "sqlite:////elsewhere.db"


def test_the_organizations_ledger_connection_is_a_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``[privacy] ledger_conn_id``: the connection used when none is named, for the
    operators and the UI (Airflow's config) and the command line (its environment form);
    a named connection that does not exist is an error, not the default file."""
    from airflow_privacy.errors import InputError
    from airflow_privacy.ledger.location import ConnectionFields, resolve
    from airflow_privacy.providers.airflow.config import setting

    names = ("AIRFLOW_PRIVACY_LEDGER_URL", "AIRFLOW__PRIVACY__LEDGER_URL",
             "AIRFLOW_PRIVACY_LEDGER_CONN_ID", "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT")  # fmt: skip
    for name in names:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path))
    url = f"sqlite:///{tmp_path / 'org.db'}"
    conns = {"privacy_ledger_prod": ConnectionFields(conn_id="privacy_ledger_prod",
                                                     extra={"url": url})}  # fmt: skip
    monkeypatch.setenv("AIRFLOW__PRIVACY__LEDGER_CONN_ID", "privacy_ledger_prod")
    for config in (setting, None):
        loc = resolve(None, lookup=conns.get, config=config)
        assert loc.url == url and loc.source == "connection 'privacy_ledger_prod'"
        # the operators' default conn id means "not named": the setting decides
        assert resolve(None, conn_id="privacy_ledger_default", lookup=conns.get,
                       config=config).url == url  # fmt: skip
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_CONN_ID", "privacy_ledger_gone")
    with pytest.raises(InputError, match=r"'privacy_ledger_gone'.*does not exist"):
        resolve(None, lookup=conns.get, config=setting)


def test_the_plugins_folder_copy_is_registered_once_beside_the_entry_point(
    tmp_path: Path,
) -> None:
    """``plugins/airflow_privacy_plugin.py`` (what a managed Airflow copies into its plugins
    folder), with the package's entry point there too: Airflow loads the plugin once."""
    import shutil

    base = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    home = tmp_path / "home"
    (home / "plugins").mkdir(parents=True)
    shutil.copy(ROOT / "plugins" / "airflow_privacy_plugin.py", home / "plugins")
    env = base | {"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                  "PYTHONPATH": str(ROOT)}  # fmt: skip
    for probe, source in (
        (PLUGINS_PROBE, "airflow_privacy.providers.airflow.plugin"),
        (WITHOUT_ENTRY_POINT + PLUGINS_PROBE, "airflow_privacy_plugin.py"),
    ):
        proc = subprocess.run([sys.executable, "-c", probe], env=env, text=True,
                              capture_output=True, timeout=300, cwd=tmp_path)  # fmt: skip
        line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        assert proc.returncode == 0 and line, proc.stdout[-2000:] + proc.stderr[-3000:]
        out = json.loads(line[0][len("RESULT ") :])
        assert out["names"].count("airflow_privacy") == 1, out
        # ours loads cleanly (another provider's plugin may be reported twice: the
        # OpenLineage provider's is, by Airflow 3.3 itself)
        mine = {k: v for k, v in out["errors"].items()
                if "privacy" in k.lower() or "airflow_privacy" in str(v)}  # fmt: skip
        assert mine == {}, out["errors"]
        assert out["prefixes"] == ["/privacy"]
        assert source in (out["source"] or ""), out  # the entry point, else the folder's copy


# the package's plugin entry point hidden, as where it is not installed (a plugins folder)
WITHOUT_ENTRY_POINT = """
import importlib.metadata as md
from airflow._shared import module_loading
_real_eps, _real_dist = md.entry_points, module_loading.entry_points_with_dist
def _eps(**kw):
    found = _real_eps(**kw)
    if kw.get("group") == "airflow.plugins":
        return md.EntryPoints([e for e in found if e.name != "airflow_privacy"])
    return found
def _dist(group):
    return [(e, d) for e, d in _real_dist(group) if e.name != "airflow_privacy"]
md.entry_points, module_loading.entry_points_with_dist = _eps, _dist
"""


def test_airflow_providers_show_the_notifier_and_the_decorator(tmp_path: Path) -> None:
    """From a pip install (no plugin file copied): ``airflow providers notifications`` lists
    the notifier and the provider's metadata lists the ``@task.privacy_check`` decorator."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(AIRFLOW_HOME=str(tmp_path), AIRFLOW__CORE__LOAD_EXAMPLES="False")

    def run(*args: str) -> str:
        out = subprocess.run([AIRFLOW, "providers", *args], env=env, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout

    assert "airflow_privacy.providers.airflow.notifier.ReleaseVerdictNotifier" in run(
        "notifications"
    )
    (full,) = json.loads(run("get", "airflow-privacy", "--full", "-o", "json"))
    assert {d["name"] for d in full["task-decorators"]} == {"privacy_check", "anonymize"}
    assert "privacy" in full["config"]
