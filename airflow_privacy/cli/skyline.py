"""``airflow-privacy skyline``: the privacy skyline of a release at a confidence ``c``.

The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.skyline.SkylineStep`); ``--format json`` prints its
envelope (``details.points``, ``details.staircase``, ...), the text view is the skyline as a
small table (like the slides' "Knowledge skyline" table).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import EXIT_SAFE, context, emit
from airflow_privacy.gate.steps.skyline import SKYLINE

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = SKYLINE.name


def register(sub: Any) -> None:
    steps.register(sub, SKYLINE)


def run(args: argparse.Namespace, out: TextIO) -> int:
    env = SKYLINE.run(SKYLINE.request(steps.values(SKYLINE, args)), context(args))
    return emit(env, args, out, render, EXIT_SAFE)


def render(env: Envelope) -> str:
    d = env.details
    rel = env.release
    assert rel is not None
    bounds = d["bounds"]
    lines = [
        f"privacy skyline of {rel.ref} ({rel.records:,} records in {rel.groups:,} groups) "
        f"at c = {d['c']:g}",
        f"  explored l <= {bounds['l']}, k <= {bounds['k']}, m <= {bounds['m']} "
        f"({d['evaluations']} breach evaluations)",
    ]
    if not d["points"]:
        lines.append("  nothing is safe: even without background knowledge the breach reaches c")
    else:
        lines.append("  safe for any knowledge on or beneath these points:")
        lines.append("     l    k    m    breach")
        for r in d["breaches"]:
            l, k, m = r["point"]  # noqa: E741
            lines.append(f"  {l:4d} {k:4d} {m:4d}  {r['breach']:8.4f}")
    beyond = d.get("beyond")
    if beyond is not None:
        l, k, m = beyond["point"]  # noqa: E741
        lines.append(f"  beyond it, at ({l}, {k}, {m}): {beyond['text']}")
    return "\n".join(lines) + "\n"
