"""``airflow-privacy attempt``: open an attempt to publish a release (the first step of a
gated release; ``OpenAttemptOperator`` in Airflow).

An adapter over :func:`airflow_privacy.gate.attempts.open_attempt`. Prints the attempt's UUID:
record checks under it (``check/maxent/audit --attempt UUID``), then ask the gate
(``airflow-privacy publish --attempt UUID``). Exit 0 = opened (or the content is already
published: said so), 2 = bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    add_input_args,
    add_ledger_arg,
    add_output_args,
    context,
    emit,
    population_ref,
    ref,
)

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "attempt"


def add_release_file_args(p: argparse.ArgumentParser, what: str = "the release") -> None:
    """--sensitive, --qi, --kind, --bucket, --manifest (default: the manifest beside it)."""
    p.add_argument("--sensitive", metavar="COL",
                   help=f"the sensitive column of {what} (default: from its manifest)")  # fmt: skip
    p.add_argument(
        "--qi", action="append", dest="qis", metavar="COL",
        help=f"a quasi-identifier column of {what}; repeat (default: from its manifest)",
    )  # fmt: skip
    p.add_argument(
        "--kind", choices=("generalized", "bucketized", "microaggregated"),
        help="generalized: groups are the distinct QI labels (intervals, masks, hierarchy "
        "labels, *); bucketized: exact QIs plus a bucket id (Anatomy); microaggregated: QIs "
        "are group centroids (default: from the manifest's method, else generalized)",
    )  # fmt: skip
    p.add_argument("--bucket", metavar="COL", help="the bucket id column of a bucketized release")
    p.add_argument(
        "--manifest", metavar="FILE",
        help="the anonymizer's manifest (JSON; default: RELEASE.manifest.json when present)",
    )  # fmt: skip


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="open an attempt to publish a release (checks are recorded under it)",
        description="Record RELEASE's content in the ledger (once per dataset) and open an "
        "attempt to publish it that requires the named checks. Record the checks with "
        "check/maxent/audit --attempt UUID, then run `airflow-privacy publish --attempt "
        "UUID`: it publishes only if every check of this attempt passed. A dataset without a "
        "published release needs --first-release (a typo never starts a new history); "
        "content published before is not checked or published again.",
    )
    p.add_argument("release", metavar="RELEASE", help="the candidate release file")
    p.add_argument("--dataset", required=True, help="the dataset (the series of releases)")
    p.add_argument(
        "--require", action="append", required=True, dest="required", metavar="CHECK",
        help="a check that must pass before publishing, by its name (repeat)",
    )  # fmt: skip
    p.add_argument("--version", help="version label (default: the dataset's next number)")
    p.add_argument(
        "--first-release", action="store_true",
        help="declare this the dataset's first release: the ledger may be created, and the "
        "composition audit has nothing earlier to intersect with",
    )  # fmt: skip
    p.add_argument(
        "--population", metavar="FILE",
        help="the candidate's original records: with --id-column, the keyed hashes of its "
        "people are stored (needed for a later --overlap known)",
    )  # fmt: skip
    p.add_argument("--id-column", metavar="COL", help="the identifier column of --population")
    add_release_file_args(p)
    add_ledger_arg(p)
    add_input_args(p)  # a release file, or table:NAME on --conn (counted in its database)
    add_output_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.attempts import AttemptRequest, open_attempt
    from airflow_privacy.gate.refs import ReleaseRef

    env = open_attempt(
        AttemptRequest(
            release=ref(args.release, args),
            dataset=args.dataset,
            required=list(args.required),
            version=args.version,
            first_release=bool(args.first_release),
            population=population_ref(args),
            id_column=args.id_column,
            qis=args.qis,
            sensitive=args.sensitive,
            kind=args.kind,
            bucket=args.bucket,
            manifest=ReleaseRef(path=args.manifest) if args.manifest is not None else None,
            ledger=args.ledger,
            fmt=args.input_format,
            delimiter=args.delimiter,
        ),
        context(args),
    )
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
