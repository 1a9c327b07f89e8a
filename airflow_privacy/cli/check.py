"""``airflow-privacy check``: a release against one or more criteria (exit 0 safe, 1 unsafe).

The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.check.CheckStep`, the same as ``CheckSafetyOperator``'s
arguments); this module adds only how the envelope reads in a terminal."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import context, emit, wrap
from airflow_privacy.cli.report_option import report_after, report_target
from airflow_privacy.gate.steps.check import CHECK

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = CHECK.name


def register(sub: Any) -> None:
    steps.register(sub, CHECK)


def run(args: argparse.Namespace, out: TextIO) -> int:
    ctx = context(args)
    target = report_target(args)
    env = CHECK.run(CHECK.request(steps.values(CHECK, args)), ctx)
    report_after(args, env, ctx, target)
    return emit(env, args, out, render)


def render(env: Envelope) -> str:
    """A check's envelope as a few lines a person reads in a terminal."""
    if env.outcome == "already-published":
        return f"check: {env.summary}\n"
    rel = env.release
    where = f"{rel.ref} ({rel.records:,} records in {rel.groups:,} groups)" if rel else "?"
    from airflow_privacy.core.criteria.registry import known

    blocks = []
    for r in env.results:
        cls = known(str(r["criterion"]))
        own = cls.terminal_text(r, where, wrap) if cls is not None else None
        which = r.get("details", {}).get("which_attribute")
        tail = f"\n  which:   {wrap(str(which))}" if which else ""
        if own is not None:
            blocks.append(own + tail)
            continue
        params = ", ".join(
            f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in r["parameters"].items()
            if v is not None
        )
        verdict = "SAFE" if r["safe"] else "UNSAFE"
        value = r["value"]
        shown = f"{value:.6g}" if isinstance(value, int | float) else str(value)
        blocks.append(
            "\n".join(
                [
                    f"{r['criterion']} ({params}): {verdict}",
                    f"  release: {where}",
                    f"  value:   {shown}",
                    f"  why:     {wrap(r['reason'])}",
                ]
            )
            + tail
        )
    text = "\n".join(blocks) + "\n"
    for a in env.advice:
        text += f"  the way forward: {wrap(str(a.get('text')))}\n"
    if env.attempt is not None:
        text += f"  recorded: check {env.name!r} of attempt {env.attempt.uuid}\n"
    return text
