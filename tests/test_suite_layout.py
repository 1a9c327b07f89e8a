"""The suite's own layout: tests mirror the package, and what several test modules share lives
in helper modules (strategies, oracles, cases, fixtures in a conftest), never imported from
another test module (importing one runs its module-level code and collects nothing, and a
change to one test file silently changes others)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _imports_of_test_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "tests" and any(p.startswith("test_") for p in parts[1:]):
                found.append(name)
    return found


def test_no_test_module_imports_another() -> None:
    modules = sorted(TESTS.rglob("test_*.py"))
    assert len(modules) > 100
    offenders = {
        str(p.relative_to(TESTS)): names for p in modules if (names := _imports_of_test_modules(p))
    }
    assert offenders == {}


def test_the_check_sees_such_an_import(tmp_path: Path) -> None:
    bad = tmp_path / "test_x.py"
    bad.write_text("def f():\n    from tests.core.test_counting import something\n")
    assert _imports_of_test_modules(bad) == [
        "tests.core.test_counting",
        "tests.core.test_counting.something",
    ]
