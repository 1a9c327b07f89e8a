"""Every declared step (airflow_privacy.gate.steps) and what is derived from it agree: the
command line's options, the operator's signature and template fields, the error wording of
each front end and the generated tables of the docs. A declaration that changes without its
derivations (or a hand edit of a derived piece) fails here."""

from __future__ import annotations

import argparse
import importlib
import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.errors import opt, render
from airflow_privacy.gate.steps import STEPS
from airflow_privacy.gate.steps.base import Step

ROOT = Path(__file__).resolve().parents[3]
DECLARED = sorted(STEPS)
WITH_OPERATOR = sorted(n for n, s in STEPS.items() if s.operator is not None)


def _subparser(name: str) -> argparse.ArgumentParser:
    """The parser of the step's command (``policy set`` for the policy step)."""
    from airflow_privacy.cli import build_parser

    found: argparse.ArgumentParser = build_parser()
    for word in STEPS[name].command or (name,):
        sub = next(a for a in found._actions if isinstance(a, argparse._SubParsersAction))
        found = sub.choices[word]
    return found


def _operator(step: Step) -> Any:
    assert step.operator is not None
    module, _, cls = step.operator.rpartition(".")
    return getattr(importlib.import_module(module), cls)


@pytest.mark.parametrize("name", DECLARED)
def test_every_field_is_an_option_of_the_command(name: str) -> None:
    step = STEPS[name]
    actions = {a.dest: a for a in _subparser(name)._actions}
    for f in step.fields:
        if f.flag is None:
            continue
        action = actions[f.attr]
        if f.positional:
            assert action.metavar == f.flag and not action.option_strings
            assert (action.nargs == "?") is (not f.required), f.key
            continue
        assert f.flag in action.option_strings, (f.key, action.option_strings)
        assert action.required is f.required, f.key
        if f.kind == "choice":
            assert tuple(action.choices or ()) == f.choices and action.default == f.default
        assert f.help.split(" (")[0][:40] in (action.help or ""), f.key


@pytest.mark.parametrize("name", WITH_OPERATOR)
def test_the_operator_signature_is_the_declaration(name: str) -> None:
    """The explicit keyword signature (kept for IDEs) has every declared argument with the
    declared default, and the template fields are the declared templated ones."""
    step = STEPS[name]
    cls = _operator(step)
    params: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:  # a subclass's own arguments, then its base's (**kwargs)
        own = inspect.signature(klass.__init__).parameters
        params.update({k: v for k, v in own.items() if k not in params})
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in own.values()):
            break
        if klass.__name__ in ("PrivacyOperator", "LedgerOperator"):
            break
    templated = set(cls.template_fields)
    for f in step.fields:
        arg = f.argument
        if arg is None:
            continue
        names = [arg]
        if f.kind == "ref" and f.variants:
            names += [*f.variants, f.conn_arg, f.table_conn]
        for n in names:
            assert n in params, (cls.__name__, n)
            assert (n in templated) is f.templated, (cls.__name__, n)
        p = params[arg]
        if f.airflow_default is not None:
            assert p.default == f.airflow_default, (cls.__name__, arg)
        elif (f.required and not f.variants) or f.explicit or f.airflow_required:
            assert p.default is inspect.Parameter.empty, (cls.__name__, arg)
        else:
            want = f.default if f.default is not None else None
            assert p.default == want, (cls.__name__, arg, p.default, want)


@pytest.mark.parametrize("name", DECLARED)
def test_messages_name_a_field_as_each_front_end_spells_it(name: str) -> None:
    for f in STEPS[name].fields:
        if f.flag is not None:
            assert render(opt(f.key), "cli") == f.flag
        if f.argument is not None:
            assert render(opt(f.key), "airflow") == f.argument


def test_one_spelling_per_key_over_all_steps() -> None:
    """A key is spelled one way wherever a front end has it (None: that front end does not)."""
    seen: dict[tuple[str, int], str] = {}
    for step in STEPS.values():
        for f in step.fields:
            for side, spelled in enumerate((f.flag, f.argument)):
                if spelled is not None:
                    assert seen.setdefault((f.key, side), spelled) == spelled, (step.name, f.key)


def test_the_generated_tables_of_the_docs_are_current() -> None:
    """``python -m airflow_privacy.reference_docs --check`` (the tables are made from the
    declarations; a page edited by hand, or a declaration changed without
    ``python -m airflow_privacy.reference_docs``, fails)."""
    proc = subprocess.run(
        [sys.executable, "-m", "airflow_privacy.reference_docs", "--check"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_a_drifted_table_is_found(tmp_path: Path) -> None:
    """The drift check can fail: a page whose table lost a row is rewritten."""
    from airflow_privacy.reference_docs import generated, rewrite

    table = generated("cli", "check")
    page = f"x\n<!-- generated: cli check -->\n{table}<!-- end generated -->\n"
    assert rewrite(page) == page
    drifted = page.replace(table.splitlines()[3] + "\n", "")
    assert drifted != page and rewrite(drifted) == page


@pytest.mark.parametrize("name", DECLARED)
def test_every_step_has_both_tables_in_the_docs(name: str) -> None:
    from airflow_privacy.reference_docs import pages

    text = "".join(p.read_text("utf-8") for p in pages(ROOT))
    assert f"<!-- generated: cli {name} -->" in text
    if STEPS[name].operator is not None:
        assert f"<!-- generated: operator {name} -->" in text


def test_constants_the_parser_holds_equal_the_engines() -> None:
    """Declarations are imported when the command line builds its parser, without the
    engines: the bounds they copy equal the engines' own."""
    from airflow_privacy.core.anonymize.lattice import MAX_DISCLOSURE_LIMIT, MAX_LATTICE_CAP
    from airflow_privacy.core.criteria.registry import MAX_K_CURVE
    from airflow_privacy.gate.steps import anonymize, disclosure

    assert disclosure.MAX_K_CURVE == MAX_K_CURVE
    assert anonymize.MAX_NODES == MAX_LATTICE_CAP == MAX_DISCLOSURE_LIMIT
    # k-map's estimators: the declaration's spellings are the engine's, one to one
    from airflow_privacy.core.criteria import k_map
    from airflow_privacy.core.criteria.models import k_map as declared

    assert tuple(k_map.ESTIMATORS) == declared.ESTIMATORS
    assert tuple(k_map.ESTIMATORS.values()) == k_map.ENGINE_ESTIMATORS
