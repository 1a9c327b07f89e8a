"""``airflow-privacy attempt``: open an attempt to publish a release (the first step of a
gated release; ``OpenAttemptOperator`` in Airflow).

Derived from the step's declaration (:class:`airflow_privacy.gate.steps.attempt.AttemptStep`).
Prints the attempt's UUID:
record checks under it (``check/maxent/audit --attempt UUID``), then ask the gate
(``airflow-privacy publish --attempt UUID``). Exit 0 = opened (or the content is already
published: said so), 2 = bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import context, emit
from airflow_privacy.gate.steps.attempt import ATTEMPT

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = ATTEMPT.name


def add_release_file_args(p: argparse.ArgumentParser, what: str = "the release") -> None:
    """--sensitive, --qi, --kind, --bucket, --manifest (default: from the manifest beside
    it), as the steps that read a candidate declare them
    (:func:`airflow_privacy.gate.steps.candidate.candidate_fields`)."""
    from airflow_privacy.gate.steps.candidate import candidate_fields

    for f in candidate_fields(what):
        steps.add_field(p, f)


def register(sub: Any) -> None:
    steps.register(sub, ATTEMPT)


def run(args: argparse.Namespace, out: TextIO) -> int:
    env = ATTEMPT.run(ATTEMPT.request(steps.values(ATTEMPT, args)), context(args))
    return emit(env, args, out, render, 0)


def render(env: Envelope) -> str:
    a = env.attempt
    assert a is not None
    if env.outcome == "already-published":
        return f"attempt {a.uuid}: {env.summary}\n"
    return (
        f"attempt {a.uuid} opened: {a.dataset} v{a.version} (release #{a.release_id}, "
        f"{a.release_uuid})\n  required: {', '.join(env.details['required'])}\n"
        f"  next:     record each check with --attempt {a.uuid}, then "
        f"`airflow-privacy publish --attempt {a.uuid} --to DIR RELEASE`\n"
    )
