"""``airflow-privacy record-check``: record the verdict of a check computed elsewhere (a Great
Expectations suite, a test of your own) as a check of an attempt, like any other check.

Derived from the step's declaration
(:class:`airflow_privacy.gate.steps.custom.CustomCheckStep`; in a DAG the same is
:func:`airflow_privacy.providers.airflow.record_check`). Exit 0 = recorded as passed,
1 = recorded as failed (the gate will block the attempt, naming the check), 2 = bad input,
4 = the ledger is unavailable, 5 = the attempt is decided already.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import EXIT_SAFE, EXIT_UNSAFE, context, emit
from airflow_privacy.gate.steps.custom import CUSTOM

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = CUSTOM.command[0]


def register(sub: Any) -> None:
    steps.register(sub, CUSTOM, name=NAME)


def run(args: argparse.Namespace, out: TextIO) -> int:
    env = CUSTOM.run(CUSTOM.request(steps.values(CUSTOM, args)), context(args))
    return emit(env, args, out, render, EXIT_SAFE if env.safe is not False else EXIT_UNSAFE)


def render(env: Envelope) -> str:
    lines = [f"{env.outcome.upper()}: {env.name}: {env.summary}"]
    lines += [f"  reason: {r}" for r in env.reasons]
    if env.attempt is not None:
        lines.append(f"  recorded under attempt {env.attempt.uuid}")
    return "\n".join(lines) + "\n"
