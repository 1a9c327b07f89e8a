"""``airflow-privacy ledger``: what was published (list, show, import, mark-published,
mark-blocked). A thin layer over :class:`airflow_privacy.ledger.ReleaseLedger`."""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from airflow_privacy.cli.common import EXIT_SAFE, Parser, Progress, add_output_args, write_json
from airflow_privacy.core.composition.identifiers import DEFAULT_KEY_ENV
from airflow_privacy.errors import InputError

NAME = "ledger"
LEDGER_HELP = (
    "ledger database: a file path, sqlite:///PATH or postgresql+psycopg://USER:PASS@HOST/DB "
    "(default: $AIRFLOW_PRIVACY_LEDGER_URL, else ./airflow-privacy-ledger.db)"
)


def add_ledger_arg(p: argparse.ArgumentParser, required: bool = False, default: Any = None) -> None:
    p.add_argument("--ledger", metavar="URL", default=default, required=required, help=LEDGER_HELP)


def add_release_file_args(p: argparse.ArgumentParser, what: str = "the release") -> None:
    """--sensitive, --qi, --kind, --bucket, --manifest, --input-format, --delimiter."""
    p.add_argument(
        "--sensitive",
        metavar="COL",
        help=f"the sensitive column of {what} (default: from its manifest)",
    )
    p.add_argument(
        "--qi",
        action="append",
        dest="qis",
        metavar="COL",
        help=f"a quasi-identifier column of {what}; repeat for several (default: from its "
        "manifest)",
    )
    p.add_argument(
        "--kind",
        choices=("generalized", "bucketized", "microaggregated"),
        help="generalized: groups are the distinct QI labels (intervals, masks, hierarchy "
        "labels, *); bucketized: exact QIs plus a bucket id (Anatomy); microaggregated: QIs "
        "are group centroids (default: from the manifest's method, else generalized)",
    )
    p.add_argument("--bucket", metavar="COL", help="the bucket id column of a bucketized release")
    p.add_argument(
        "--manifest",
        metavar="FILE",
        help="the anonymizer's manifest (JSON; default: RELEASE.manifest.json when present)",
    )
    p.add_argument(
        "--input-format",
        choices=("csv", "parquet"),
        default=None,
        help="file format (default: from the extension)",
    )
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")


def open_ledger(url: str | None, create: bool, key_env: str = DEFAULT_KEY_ENV) -> Any:
    from airflow_privacy.ledger import ReleaseLedger

    return ReleaseLedger(url, create=create, key_env=key_env)


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="the release ledger: list, show, import, mark-published, mark-blocked",
        description="The release ledger remembers what was published (group descriptors and "
        "sensitive multisets, never raw records), so that new releases can be audited "
        "against it (airflow-privacy audit).",
    )
    actions = p.add_subparsers(dest="ledger_command", required=True, parser_class=Parser)

    ls = actions.add_parser("list", help="list the recorded releases, oldest first")
    add_ledger_arg(ls)
    ls.add_argument("--dataset", help="only releases of this dataset")
    ls.add_argument(
        "--status",
        choices=("candidate", "published", "blocked"),
        help="only releases with this status",
    )
    add_output_args(ls)

    show = actions.add_parser("show", help="one release: metadata, criteria, groups")
    show.add_argument("ref", metavar="RELEASE", help="release id (3) or DATASET@VERSION")
    add_ledger_arg(show)
    show.add_argument("--groups", action="store_true", help="also list every published group")
    add_output_args(show)

    imp = actions.add_parser(
        "import",
        help="record a release file in the ledger",
        description="Record a release file (CSV or Parquet) in the ledger: its groups and "
        "their sensitive multisets, spec, manifest and criteria results. Recording identical "
        "content again returns the existing release.",
    )
    imp.add_argument("release", metavar="RELEASE", help="release file (.csv[.gz] or .parquet)")
    imp.add_argument("--dataset", required=True, help="dataset name (the series of releases)")
    imp.add_argument("--version", help="version label (default: the next number)")
    imp.add_argument(
        "--status",
        choices=("candidate", "published"),
        default="candidate",
        help="record as a candidate (default) or as already published",
    )
    add_ledger_arg(imp)
    add_release_file_args(imp)
    imp.add_argument(
        "--identifiers",
        metavar="FILE",
        help="original records holding an identifier column (--id-column): its keyed hashes "
        "are stored so that the overlap with later releases is known exactly",
    )
    imp.add_argument("--id-column", metavar="COL", help="the identifier column of --identifiers")
    imp.add_argument(
        "--key-env",
        default=DEFAULT_KEY_ENV,
        metavar="NAME",
        help=f"environment variable holding the HMAC key of identifier hashes "
        f"(default: {DEFAULT_KEY_ENV})",
    )
    add_output_args(imp)

    pub = actions.add_parser("mark-published", help="candidate -> published")
    pub.add_argument("ref", metavar="RELEASE", help="release id (3) or DATASET@VERSION")
    add_ledger_arg(pub)
    add_output_args(pub)

    blk = actions.add_parser("mark-blocked", help="candidate -> blocked, with a reason")
    blk.add_argument("ref", metavar="RELEASE", help="release id (3) or DATASET@VERSION")
    blk.add_argument(
        "--reason", action="append", required=True, help="why it is blocked (repeat for several)"
    )
    add_ledger_arg(blk)
    add_output_args(blk)


def run(args: argparse.Namespace, out: TextIO) -> int:
    action = args.ledger_command
    progress = Progress(args.quiet)
    if action == "list":
        ledger = open_ledger(args.ledger, create=False)
        rows = ledger.list(dataset=args.dataset, status=args.status)
        if args.format == "json":
            write_json({"ledger": ledger.url, "releases": [_summary(r) for r in rows]}, out)
        else:
            _print_list(rows, ledger.url, out)
        return EXIT_SAFE
    if action == "show":
        ledger = open_ledger(args.ledger, create=False)
        info = ledger.resolve(args.ref)
        groups = ledger.release(info.id).group_records() if args.groups else None
        if args.format == "json":
            payload = info.to_dict()
            if groups is not None:
                payload["groups_published"] = groups
            write_json(payload, out)
        else:
            _print_show(info, groups, out)
        return EXIT_SAFE
    if action == "import":
        return _import(args, out, progress)
    if action == "mark-published":
        ledger = open_ledger(args.ledger, create=False)
        info = ledger.mark_published(ledger.resolve(args.ref).id)
        return _done(info, args, out)
    if action == "mark-blocked":
        ledger = open_ledger(args.ledger, create=False)
        info = ledger.mark_blocked(ledger.resolve(args.ref).id, args.reason)
        return _done(info, args, out)
    raise InputError(f"unknown ledger action {action!r}")  # pragma: no cover - argparse


def _import(args: argparse.Namespace, out: TextIO, progress: Progress) -> int:
    from airflow_privacy.core.composition.files import read_population_file, read_release_file

    if bool(args.identifiers) != bool(args.id_column):
        raise InputError("--identifiers FILE and --id-column COL go together")
    ledger = open_ledger(args.ledger, create=True, key_env=args.key_env)
    progress(f"reading {args.release}")
    rf = read_release_file(
        args.release,
        qis=args.qis,
        sensitive=args.sensitive,
        kind=args.kind,
        bucket=args.bucket,
        manifest=args.manifest,
        fmt=args.input_format,
        delimiter=args.delimiter,
    )
    rel = rf.release
    progress(f"{rel.n_records:,} records in {rel.n_groups:,} groups ({rel.kind})")
    hashes = None
    if args.identifiers:
        key = ledger.hash_key()
        pop = read_population_file(args.identifiers, (), id_column=args.id_column, hash_key=key)
        hashes = pop.id_hashes
        progress(f"hashed {len(set(hashes or ())):,} identifiers")
    criteria = (rf.manifest or {}).get("criteria_results")
    info = ledger.record(
        args.dataset,
        rel,
        version=args.version,
        status=args.status,
        spec=rf.spec(),
        manifest=rf.manifest,
        criteria=criteria if isinstance(criteria, list) else None,
        member_hashes=hashes,
    )
    progress("recorded" if info.created else "identical content was already recorded")
    return _done(info, args, out)


def _done(info: Any, args: argparse.Namespace, out: TextIO) -> int:
    if args.format == "json":
        write_json(_summary(info) | {"created": info.created}, out)
    else:
        verb = "recorded" if info.created else "is"
        if args.ledger_command != "import":
            verb = "is now"
        elif not info.created:
            verb = "already recorded as"
        out.write(f"release #{info.id} ({info.dataset} v{info.version}) {verb} {info.status}\n")
    return EXIT_SAFE


def _summary(info: Any) -> dict[str, Any]:
    return {
        "id": info.id,
        "dataset": info.dataset,
        "version": info.version,
        "status": info.status,
        "created_at": info.created_at,
        "kind": info.kind,
        "sensitive": info.sensitive,
        "qis": info.qis,
        "records": info.records,
        "groups": info.groups,
        "members": info.members,
        "content_hash": info.content_hash,
        "reasons": info.reasons,
    }


def _print_list(rows: list[Any], url: str, out: TextIO) -> None:
    if not rows:
        out.write(f"no releases in {url}\n")
        return
    head = (
        f"{'id':>4}  {'dataset':<24} {'version':<10} {'status':<9} {'records':>9} "
        f"{'groups':>7}  created"
    )
    out.write(head + "\n")
    for r in rows:
        out.write(
            f"{r.id:>4}  {_cut(r.dataset, 24):<24} {_cut(r.version, 10):<10} {r.status:<9} "
            f"{r.records:>9,} {r.groups:>7,}  {r.created_at}\n"
        )


def _print_show(info: Any, groups: list[dict[str, Any]] | None, out: TextIO) -> None:
    lines = [
        f"release #{info.id}: {info.dataset} v{info.version} ({info.status})",
        f"  created:   {info.created_at} (updated {info.updated_at})",
        f"  content:   {info.records:,} records in {info.groups:,} {info.kind} groups; "
        f"sensitive {info.sensitive!r}; QIs {', '.join(info.qis)}",
        f"  hash:      {info.content_hash}",
        "  overlap:   "
        + (
            f"{info.members:,} identifier hashes (key {info.key_fingerprint})"
            if info.members is not None
            else "no identifier hashes (worst case assumed)"
        ),
    ]
    for r in info.reasons:
        lines.append(f"  reason:    {r}")
    for c in info.criteria or []:
        if isinstance(c, dict):
            verdict = "pass" if c.get("safe") else "FAIL"
            lines.append(f"  criterion: {c.get('criterion')} {verdict}: {c.get('reason', '')}")
    out.write("\n".join(lines) + "\n")
    if groups is not None:
        for g in groups:
            ms = ", ".join(f"{v}: {n}" for v, n in g["sensitive"].items())
            out.write(f"    {' | '.join(g['descriptor'])}  ({g['size']})  {{{ms}}}\n")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def env_ledger() -> str | None:
    return os.environ.get("AIRFLOW_PRIVACY_LEDGER_URL") or None
