"""``airflow-privacy publish``: the gate. Publish an attempt's release only if every check of
the attempt passed, as the ledger records it (``PublishReleaseOperator`` in Airflow).

An adapter over :func:`airflow_privacy.gate.attempts.publish`. Exit 0 = published (or
already published, said so), 1 = blocked (every reason listed; the ledger records them),
2 = bad input, 4 = the ledger is unavailable, 5 = the attempt cannot be decided any more.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_UNSAFE,
    add_ledger_arg,
    add_output_args,
    context,
    emit,
)
from airflow_privacy.errors import ReleaseBlocked

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "publish"


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="the gate: publish an attempt's release when every check passed",
        description="Read back every check recorded for the attempt and decide: publish "
        "(copy RELEASE and its manifest to --to, atomically, and mark the release published) "
        "only when every required check is recorded and passed and RELEASE is still the "
        "content that was checked; otherwise block the attempt with every reason. Without "
        "RELEASE and --to, only the ledger is updated. Exit 0 = published, 1 = blocked.",
    )
    p.add_argument("release", metavar="RELEASE", nargs="?",
                   help="the release file to publish, or table:NAME on --conn")  # fmt: skip
    p.add_argument("--attempt", required=True, metavar="UUID", help="the attempt to decide")
    p.add_argument("--to", metavar="DIR",
                   help="the folder (or URI prefix) to publish into; for table:NAME, the name "
                   "of the published table (created in the same database)")  # fmt: skip
    p.add_argument("--conn", default=None, metavar="URL",
                   help="database URL of a table:SCHEMA.NAME release")  # fmt: skip
    add_ledger_arg(p)
    add_output_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.attempts import PublishRequest, publish
    from airflow_privacy.gate.refs import ReleaseRef

    req = PublishRequest(
        attempt=args.attempt,
        release=ReleaseRef.parse(args.release, args.conn) if args.release is not None else None,
        destination=args.to,
        ledger=args.ledger,
    )
    try:
        env = publish(req, context(args))
    except ReleaseBlocked as exc:
        if exc.envelope is None:
            raise
        return emit(exc.envelope, args, out, render, EXIT_UNSAFE)  # type: ignore[arg-type]
    return emit(env, args, out, render, 0)


def render(env: Envelope) -> str:
    if env.outcome == "blocked":
        lines = [f"BLOCKED: {env.summary}"]
        lines += [f"  reason: {r}" for r in env.reasons]
        return "\n".join(lines) + "\n"
    if env.outcome == "already-published":
        return f"{env.summary}\n"
    return f"PUBLISHED: {env.summary}\n"
