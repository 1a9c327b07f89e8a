"""``airflow-privacy disclosure``: the maximum-disclosure curve for k = 0..K.

The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.disclosure.DisclosureStep`); ``--format json`` prints its
envelope (``details.curve``), the text view is the curve as a table."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import EXIT_SAFE, context, emit
from airflow_privacy.gate.steps.disclosure import DISCLOSURE

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = DISCLOSURE.name


def register(sub: Any) -> None:
    steps.register(sub, DISCLOSURE)


def run(args: argparse.Namespace, out: TextIO) -> int:
    env = DISCLOSURE.run(DISCLOSURE.request(steps.values(DISCLOSURE, args)), context(args))
    return emit(env, args, out, render, EXIT_SAFE)


def render(env: Envelope) -> str:
    rel = env.release
    assert rel is not None
    lines = [
        f"maximum disclosure of {rel.ref} ({rel.records:,} records, {rel.groups:,} groups)",
        "   k  implications  negations",
    ]
    curve = env.details["curve"]
    for p in curve:
        lines.append(f"{p['k']:4d}  {p['implications']:12.4f}  {p['negations']:9.4f}")
    lines.append(f"at k = {curve[-1]['k']}: {env.details['witness_text']}")
    return "\n".join(lines) + "\n"
