"""The table of criteria of ``docs/usage/check.md``, generated from the criterion classes.

``python -m airflow_privacy.core.criteria.table`` rewrites the table between the marker
comments of ``docs/usage/check.md`` (``--check``: exit 1 when it differs, changing nothing);
``tests/core/criteria/test_criteria_classes.py`` fails when the page's table is not the generated
one. The table lists the built-in criteria (name, parameters, what a passing release
guarantees, reference), in the order of
:data:`airflow_privacy.core.criteria.models.BUILT_IN`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from airflow_privacy.core.criteria.base import Criterion, Kind, Parameter

#: the page that holds the table
PAGE = "docs/usage/check.md"
START = "<!-- criteria-table:start (generated: python -m airflow_privacy.core.criteria.table) -->"
END = "<!-- criteria-table:end -->"


def parameter_text(p: Parameter) -> str:
    """One parameter in the table: ``k`` (whole, >= 1), ``c`` (in (0, 1]), ..."""
    if p.kind is Kind.POINTS:
        what = (
            f"`--{p.option} l,k,m,c`, repeat; `l`, `k`, `m` whole >= 0, `c` in (0, 1]; "
            f"`{p.name}=l,k,m,c;...` inline"
        )
    elif p.kind is Kind.WHOLE:
        what = f"whole, >= {p.low:g}" if p.low is not None else "whole"
        if p.at_most is not None:
            what += f", at most {p.at_most:,}"
    elif p.kind is Kind.REAL:
        what = p.range_text().removeprefix("a number ")
    elif p.kind is Kind.BOOLEAN:
        what = "`true`/`false`"
    elif p.kind is Kind.TEXT:
        what = "a value of the sensitive column"
    else:
        what = " / ".join(f"`{c}`" for c in p.choices)
    if not p.required:
        what += f"; default: {p.default}" if p.default else "; optional"
    return f"`{p.name}` ({what})"


def markdown_table(classes: Sequence[type[Criterion]]) -> str:
    """The table's lines (header included), one row per criterion."""
    rows = [
        "| `--criterion` | parameters | safe when | reference |",
        "| --- | --- | --- | --- |",
    ]
    for cls in classes:
        params = ", ".join(parameter_text(p) for p in cls.parameters) or "none"
        rows.append(f"| `{cls.name}` | {params} | {cls.summary} | {cls.reference} |")
    return "\n".join(rows) + "\n"


def with_table(readme: str, classes: Sequence[type[Criterion]]) -> str:
    """``readme`` with the text between the markers replaced by the generated table."""
    head, start, rest = readme.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"the page has no {START!r} ... {END!r} markers")
    return f"{head}{START}\n{markdown_table(classes)}{END}{tail}"


def main(argv: Sequence[str] | None = None) -> int:
    from airflow_privacy.core.criteria.models import BUILT_IN

    ap = argparse.ArgumentParser(prog="python -m airflow_privacy.core.criteria.table")
    ap.add_argument(
        "readme", nargs="?", default=PAGE, help=f"the page holding the table (default: {PAGE})"
    )
    ap.add_argument("--check", action="store_true", help="exit 1 if the table is out of date")
    args = ap.parse_args(argv)
    path = Path(args.readme)
    text = path.read_text(encoding="utf-8")
    new = with_table(text, BUILT_IN)
    if args.check:
        if new != text:
            sys.stderr.write(f"{path}: the criteria table is out of date\n")
            return 1
        return 0
    if new != text:
        path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
