"""``airflow-privacy policy``: what every release of a dataset must pass, kept in the ledger
(set, show, approve, reject). Adapters over :mod:`airflow_privacy.gate.policy`.

A new version that only keeps or tightens the policy is in force at once; one that loosens
anything is *proposed* and takes effect only when a second, different person approves it.
Exit 0 = recorded (or shown), 1 = proposed or rejected (not in force), 2 = bad input,
5 = the ledger's state forbids it (e.g. the proposer approving their own change).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    EXIT_UNSAFE,
    Parser,
    context,
    emit,
)

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.steps.base import Step

NAME = "policy"


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="a dataset's policy: what every release must pass (set, show, approve, reject)",
        description="The policy of a dataset lives in the ledger, owned by the organization: "
        "the criteria with their minimum parameters, the composition audit's limits and "
        "MaxEnt's, the benign values a check may declare, who approves changes. The gate "
        "blocks an attempt whose checks do not meet it, naming the line. A change that "
        "loosens anything waits for a second person.",
    )
    actions = p.add_subparsers(dest="policy_command", required=True, parser_class=Parser)

    from airflow_privacy.cli import steps

    for step in _steps():
        steps.register(actions, step, name=step.command[-1])


def _steps() -> tuple[Step, ...]:
    """``policy set``, ``show``, ``approve``, ``reject``, each derived from its step's
    declaration (:mod:`airflow_privacy.gate.steps.policy`, ``policy_decisions``)."""
    from airflow_privacy.gate.steps.policy import POLICY
    from airflow_privacy.gate.steps.policy_decisions import (
        POLICY_APPROVE,
        POLICY_REJECT,
        POLICY_SHOW,
    )

    return (POLICY, POLICY_SHOW, POLICY_APPROVE, POLICY_REJECT)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.cli import steps

    step = next(s for s in _steps() if s.command[-1] == args.policy_command)
    env = step.run(step.request(steps.values(step, args)), context(args))
    code = EXIT_UNSAFE if env.outcome in ("proposed", "rejected") else EXIT_SAFE
    return emit(env, args, out, render, code)


def render(env: Envelope) -> str:
    lines = [env.summary]
    lines += [f"  {line}" for line in env.details.get("lines") or []]
    for v in env.details.get("history") or []:
        by = f", decided by {v['decided_by']}" if v.get("decided_by") else ""
        lines.append(
            f"  v{v['version']} {v['status']}: {v['created_at']} by {v['created_by']}{by}: "
            f"{v['reason']}"
        )
    return "\n".join(lines) + "\n"
