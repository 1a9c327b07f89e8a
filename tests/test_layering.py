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
    # the two front ends never import each other (both import the layers below and
    # airflow_privacy.vocabulary)
    "providers": ("cli",),
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
b = Bucketization.from_group_counts([[3, 1, 1], [2, 2, 1]]).with_population([10, 10], [4])
params = {'k': 2, 'l': 2, 'c': 0.9, 't': 0.5, 'points': ['1,1,1,0.9'], 'alpha': 0.5,
          'beta': 1.0, 'delta': 1.0, 'delta_max': 0.5}
# criteria whose required parameters alone are not enough (one of several must be given)
extra = {'prosecutor-risk': {'highest': 0.5}, 'k-map': {'sampling_fraction': 0.5}}
assert set(extra) <= set(CRITERIA)
for name, spec in CRITERIA.items():
    evaluate(b, name, {**{p: params[p] for p in spec.required()}, **extra.get(name, {})})
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


def _core_unit(module: str) -> str | None:
    """The unit of the core layer ``module`` belongs to: a subpackage (``core.anonymize``)
    or a top-level core module (``core.model``)."""
    parts = module.split(".")
    if parts[:2] != ["airflow_privacy", "core"] or len(parts) < 3:
        return None
    return "core." + parts[2]


def test_the_core_subpackages_import_each_other_without_cycles() -> None:
    """The static import graph of the core's subpackages, function-level imports included,
    has no cycle: in particular the lattice anonymizer and the algorithm-aware search share
    the lattice through ``core/anonymize/problem.py`` and ``core/anonymize`` never imports
    ``core/algorithm_aware`` (which builds on it)."""
    units = {
        "core." + p.name for p in CORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()
    }
    assert {"core.anonymize", "core.algorithm_aware", "core.criteria"} <= units
    graph: dict[str, set[str]] = {u: set() for u in units}
    for f in CORE.rglob("*.py"):
        module = ".".join(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        src = _core_unit(module)
        if src not in units:
            continue
        for m in _imported_modules(f):
            dst = _core_unit(m)
            if dst in units and dst != src:
                graph[src].add(dst)
    assert "core.algorithm_aware" not in graph["core.anonymize"]
    assert "core.anonymize" in graph["core.algorithm_aware"]  # the test can see an edge
    state: dict[str, int] = {}

    def cycle_from(u: str, path: list[str]) -> list[str] | None:
        state[u] = 1
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                return [*path, u, v]
            if v not in state and (found := cycle_from(v, [*path, u])):
                return found
        state[u] = 2
        return None

    cycles = [c for u in sorted(units) if u not in state and (c := cycle_from(u, []))]
    assert cycles == []


def test_the_cycle_check_sees_function_level_imports() -> None:
    """``_imported_modules`` reads imports inside functions too (the cycle test relies on
    it): the lattice mode imports the anonymizer's lattice at module level, the check step
    imports the registry inside ``CheckStep.measure``."""
    inner = _imported_modules(PACKAGE / "gate" / "steps" / "check.py")
    assert "airflow_privacy.core.criteria.registry" in inner


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph() -> dict[str, set[str]]:
    """Which of the package's modules each module imports: imports inside functions
    included, ``if TYPE_CHECKING:`` imports left out (they never run); ``from pkg import
    mod`` is an import of ``pkg.mod``; importing one's own parent package is not counted
    (it is always initialized first)."""
    files = {_module_name(f): f for f in PACKAGE.rglob("*.py")}

    def owner(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in files}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        skipped = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]  # fmt: skip
            for t in targets:
                dst = owner(t)
                if dst and dst != module and not module.startswith(dst + "."):
                    graph[module].add(dst)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_two_modules_of_the_package_import_each_other() -> None:
    """No import cycle between modules anywhere in the package, function-level imports
    included: a function-level import may defer loading an engine (start-up time), never
    hide that two modules depend on each other."""
    graph = _module_graph()
    assert len(graph) > 200
    # the graph sees function-level imports, and a module importing its package is no edge
    assert "airflow_privacy.core.criteria.registry" in graph["airflow_privacy.gate.steps.check"]
    assert "airflow_privacy.report" not in graph["airflow_privacy.report.build"]
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert _cycles(graph) == [["a", "b", "c"]]
