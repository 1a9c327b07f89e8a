"""Criteria as one class each (core/criteria/base.py, models/): what is generated from the
classes (the registry, the CLI flags, the grammar, the README's table), the plug-in entry
point (the example of docs/criteria.md, installed through a real ``*.dist-info``), and the
rule that no code outside the classes compares criterion names."""

from __future__ import annotations

import argparse
import ast
import io
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from airflow_privacy.cli import main
from airflow_privacy.cli.common import add_criterion_flags, criteria_with_shorthand
from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.criteria import registry, table
from airflow_privacy.core.criteria.base import Criterion, Kind, Parameter, parse_points
from airflow_privacy.core.criteria.models import BUILT_IN
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from airflow_privacy.gate.criteria import parse_criteria, parse_spec

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "airflow_privacy"
DOC = ROOT / "docs" / "criteria.md"


# ------------------------------------------------------------------ generated pieces
def test_the_check_page_table_is_the_generated_one() -> None:
    readme = (ROOT / table.PAGE).read_text(encoding="utf-8")
    assert table.START in readme and table.END in readme
    assert table.with_table(readme, BUILT_IN) == readme, (
        f"{table.PAGE}'s criteria table is out of date: "
        "python -m airflow_privacy.core.criteria.table"
    )
    for cls in BUILT_IN:
        assert f"| `{cls.name}` |" in readme


def test_the_table_command_checks_and_rewrites(tmp_path: Path) -> None:
    stale = tmp_path / "README.md"
    stale.write_text(f"intro\n{table.START}\n| old |\n{table.END}\nrest\n", encoding="utf-8")
    assert table.main([str(stale), "--check"]) == 1
    assert "| old |" in stale.read_text(encoding="utf-8")
    assert table.main([str(stale)]) == 0
    text = stale.read_text(encoding="utf-8")
    assert text.startswith("intro\n") and text.endswith(f"{table.END}\nrest\n")
    assert table.main([str(stale), "--check"]) == 0
    assert text.count("\n| `") == len(BUILT_IN) + 1  # header and one row per criterion


def test_the_registry_is_the_built_in_classes_in_order() -> None:
    assert list(registry.CRITERIA)[: len(BUILT_IN)] == [cls.name for cls in BUILT_IN]
    for cls in BUILT_IN:
        assert registry.lookup(cls.name) is cls
        assert cls.summary and cls.reference and cls.parameters
        assert cls.monotonicity.reference


def _flags(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.option_strings[0]: a for a in parser._actions if a.option_strings}


def test_the_cli_flags_are_generated_from_the_parameters() -> None:
    p = argparse.ArgumentParser()
    add_criterion_flags(p)
    flags = _flags(p)
    options = {
        param.option for cls in BUILT_IN for param in cls.parameters
    }  # k, l, c, t, ordered, point
    assert set(flags) - {"-h"} == {f"--{o}" for o in options}
    assert {"--k", "--l", "--c", "--t", "--ordered", "--point"} <= set(flags)
    # the types: --k whole everywhere, --l a real number for some criterion, so real
    assert p.parse_args(["--k", "3", "--l", "2"]).k == 3
    assert isinstance(p.parse_args(["--l", "2"]).l, float)
    assert p.parse_args(["--point", "1,1,1,0.9", "--point", "0,0,1,0.5"]).points == [
        "1,1,1,0.9",
        "0,0,1,0.5",
    ]
    assert p.parse_args(["--ordered", "false"]).ordered is False
    # the help names the criteria that use each flag
    help_k = flags["--k"].help or ""
    for name in ("k-anonymity", "ck-safety", "negation-safety"):
        assert name in help_k
    assert "skyline" in (flags["--point"].help or "")


def test_the_flags_are_the_parameters_of_a_bare_criterion() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--criterion", action="append", dest="criteria")
    add_criterion_flags(p)
    args = p.parse_args(["--criterion", "skyline", "--point", "1,1,1,0.9"])
    assert criteria_with_shorthand(args) == [("skyline", {"points": ["1,1,1,0.9"]})]
    args = p.parse_args(["--criterion", "a", "--criterion", "b", "--point", "1,1,1,0.9"])
    with pytest.raises(InputError, match=r"^--point apply to a single --criterion"):
        criteria_with_shorthand(args)


# ---------------------------------------------------------------------- the grammar
def test_values_are_read_by_the_declared_kind() -> None:
    assert parse_spec("skyline:points=1,2,2,0.9;0,1,0,0.5") == (
        "skyline",
        {"points": ["1,2,2,0.9", "0,1,0,0.5"]},
    )
    assert parse_spec("t-closeness:t=0.2,ordered=false") == (
        "t-closeness",
        {"t": 0.2, "ordered": False},
    )
    assert parse_spec("recursive-cl-diversity:c=3,l=2") == (
        "recursive-cl-diversity",
        {"c": 3, "l": 2},
    )
    # a points parameter given to a criterion that does not take it is named
    name, params = parse_spec("k-anonymity:points=1,2,3,0.5")
    assert params == {"points": ["1,2,3,0.5"]}
    with pytest.raises(InputError, match=r"^point does not apply to criterion k-anonymity$"):
        registry.validate(name, {"k": 2, **params})
    with pytest.raises(InputError, match="unknown criterion 'nope'"):
        parse_criteria(["nope:points=1,2,3,0.5"])


def test_one_parser_of_a_skyline_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """The grammar, the registry and ``--point`` all reach ``parse_points`` (the kind of
    the ``points`` parameter), which alone reads ``l,k,m,c``."""
    assert parse_points("skyline", ["1,2,3,0.5", (0, 0, 1, 1)]) == [(1, 2, 3, 0.5), (0, 0, 1, 1.0)]
    with pytest.raises(InputError, match=r"^skyline: point '1,2,x,0.9': m must be a whole"):
        registry.validate("skyline", {"points": ["1,2,x,0.9"]})
    # bounded before any work: 10,000 points took 18.8 s in check, 32 s in anonymize
    many = [f"{i % 10},{i // 10 % 10},{i // 100},0.9" for i in range(1_001)]
    with pytest.raises(InputError, match=r"^skyline: 1,001 points, at most 1,000"):
        registry.validate("skyline", {"points": many})
    assert len(parse_points("skyline", many[:1_000])) == 1_000
    seen: list[Any] = []

    def spy(criterion: str, points: Any) -> list[tuple[int, int, int, float]]:
        seen.append(points)
        return [(0, 0, 0, 0.5)]

    from airflow_privacy.core.criteria import base

    monkeypatch.setattr(base, "parse_points", spy)
    assert parse_criteria(["skyline:points=1,2,2,0.9;0,1,0,0.5"]) == [
        ("skyline", {"points": [(0, 0, 0, 0.5)]})
    ]
    assert seen[0] == ["1,2,2,0.9", "0,1,0,0.5"]


def test_validation_happens_once_when_the_criterion_is_built() -> None:
    c = registry.create("ck-safety", {"c": 0.7, "k": 3.0, "unused": None})
    assert c.params == {"c": 0.7, "k": 3} and isinstance(c.params["k"], int)
    assert c.label == "ck-safety (c=0.7, k=3)"
    assert registry.create("recursive-cl-diversity", {"c": 2, "l": 2.0}).params["l"] == 2.0
    with pytest.raises(InputError, match=r"^t-closeness: ordered must be true or false, got 1$"):
        registry.create("t-closeness", {"t": 0.2, "ordered": 1})
    with pytest.raises(InputError, match=r"^unknown criterion 'x' \(known: k-anonymity, "):
        registry.create("x", {})


def test_parameter_declarations_describe_their_range() -> None:
    c = Parameter("c", Kind.REAL, "h", low=0, high=1, open_low=True)
    assert c.range_text() == "in (0, 1]"
    with pytest.raises(InputError, match=r"^z: c must be in \(0, 1\], got 0$"):
        c.check("z", 0)
    assert c.check("z", 1) == 1
    w = Parameter("n", Kind.WHOLE, "h", low=2, at_most=5)
    assert w.check("z", 4.0) == 4
    with pytest.raises(InputError, match=r"^z: n must be at most 5, got 6$"):
        w.check("z", 6)
    choice = Parameter("how", Kind.CHOICE, "h", choices=("a", "b"))
    assert choice.from_text("b") == "b" and choice.stand_in() == "a"
    with pytest.raises(InputError, match=r"^z: how must be one of a, b, got 'c'$"):
        choice.check("z", "c")


# --------------------------------------------------------------- no name comparisons
ENGINES = {"classic.py", "worst_case.py", "skyline.py"}


def _compares_a_criterion_name(path: Path, names: set[str]) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        consts: list[Any] = []
        for op in operands:
            if isinstance(op, ast.Constant):
                consts.append(op.value)
            elif isinstance(op, ast.Tuple | ast.List | ast.Set):
                consts += [e.value for e in op.elts if isinstance(e, ast.Constant)]
        if any(isinstance(v, str) and v in names for v in consts):
            lines.append(node.lineno)
    return lines


def test_no_code_compares_criterion_names() -> None:
    """Facts about a criterion live in its class: nothing else in the package asks
    ``name == "ck-safety"`` (the engines name their results, the classes are the facts)."""
    names = {cls.name for cls in BUILT_IN}
    offenders = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        rel = f.relative_to(PACKAGE)
        if rel.parts[:3] == ("core", "criteria", "models"):
            continue
        if rel.parts[:2] == ("core", "criteria") and f.name in ENGINES:
            continue
        if lines := _compares_a_criterion_name(f, names):
            offenders[str(rel)] = lines
    assert offenders == {}


def test_the_name_check_finds_a_comparison(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text('def f(c):\n    return c.name == "ck-safety" or c.name in ("skyline",)\n')
    assert _compares_a_criterion_name(probe, {"ck-safety", "skyline"}) == [2, 2]


# ----------------------------------------------------------------------- plug-ins
def _example_code() -> str:
    """The plug-in of docs/criteria.md, as the page shows it."""
    text = DOC.read_text(encoding="utf-8")
    blocks: list[str] = re.findall(r"```python\n(# my_criteria\.py\n.*?)```", text, flags=re.S)
    assert len(blocks) == 1
    entry = re.findall(r'```toml\n\[project\.entry-points\."airflow_privacy\.criteria"\]\n'
                       r'(.*?)\n```', text, flags=re.S)  # fmt: skip
    assert entry == ['alpha-deassociation = "my_criteria:AlphaDeassociation"']
    return blocks[0]


def _install(root: Path, dist: str, module: str, code: str, entries: dict[str, str]) -> None:
    (root / f"{module}.py").write_text(code, encoding="utf-8")
    info = root / f"{dist}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(f"[airflow_privacy.criteria]\n{lines}")


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` whose ``*.dist-info`` folders are installed plug-ins."""
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.forget_plugins()
    yield tmp_path
    registry.forget_plugins()


def _alpha(rows: list[list[int]]) -> Fraction:
    return max(Fraction(max(r), sum(r)) for r in rows)


def test_the_documented_plugin_runs_through_check_and_the_anonymizer(
    plugins: Path, tmp_path: Path
) -> None:
    _install(plugins, "my-criteria", "my_criteria", _example_code(),
             {"alpha-deassociation": "my_criteria:AlphaDeassociation"})  # fmt: skip
    assert "alpha-deassociation" not in registry.CRITERIA  # loaded lazily
    release = tmp_path / "r.csv"
    # group a: x x y (2/3), group b: x y z w (1/4)
    rows = [("a", "x"), ("a", "x"), ("a", "y"), ("b", "x"), ("b", "y"), ("b", "z"), ("b", "w")]
    release.write_text("g,s\n" + "".join(f"{g},{s}\n" for g, s in rows))
    argv = ["check", str(release), "--sensitive", "s", "--group", "g", "--quiet"]
    out = io.StringIO()
    assert main([*argv, "--criterion", "alpha-deassociation:alpha=0.7"], out) == 0
    assert "alpha-deassociation (alpha=0.7): SAFE" in out.getvalue()
    out = io.StringIO()
    assert main([*argv, "--criterion", "alpha-deassociation:alpha=0.5"], out) == 1
    text = out.getvalue()
    assert "alpha-deassociation (alpha=0.5): UNSAFE" in text
    assert f"{float(_alpha([[2, 1], [1, 1, 1, 1]])):.6g}" in text  # value 2/3, from counts
    assert "'x'" not in text and "'y'" not in text  # the witness names groups, not values
    err = io.StringIO()
    assert main([*argv, "--criterion", "alpha-deassociation:alpha=2"], err) == 2

    # the anonymizer: not monotone, not local, checked whole at every node
    t = pa.table({"a": ["1", "2", "3", "4"] * 3, "s": ["u", "v", "w"] * 4})
    res = anonymize(t, ["a"], "s", "lattice", [("alpha-deassociation", {"alpha": 0.5})])
    assert res.manifest.details["search"]["pruning"] == {"alpha-deassociation (alpha=0.5)": False}
    assert res.manifest.details["search"]["inferred_pass"] == 0
    counts = Bucketization.from_arrow(res.release, _spec(res.group_columns)).counts
    assert _alpha(counts.tolist()) <= Fraction(1, 2)
    res = anonymize(t, ["a"], "s", "mondrian", [("alpha-deassociation", {"alpha": 0.5})])
    assert res.manifest.criteria_results[0].safe
    assert registry.names()[-1] == "alpha-deassociation"


def _spec(groups: tuple[str, ...]) -> Any:
    from airflow_privacy.core.model import ReleaseSpec

    return ReleaseSpec(sensitive="s", group_columns=tuple(groups))


BAD_PLUGINS = {
    "does-not-load": ("import no_such_module_anywhere\n", "does not load: ModuleNotFoundError"),
    "not-a-class": ("NotACriterion = 3\n", "is not a Criterion subclass"),
}


@pytest.mark.parametrize("which", sorted(BAD_PLUGINS))
def test_a_broken_plugin_is_bad_input_naming_the_entry_point(plugins: Path, which: str) -> None:
    code, message = BAD_PLUGINS[which]
    target = "NotACriterion" if which == "not-a-class" else "Anything"
    _install(plugins, "bad", "bad_plugin", code, {which: f"bad_plugin:{target}"})
    with pytest.raises(InputError) as info:
        registry.validate(which, {})
    text = str(info.value)
    assert f"criterion plug-in {which!r} (bad_plugin:{target}" in text and message in text


_ANOTHER = """
from airflow_privacy.core.criteria.base import Criterion
from airflow_privacy.core.criteria.result import CriterionResult


class Named(Criterion):
    name = "{name}"
    summary = "always passes"

    def evaluate(self, b):
        return CriterionResult(self.name, True, {{}}, 0.0, "passes")
"""


def test_a_plugin_cannot_shadow_a_built_in(plugins: Path) -> None:
    _install(plugins, "shadow", "shadow", _ANOTHER.format(name="k-anonymity"),
             {"k-anonymity": "shadow:Named"})  # fmt: skip
    assert registry.lookup("k-anonymity") is BUILT_IN[0]  # built-ins never consult plug-ins
    with pytest.raises(InputError, match=r"'k-anonymity' .*takes the name of a built-in"):
        registry.names()


def test_an_entry_point_is_named_after_its_criterion(plugins: Path) -> None:
    _install(plugins, "wrong", "wrong_name", _ANOTHER.format(name="other"),
             {"not-other": "wrong_name:Named"})  # fmt: skip
    with pytest.raises(InputError, match="defines criterion 'other'"):
        registry.validate("not-other", {})


def test_two_plugins_of_one_name_are_refused(plugins: Path) -> None:
    code = _ANOTHER.format(name="twice")
    _install(plugins, "one", "one_mod", code, {"twice": "one_mod:Named"})
    _install(plugins, "two", "two_mod", code, {"twice": "two_mod:Named"})
    with pytest.raises(InputError, match="registered by 2 plug-ins"):
        registry.validate("twice", {})


def test_a_plugin_without_declarations_is_neither_monotone_nor_local(plugins: Path) -> None:
    _install(plugins, "plain", "plain", _ANOTHER.format(name="plain"), {"plain": "plain:Named"})
    cls = registry.lookup("plain")
    assert issubclass(cls, Criterion)
    c = cls({})
    assert not c.monotonicity.merge and not c.monotonicity.local
    assert (
        c.group_test(("x",)) is None
        and not c.posterior_form
        and c.cost == max(b.cost for b in BUILT_IN)
    )


def test_building_the_parser_does_not_scan_entry_points() -> None:
    from airflow_privacy.cli import build_parser

    registry.forget_plugins()
    build_parser()
    registry.validate("ck-safety", {"c": 0.5, "k": 1})
    assert registry._scanned is False
