"""``airflow-privacy ledger``: what was published and attempted (list, show, import,
mark-published, mark-blocked, supersede, override / approve / reject). Adapters over the
ledger and the gate's lifecycle services (:mod:`airflow_privacy.gate.attempts`):
``mark-published`` goes through the gate like ``publish``, an override publishes only when a
second person approves it, and reading never creates a ledger."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    EXIT_UNSAFE,
    Parser,
    add_input_args,
    add_ledger_arg,
    add_output_args,
    clean,
    context,
    emit,
    write_json,
)
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.gate.steps.base import Step

NAME = "ledger"


def register(sub: Any) -> None:
    from airflow_privacy.cli.attempt import add_release_file_args
    from airflow_privacy.vocabulary import LEDGER_STATUSES, RELEASE_STATUSES

    p = sub.add_parser(
        NAME,
        help="the release ledger: list, show, import, mark-published, mark-blocked, supersede, "
        "override, approve, reject",
        description="The release ledger remembers what was published (group descriptors and "
        "sensitive multisets, never raw records) and every attempt to publish (its checks and "
        "the gate's decision), so new releases can be audited against it.",
    )
    actions = p.add_subparsers(dest="ledger_command", required=True, parser_class=Parser)

    ls = actions.add_parser("list", help="list the recorded releases, oldest first")
    add_ledger_arg(ls)
    ls.add_argument("--dataset", help="only releases of this dataset")
    ls.add_argument(
        "--status", choices=LEDGER_STATUSES, help="only releases shown with this status"
    )
    add_output_args(ls)

    show = actions.add_parser("show", help="one release: metadata, attempts, checks, groups")
    show.add_argument("ref", metavar="RELEASE", help="release id (3), UUID or DATASET@VERSION")
    add_ledger_arg(show)
    show.add_argument("--groups", action="store_true", help="also list every published group")
    add_output_args(show)

    imp = actions.add_parser(
        "import",
        help="record a release that was published elsewhere (history), or candidate content",
        description="Record a release file (CSV or Parquet) in the ledger: its groups and "
        "their sensitive multisets, spec and manifest. --status published records history "
        "(a release published before the gate existed: later audits count it); the default "
        "candidate records the content only (publishing it takes an attempt whose checks "
        "pass). Identical content is recorded once.",
    )
    imp.add_argument("release", metavar="RELEASE", help="release file (.csv[.gz] or .parquet)")
    imp.add_argument("--dataset", required=True, help="dataset name (the series of releases)")
    imp.add_argument("--version", help="version label (default: the next number)")
    imp.add_argument(
        "--status", choices=RELEASE_STATUSES, default="candidate",
        help="candidate (default) or published (history published elsewhere)",
    )  # fmt: skip
    add_ledger_arg(imp)
    add_release_file_args(imp)
    imp.add_argument(
        "--identifiers", metavar="FILE",
        help="original records holding an identifier column (--id-column): its keyed hashes "
        "are stored so that the overlap with later releases is known exactly",
    )  # fmt: skip
    imp.add_argument("--id-column", metavar="COL", help="the identifier column of --identifiers")
    add_input_args(imp, tables=False)  # the ledger records release files, not SQL tables
    add_output_args(imp)

    from airflow_privacy.cli import steps

    for step in _decisions():
        steps.register(actions, step, name=step.command[-1])


def _open(args: argparse.Namespace) -> Any:
    return context(args).open_ledger(args.ledger)


def run(args: argparse.Namespace, out: TextIO) -> int:
    action = args.ledger_command
    if action == "list":
        with _open(args) as ledger:
            rows = ledger.list(dataset=args.dataset, status=args.status)
            if args.format == "json":
                write_json({"ledger": ledger.url, "releases": [_summary(r) for r in rows]}, out)
            else:
                out.write(clean(_list_text(rows, ledger.url)))
        return EXIT_SAFE
    if action == "show":
        with _open(args) as ledger:
            info = ledger.resolve(args.ref)
            attempts = ledger.attempts(info.id)
            groups = ledger.release(info.id).group_records() if args.groups else None
        if args.format == "json":
            payload = _summary(info) | {"attempts": [a.public_dict() for a in attempts]}
            if groups is not None:
                payload["groups_published"] = groups
            write_json(payload, out)
        else:
            out.write(clean(_show_text(info, attempts, groups)))
        return EXIT_SAFE
    if action == "import":
        return _import(args, out)
    from airflow_privacy.cli import steps

    step = next(d for d in _decisions() if d.command[-1] == action)
    return _decide(step, steps.values(step, args), args, out)
    raise InputError(f"unknown ledger action {action!r}")  # pragma: no cover - argparse


def _decisions() -> tuple[Step, ...]:
    """The steward's decisions, each derived from its step's declaration
    (:mod:`airflow_privacy.gate.steps.decisions`)."""
    from airflow_privacy.gate.steps import decisions as d

    return (d.MARK_PUBLISHED, d.BLOCK, d.SUPERSEDE, d.OVERRIDE, d.APPROVE, d.REJECT)


#: the outcomes each decision exits 0 with (any other is 1: blocked, asked or rejected)
_DONE = {"mark-published": ("published", "already-published"), "block": ("blocked",),
         "supersede": ("superseded",), "override": ("published", "superseded"),
         "approve": ("published", "superseded"), "reject": ("published", "superseded")}  # fmt: skip


def _decide(step: Step, values: dict[str, Any], args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.cli.publish import render as publish_render
    from airflow_privacy.errors import ReleaseBlocked

    try:
        env = step.run(step.request(values), context(args))
    except ReleaseBlocked as exc:  # mark-published: the gate blocked the attempt
        if exc.envelope is None:
            raise
        return emit(exc.envelope, args, out, publish_render, EXIT_UNSAFE)  # type: ignore[arg-type]
    code = EXIT_SAFE if env.outcome in _DONE[step.name] else EXIT_UNSAFE
    if step.name == "mark-published":
        return emit(env, args, out, publish_render, code)
    if step.name == "block":
        return emit(env, args, out, lambda e: f"BLOCKED: {e.summary}\n", code)
    return emit(env, args, out, lambda e: f"{e.outcome.upper()}: {e.summary}\n", code)


def _import(args: argparse.Namespace, out: TextIO) -> int:
    """``ledger import``: the layer's :func:`airflow_privacy.gate.history.import_release`."""
    from airflow_privacy.cli.common import ref
    from airflow_privacy.gate.history import ImportRequest, import_release
    from airflow_privacy.gate.refs import ReleaseRef

    info = import_release(
        ImportRequest(
            release=ref(args.release, args),
            dataset=args.dataset,
            status=args.status,
            version=args.version,
            identifiers=ReleaseRef(path=args.identifiers) if args.identifiers else None,
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
    if args.format == "json":
        write_json(_summary(info) | {"created": info.created}, out)
    else:
        if info.created:
            out.write(
                clean(f"release #{info.id} ({info.name}) recorded as {info.content_status}\n")
            )
        elif info.content_status == "published":
            out.write(clean(f"already published as release #{info.id} ({info.name}); nothing "
                            "was recorded again\n"))  # fmt: skip
        else:
            out.write(clean(f"identical content is already recorded as release #{info.id} "
                            f"({info.name}, {info.status})\n"))  # fmt: skip
    return EXIT_SAFE


def _summary(info: Any) -> dict[str, Any]:
    from airflow_privacy.core.redaction import redact

    return {
        "id": info.id,
        "uuid": info.uuid,
        "dataset": info.dataset,
        "version": info.version,
        "status": info.status,
        "created_at": info.created_at,
        "updated_at": info.updated_at,
        "published_at": info.published_at,
        "kind": info.kind,
        "sensitive": info.sensitive,
        "qis": info.qis,
        "records": info.records,
        "groups": info.groups,
        "members": info.members,
        "content_hash": info.content_hash,
        "reasons": [redact(r) for r in info.reasons],
    }


def _list_text(rows: list[Any], url: str) -> str:
    if not rows:
        return f"no releases in {url}\n"
    lines = [
        f"{'id':>4}  {'dataset':<24} {'version':<10} {'status':<10} {'records':>9} "
        f"{'groups':>7}  created"
    ]
    for r in rows:
        lines.append(
            f"{r.id:>4}  {_cut(r.dataset, 24):<24} {_cut(r.version, 10):<10} {r.status:<10} "
            f"{r.records:>9,} {r.groups:>7,}  {r.created_at}"
        )
    return "\n".join(lines) + "\n"


def _show_text(info: Any, attempts: list[Any], groups: list[dict[str, Any]] | None) -> str:
    from airflow_privacy.core.redaction import redact

    lines = [
        f"release #{info.id}: {info.dataset} v{info.version} ({info.status})",
        f"  uuid:      {info.uuid}",
        f"  created:   {info.created_at} (updated {info.updated_at}"
        + (f", published {info.published_at}" if info.published_at else "")
        + ")",
        f"  content:   {info.records:,} records in {info.groups:,} {info.kind} groups; "
        f"sensitive {info.sensitive!r}; QIs {', '.join(info.qis)}",
        f"  hash:      {info.content_hash}",
        "  overlap:   "
        + (
            f"{info.members:,} identifier hashes"
            if info.members is not None
            else "no identifier hashes (worst case assumed)"
        ),
    ]
    for r in info.reasons:
        lines.append(f"  reason:    {redact(r)}")
    for a in attempts:
        lines.append(f"  attempt {a.uuid}: {a.status} (opened {a.created_at}"
                     + (f", decided {a.decided_at}" if a.decided_at else "") + ")")  # fmt: skip
        if a.required:
            lines.append(f"    required: {', '.join(a.required)}")
        for c in a.checks:
            verdict = {True: "passed", False: "FAILED", None: "no verdict"}[c.safe]
            lines.append(f"    check {c.name} ({c.step}): {verdict}")
        for r in a.reasons:
            lines.append(f"    why: {redact(r)}")
        if a.superseded_by:
            lines.append(f"    superseded by {a.superseded_by} at {a.superseded_at}: "
                         f"{a.supersede_reason}")  # fmt: skip
    text = "\n".join(lines) + "\n"
    if groups is not None:
        for g in groups:
            ms = ", ".join(f"{v}: {n}" for v, n in g["sensitive"].items())
            text += f"    {' | '.join(g['descriptor'])}  ({g['size']})  {{{ms}}}\n"
    return text


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
