"""``airflow-privacy publish``: the gate. Publish an attempt's release only if every check of
the attempt passed, as the ledger records it (``PublishReleaseOperator`` in Airflow).

Derived from the step's declaration
(:class:`airflow_privacy.gate.steps.publish.PublishStep`). Exit 0 = published (or
already published, said so), 1 = blocked (every reason listed; the ledger records them),
2 = bad input, 4 = the ledger is unavailable, 5 = the attempt cannot be decided any more.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import EXIT_UNSAFE, context, emit
from airflow_privacy.errors import ReleaseBlocked
from airflow_privacy.gate.steps.publish import PUBLISH

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = PUBLISH.name


def register(sub: Any) -> None:
    steps.register(sub, PUBLISH)


def run(args: argparse.Namespace, out: TextIO) -> int:
    try:
        env = PUBLISH.run(PUBLISH.request(steps.values(PUBLISH, args)), context(args))
    except ReleaseBlocked as exc:
        if exc.envelope is None:
            raise
        return emit(exc.envelope, args, out, render, EXIT_UNSAFE)  # type: ignore[arg-type]
    return emit(env, args, out, render, 0)


def render(env: Envelope) -> str:
    if env.outcome == "blocked":
        lines = [f"BLOCKED: {env.summary}"]
        lines += [f"  reason: {r}" for r in env.reasons]
        lines += [f"  the way forward ({a.get('check')}): {a.get('text')}" for a in env.advice]
        return "\n".join(lines) + "\n"
    if env.outcome == "already-published":
        return f"{env.summary}\n"
    return f"PUBLISHED: {env.summary}\n"
