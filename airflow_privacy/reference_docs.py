"""The reference tables of ``docs/``, generated from the steps' declarations
(:mod:`airflow_privacy.gate.steps`) and the command line's parser.

A page holds a generated block between two markers::

    <!-- generated: cli check -->
    ...
    <!-- end generated -->

``usage NAME``: the synopsis of ``airflow-privacy NAME``, as its parser prints it; ``cli
NAME``: its options; ``operator NAME``: the arguments of the step's operator.
``python -m airflow_privacy.reference_docs`` rewrites every such block; ``--check`` exits 1
naming the pages that differ (the test suite and ``make docs`` run it, so a declaration and
its page cannot drift apart). This module sits above both front ends (it reads the CLI's
parser), so neither imports it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from airflow_privacy.gate.steps import STEPS
from airflow_privacy.gate.steps.base import Step
from airflow_privacy.gate.steps.fields import REF_VARIANTS, Field, variant_kind

BLOCK = re.compile(
    r"(<!-- generated: (usage|cli|operator) ([a-z-]+) -->\n)(.*?)(<!-- end generated -->)", re.S
)
#: the shared command-line option groups, as the docs name them
CLI_GROUPS = {
    "criterion-flags": "the parameter flags of a single `--criterion` (`--k`, `--l`, `--c`, "
    "`--t`, `--point`, ...: [criteria](../criteria.md))",
    "input": "`--input-format csv|parquet`, `--delimiter D`, `--conn URL` (the database of a "
    "`table:` reference)",
    "attempt": "`--attempt UUID` (record the result as a check of this attempt), `--name NAME` "
    "(the check's name in it), `--ledger URL`",
    "input-files": "`--input-format csv|parquet`, `--delimiter D` (the input is a file)",
    "ledger": "`--ledger URL` (default: `$AIRFLOW_PRIVACY_LEDGER_URL`, the connection "
    "`privacy_ledger_default`, else `$AIRFLOW_HOME/privacy_ledger.db`)",
    "report": "`--report FILE.html` (also write the HTML report of this check)",
    "output": "`--format text|json` (json: {json}), `--quiet` (no progress on stderr)",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _default(f: Field, front: str) -> str:
    if front == "operator" and f.airflow_default is not None:
        return f"`{f.airflow_default!r}`"
    if f.required:
        return "required"
    if f.kind == "flag" and front == "cli":
        return ("on" if f.default else "off") if f.negatable else "off"
    if f.explicit and front == "operator":
        return "required (`None` allowed)"
    if f.airflow_required and front == "operator":
        return "required"
    if f.default is None:
        return "`None`" if front == "operator" else "none"
    if isinstance(f.default, tuple) and not f.default:
        return "`()`" if front == "operator" else "none"
    return f"`{f.default!r}`" if front == "operator" else f"`{f.default}`"


def _value(f: Field) -> str:
    if f.kind == "choice":
        return " \\| ".join(f.choices)
    return f.metavar or {"columns": "COL", "column": "COL", "values": "VALUE"}.get(f.kind, "X")


def cli_table(step: Step) -> str:
    """The options of ``airflow-privacy STEP`` as a Markdown table."""
    rows = ["| option | default | meaning |", "| --- | --- | --- |"]
    for f in step.fields:
        if f.flag is None:
            continue
        if f.positional:
            usage = f"`{f.flag}`"
        elif f.kind == "flag":
            name = f.flag.removeprefix("--")
            usage = f"`--{name}` / `--no-{name}`" if f.negatable else f"`{f.flag}`"
        else:
            usage = f"`{f.flag} {_value(f)}`"
        meaning = f.help + (f"; {f.cli_note}" if f.cli_note else "")
        if f.repeated and not f.positional:
            meaning += " (repeat for several)"
        rows.append(f"| {usage} | {_default(f, 'cli')} | {_cell(meaning)} |")
    shared = [CLI_GROUPS[g].replace("{json}", step.json_output) for g in step.cli_groups]
    text = "\n".join(rows) + "\n"
    if shared:
        text += "\nAlso: " + "; ".join(shared) + ".\n"
    return text


def operator_table(step: Step) -> str:
    """The arguments of the step's operator as a Markdown table."""
    rows = [
        "| parameter | type | default | templated | meaning |",
        "| --- | --- | --- | --- | --- |",
    ]
    connections: set[str] = set()
    for f in step.fields:
        name = f.argument
        if name is None:
            continue
        templated = "yes" if f.templated else "no"
        meaning = f.help + (f"; {f.airflow_note}" if f.airflow_note else "")
        if f.kind == "ref" and f.variants:
            rows.append(f"| `{name}` | `str \\| None` | `None` | {templated} | {_cell(meaning)} |")
            tables = []
            for i, variant in enumerate(f.variants):
                kind = variant_kind(variant)
                what = (
                    f.variant_help[i]
                    if f.variant_help
                    else REF_VARIANTS[kind].replace("`conn_id`", f"`{f.table_conn}`")
                )
                rows.append(
                    f"| `{variant}` | `str \\| None` | `None` | yes | instead of `{name}`: "
                    f"{_cell(what)} |"
                )
                if kind == "sql_table":
                    tables.append(variant)
            for conn in dict.fromkeys((f.conn_arg, f.table_conn)):
                if conn in connections:
                    continue
                connections.add(conn)
                whose = [f"a URI `{name}`"] if conn == f.conn_arg else []
                whose += [f"`{t}` (which needs it)" for t in tables if conn == f.table_conn]
                rows.append(
                    f"| `{conn}` | `str \\| None` | `None` | yes | the connection of "
                    f"{' or of '.join(whose)} |"
                )
            continue
        if f.range_text():
            meaning += f" ({f.range_text()})"
        rows.append(
            f"| `{name}` | `{_cell(f.type_hint)}` | {_default(f, 'operator')} | {templated} "
            f"| {_cell(meaning)} |"
        )
    return "\n".join(rows) + "\n"


def usage(step: Step) -> str:
    """The synopsis of ``airflow-privacy STEP`` as its parser prints it (100 columns)."""
    import argparse

    from airflow_privacy.cli import build_parser

    command: argparse.ArgumentParser = build_parser()
    for word in step.command or (step.name,):  # ``policy set`` for the policy step
        sub = next(a for a in command._actions if isinstance(a, argparse._SubParsersAction))
        command = sub.choices[word]
    command.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=100)
    return "```\n" + command.format_usage().removeprefix("usage: ") + "```\n"


def generated(kind: str, name: str) -> str:
    step = STEPS[name]
    if kind == "usage":
        return usage(step)
    return cli_table(step) if kind == "cli" else operator_table(step)


def rewrite(text: str) -> str:
    """``text`` with every generated block made anew."""
    return BLOCK.sub(lambda m: m[1] + generated(m[2], m[3]) + m[5], text)


def pages(root: Path) -> list[Path]:
    return sorted(p for p in (root / "docs").rglob("*.md") if BLOCK.search(p.read_text("utf-8")))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    root = Path(__file__).resolve().parents[1]
    stale = []
    for page in pages(root):
        old = page.read_text("utf-8")
        new = rewrite(old)
        if new != old:
            stale.append(str(page.relative_to(root)))
            if not check:
                page.write_text(new, "utf-8")
    if check and stale:
        sys.stderr.write(
            "generated tables out of date (python -m airflow_privacy.reference_docs): "
            + ", ".join(stale)
            + "\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
