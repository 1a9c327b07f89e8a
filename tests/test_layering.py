"""The layers (docs/design.md, "Layers"): the core engines never import Airflow, and neither do
the ledger, the application layer (gate), the report or the command line; only the Airflow
provider does. Layers depend downwards only: core <- ledger <- gate / report <- cli, providers.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "airflow_privacy"
CORE = PACKAGE / "core"
# every layer that must run without Airflow installed (the provider is the only adapter)
WITHOUT_AIRFLOW = ("core", "ledger", "gate", "report", "cli")
# what each layer may not import (of this package): nothing from the layers above it
FORBIDDEN = {
    "core": ("ledger", "gate", "report", "cli", "providers", "expectations"),
    "ledger": ("gate", "report", "cli", "providers"),
    "gate": ("cli", "providers"),
    "report": ("cli", "providers"),
    "cli": ("providers",),
}


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_core_module_imports_airflow_statically() -> None:
    files = sorted(CORE.rglob("*.py"))
    assert files, "no core modules found"
    offenders = {
        str(f.relative_to(CORE)): sorted(
            m for m in _imported_modules(f) if m.split(".")[0] == "airflow"
        )
        for f in files
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_layer_below_the_provider_imports_airflow_statically() -> None:
    files = sorted(f for layer in WITHOUT_AIRFLOW for f in (PACKAGE / layer).rglob("*.py"))
    assert len(files) > len(WITHOUT_AIRFLOW), "no modules found"
    offenders = {
        str(f.relative_to(PACKAGE)): sorted(
            m for m in _imported_modules(f) if m.split(".")[0] == "airflow"
        )
        for f in [*files, PACKAGE / "errors.py"]
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_layers_depend_downwards_only() -> None:
    offenders: dict[str, list[str]] = {}
    for layer, above in FORBIDDEN.items():
        for f in sorted((PACKAGE / layer).rglob("*.py")):
            bad = sorted(
                m
                for m in _imported_modules(f)
                if m.startswith("airflow_privacy.") and m.split(".")[1] in above
            )
            if bad:
                offenders[str(f.relative_to(PACKAGE))] = bad
    assert offenders == {}


def test_running_every_core_engine_loads_no_airflow_module() -> None:
    code = """
import importlib, pkgutil, sys
import airflow_privacy.core as core
for mod in pkgutil.walk_packages(core.__path__, 'airflow_privacy.core.'):
    importlib.import_module(mod.name)
from airflow_privacy.core.model import Bucketization
from airflow_privacy.core.criteria.registry import CRITERIA, evaluate
b = Bucketization.from_group_counts([[3, 1, 1], [2, 2, 1]])
params = {'k': 2, 'l': 2, 'c': 0.9, 't': 0.5, 'points': ['1,1,1,0.9']}
for name, spec in CRITERIA.items():
    evaluate(b, name, {p: params[p] for p in spec.required()})
loaded = sorted(m for m in sys.modules if m == 'airflow' or m.startswith('airflow.'))
print(loaded)
assert not loaded, loaded
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_command_line_and_its_services_load_no_airflow_module(tmp_path: Path) -> None:
    """Every module of the layers below the provider imports, and a check through the gate
    (the command line's path) runs, without loading Airflow."""
    release = tmp_path / "r.csv"
    release.write_text("g,s\n" + "".join(f"{i % 2},{'abc'[i % 3]}\n" for i in range(12)))
    code = f"""
import importlib, io, pkgutil, sys
for pkg in {WITHOUT_AIRFLOW!r}:
    m = importlib.import_module('airflow_privacy.' + pkg)
    for mod in pkgutil.walk_packages(m.__path__, m.__name__ + '.'):
        if mod.name.endswith('__main__') or '.migrations' in mod.name:
            continue  # the entry point runs the command; Alembic's env runs under Alembic
        importlib.import_module(mod.name)
from airflow_privacy.cli import main
code = main(['check', {str(release)!r}, '--sensitive', 's', '--group', 'g',
             '--criterion', 'k-anonymity:k=2', '--quiet'], io.StringIO())
assert code == 0, code
loaded = sorted(m for m in sys.modules if m == 'airflow' or m.startswith('airflow.'))
assert not loaded, loaded
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
