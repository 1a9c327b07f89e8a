"""``airflow-privacy maxent``: disclosure risk under probabilistic background knowledge
(Privacy-MaxEnt, Du et al. 2008).

Exit 0 = estimated (and, with ``--c``, the maximum posterior is below c), 1 = the maximum
posterior reaches ``--c``, 2 = bad input (including infeasible knowledge, with the
conflicting statements named on stderr). The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.maxent.MaxEntStep`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import context, emit, wrap
from airflow_privacy.cli.report_option import report_after, report_target
from airflow_privacy.gate.steps.maxent import MAXENT

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = MAXENT.name


def register(sub: Any) -> None:
    steps.register(sub, MAXENT)


def run(args: argparse.Namespace, out: TextIO) -> int:
    target = report_target(args)
    ctx = context(args)
    env = MAXENT.run(MAXENT.request(steps.values(MAXENT, args)), ctx)
    report_after(args, env, ctx, target)
    return emit(env, args, out, render)


def render(env: Envelope) -> str:
    """The estimate's envelope as a few lines a person reads in a terminal."""
    if env.outcome == "already-published":
        return f"maxent: {env.summary}\n"
    d = env.details
    rel = env.release
    v = env.results[0] if env.results else {}
    c = (v.get("parameters") or {}).get("c")
    lines = [
        f"maxent estimate of {rel.ref if rel else '?'} ({d.get('records', 0):,} records, "
        f"{d.get('buckets', 0):,} buckets, {d.get('values', 0)} sensitive values)",
        f"  knowledge: {d.get('knowledge_text') or 'none (published data only)'}",
    ]
    verdict = ""
    if c is not None:
        verdict = "  below c" if env.safe else "  BLOCKED"
    lines.append(f"  maximum posterior: {float(d.get('max_posterior') or 0.0):.4f}{verdict}")
    lines.append(f"  why:       {wrap(env.summary, indent=13)}")
    if d.get("accuracy") is not None:
        lines.append(
            f"  estimation accuracy: {float(d['accuracy']):.6f} nats (weighted KL; lower = the "
            "estimate is closer to the truth)"
        )
    top = [a for a in d.get("top_at_risk") or [] if a.get("kind", "qi") == "qi"]
    if top:
        lines.append("  most at risk:")
        for i, a in enumerate(top, 1):
            lines.append(f"  {i:3d}. {float(a['posterior']):.4f}  {a['value']}  {a['label']}  "
                         f"({a.get('records', 0)} record(s))")  # fmt: skip
    people = d.get("people") or []
    if people:
        highest = max((p["max_posterior"] for p in people if p.get("max_posterior") is not None),
                      default=None)  # fmt: skip
        shown = (f"; the largest posterior about one of them is {highest:.4f}"
                 if highest is not None else "")  # fmt: skip
        lines.append(f"  named people in the knowledge: {len(people)} (by pseudonym only{shown})")
    return "\n".join(lines) + "\n"
