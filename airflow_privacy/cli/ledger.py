"""``airflow-privacy ledger``: what was published and attempted (list, show, import,
mark-published, mark-blocked, supersede, override / approve / reject). Adapters over the
ledger and the gate's lifecycle services (:mod:`airflow_privacy.gate.attempts`):
``mark-published`` goes through the gate like ``publish``, an override publishes only when a
second person approves it, and reading never creates a ledger."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    EXIT_UNSAFE,
    Parser,
    clean,
    context,
    emit,
    write_json,
)

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.steps.base import Step

NAME = "ledger"


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="the release ledger: list, show, import, mark-published, mark-blocked, supersede, "
        "override, approve, reject",
        description="The release ledger remembers what was published (group descriptors and "
        "sensitive multisets, never raw records) and every attempt to publish (its checks and "
        "the gate's decision), so new releases can be audited against it.",
    )
    actions = p.add_subparsers(dest="ledger_command", required=True, parser_class=Parser)
    from airflow_privacy.cli import steps

    for step in (*_records(), *_decisions()):
        steps.register(actions, step, name=step.command[-1])


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.cli import steps

    action = args.ledger_command
    records = {step.command[-1]: step for step in _records()}
    if action in records:
        step = records[action]
        env = step.run(step.request(steps.values(step, args)), context(args))
        if args.format == "json":
            write_json(env.details, out)  # the release(s) as they were always printed
        else:
            out.write(clean(_TEXT[action](env)))
        return EXIT_SAFE
    step = next(d for d in _decisions() if d.command[-1] == action)
    return _decide(step, steps.values(step, args), args, out)


def _records() -> tuple[Step, ...]:
    """Reading the ledger and importing into it, each derived from its step's declaration
    (:mod:`airflow_privacy.gate.steps.ledger`)."""
    from airflow_privacy.gate.steps.ledger import LEDGER_IMPORT, LEDGER_LIST, LEDGER_SHOW

    return (LEDGER_LIST, LEDGER_SHOW, LEDGER_IMPORT)


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


def _list_text(env: Envelope) -> str:
    rows, url = env.details["releases"], env.details["ledger"]
    if not rows:
        return f"no releases in {url}\n"
    lines = [
        f"{'id':>4}  {'dataset':<24} {'version':<10} {'status':<10} {'records':>9} "
        f"{'groups':>7}  created"
    ]
    for r in rows:
        lines.append(
            f"{r['id']:>4}  {_cut(r['dataset'], 24):<24} {_cut(r['version'], 10):<10} "
            f"{r['status']:<10} {r['records']:>9,} {r['groups']:>7,}  {r['created_at']}"
        )
    return "\n".join(lines) + "\n"


def _show_text(env: Envelope) -> str:
    """The release, its attempts and (``--groups``) its groups; every reason was redacted by
    the step."""
    info = env.details
    published = f", published {info['published_at']}" if info["published_at"] else ""
    members = info["members"]
    lines = [
        env.summary,
        f"  uuid:      {info['uuid']}",
        f"  created:   {info['created_at']} (updated {info['updated_at']}{published})",
        f"  content:   {info['records']:,} records in {info['groups']:,} {info['kind']} groups; "
        f"sensitive {info['sensitive']!r}; QIs {', '.join(info['qis'])}",
        f"  hash:      {info['content_hash']}",
        "  overlap:   "
        + (
            f"{members:,} identifier hashes"
            if members is not None
            else "no identifier hashes (worst case assumed)"
        ),
    ]
    for r in info["reasons"]:
        lines.append(f"  reason:    {r}")
    for a in info["attempts"]:
        decided = f", decided {a['decided_at']}" if a["decided_at"] else ""
        lines.append(f"  attempt {a['uuid']}: {a['status']} (opened {a['created_at']}{decided})")
        if a["required"]:
            lines.append(f"    required: {', '.join(a['required'])}")
        for c in a["checks"]:
            verdict = {True: "passed", False: "FAILED", None: "no verdict"}[c["safe"]]
            lines.append(f"    check {c['name']} ({c['step']}): {verdict}")
        for r in a["reasons"]:
            lines.append(f"    why: {r}")
        if a["superseded_by"]:
            lines.append(f"    superseded by {a['superseded_by']} at {a['superseded_at']}: "
                         f"{a['supersede_reason']}")  # fmt: skip
    text = "\n".join(lines) + "\n"
    for g in info.get("groups_published") or []:
        ms = ", ".join(f"{v}: {n}" for v, n in g["sensitive"].items())
        text += f"    {' | '.join(g['descriptor'])}  ({g['size']})  {{{ms}}}\n"
    return text


def _import_text(env: Envelope) -> str:
    return env.summary + "\n"


_TEXT: dict[str, Callable[[Envelope], str]] = {
    "list": _list_text, "show": _show_text, "import": _import_text,
}  # fmt: skip


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
