"""``airflow-privacy risk``: the re-identification risk of a release (prosecutor, journalist,
marketer; population uniqueness; SUDA2), every number explained in one sentence.

An analysis without a verdict: exit 0 when measured, 2 = bad input. Recorded under an
attempt (``--attempt``), a result without a verdict blocks the gate like a check that did
not pass (docs/design.md). The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.risk.RiskStep`); this module adds the terminal view.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import context, emit
from airflow_privacy.cli.report_option import report_after, report_target
from airflow_privacy.gate.steps.risk import RISK

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = RISK.name


def register(sub: Any) -> None:
    steps.register(sub, RISK)


def run(args: argparse.Namespace, out: TextIO) -> int:
    target = report_target(args)
    ctx = context(args)
    req = RISK.request(steps.values(RISK, args))
    if target is not None:
        from airflow_privacy.errors import InputError
        from airflow_privacy.gate.attempts import has_manifest

        if not has_manifest(req.release, ctx):
            raise InputError(
                f"--report needs the manifest beside {req.release.describe()} (it names the "
                "sensitive column the report shows); without one, write the envelope with "
                "--format json and run: airflow-privacy report RELEASE --check FILE "
                "--sensitive COL --group COL ..."
            )
    env = RISK.run(req, ctx)
    report_after(args, env, ctx, target)
    return emit(env, args, out, render)


def _fold(text: str, width: int = 88, indent: int = 4) -> str:
    """A sentence folded for the terminal, never inside a word ("re-identify" stays whole)."""
    import textwrap

    lines = textwrap.wrap(
        text, width=width - indent, break_long_words=False, break_on_hyphens=False
    )
    return ("\n" + " " * indent).join(lines or [""])


def render(env: Envelope) -> str:
    """The measures and their sentences, as a person reads them in a terminal."""
    if env.outcome == "already-published":
        return f"risk: {env.summary}\n"
    d = env.details
    rel = env.release
    lines = [
        f"risk of {rel.ref if rel else '?'} ({int(d.get('records') or 0):,} records in "
        f"{int(d.get('groups') or 0):,} groups on {', '.join(d.get('qis') or [])}); "
        "no verdict",
    ]
    for m in d.get("measures") or []:
        value = m.get("value")
        if isinstance(value, float):
            shown = f"{value:.4g}"
        elif value is None:
            shown = "-"
        else:
            shown = str(value)
        lines.append(f"  {m.get('label')}: {shown}")
        lines.append(f"    {_fold(str(m.get('explanation') or ''))}")
    for name, path in env.outputs.items():
        lines.append(f"  wrote {name}: {path}")
    return "\n".join(lines) + "\n"
