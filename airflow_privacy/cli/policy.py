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
    add_ledger_arg,
    add_output_args,
    context,
    emit,
)
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

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
    from airflow_privacy.gate.steps.policy import POLICY

    steps.register(actions, POLICY, name="set")

    show = actions.add_parser("show", help="the policy in force and its history")
    show.add_argument("--dataset", required=True, help="the dataset")
    add_ledger_arg(show)
    add_output_args(show)

    for action, words in (("approve", "approve (it takes effect)"), ("reject", "reject")):
        d = actions.add_parser(action, help=f"{words} a proposed version: a second person")
        d.add_argument("--dataset", required=True, help="the dataset")
        d.add_argument("--version", required=True, type=int, help="the proposed version")
        d.add_argument("--by", metavar="NAME", help="who decides (default: your user name)")
        d.add_argument("--reason", required=True, help="why (kept with the version)")
        add_ledger_arg(d)
        add_output_args(d)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate import policy as service

    ctx = context(args)
    action = args.policy_command
    if action == "set":
        from airflow_privacy.cli import steps
        from airflow_privacy.gate.steps.policy import POLICY

        env = POLICY.run(POLICY.request(steps.values(POLICY, args)), ctx)
    elif action == "show":
        env = service.show_policy(args.dataset, ctx, args.ledger)
    elif action in ("approve", "reject"):
        env = service.decide_policy(
            args.dataset, args.version, approve=action == "approve", by=args.by,
            reason=args.reason, ctx=ctx, ledger=args.ledger,
        )  # fmt: skip
    else:  # pragma: no cover - argparse
        raise InputError(f"unknown policy action {action!r}")
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
