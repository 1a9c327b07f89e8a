"""Core engines never import Airflow (DESIGN.md, "Layers")."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "airflow_privacy" / "core"


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
    evaluate(b, name, {p: params[p] for p in spec.required})
loaded = sorted(m for m in sys.modules if m == 'airflow' or m.startswith('airflow.'))
print(loaded)
assert not loaded, loaded
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
