"""``airflow-privacy audit``: the intersection attack of Ganta et al. (2008) on a candidate
release and every earlier release (from the ledger and/or files), gated on PVP_C.

The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.audit.AuditStep`, as ``CompositionAuditOperator``'s
arguments are). Exit 0 = pass, 1 = blocked, 2 = bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import context, emit, wrap
from airflow_privacy.cli.report_option import report_after, report_target
from airflow_privacy.gate.steps.audit import AUDIT

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = AUDIT.name


def register(sub: Any) -> None:
    steps.register(sub, AUDIT)


def run(args: argparse.Namespace, out: TextIO) -> int:
    target = report_target(args)
    ctx = context(args)
    env = AUDIT.run(AUDIT.request(steps.values(AUDIT, args)), ctx)
    report_after(args, env, ctx, target)
    return emit(env, args, out, render)


def _pct(c: float) -> str:
    p = c * 100
    return f"{p:.0f}%" if abs(p - round(p)) < 1e-9 else f"{p:.4g}%"


def render(env: Envelope) -> str:
    """The audit's envelope as a few lines a person reads in a terminal."""
    if env.outcome == "already-published":
        return f"composition audit: {env.summary}\n"
    word = "PASS" if env.safe else "BLOCKED"
    v = env.results[0] if env.results else {}
    p = v.get("parameters") or {}
    d = env.details
    rel = env.release
    lines = [
        f"composition audit (C = {_pct(float(p.get('confidence', 1.0)))}, limit "
        f"{float(p.get('max_pvp', 0.0)):g}%, measure {p.get('measure', 'ganta')}): {word}",
    ]
    if rel is not None:
        lines.append(f"  candidate:  {rel.ref} ({rel.records:,} records in {rel.groups:,} "
                     f"{rel.kind} groups)")  # fmt: skip
    for r in d.get("releases") or []:
        if r.get("role") != "prior":
            continue
        lines.append(
            f"  prior:      {r['name']} ({r['records']:,} records, {r['groups']:,} groups): "
            f"{r['located']:,} of the candidate's people locatable"
            + (f", {r['present']:,} known present" if d.get("overlap") == "known" else "")
            + (f", {r['ambiguous']:,} in several groups" if r.get("ambiguous") else "")
        )
    if d.get("first_release"):
        lines.append("  priors:     none (declared first release)")
    if "overlap_size" in d:
        how = (
            "worst case (locatable = present)" if d["overlap"] == "worst-case" else "known (hashes)"
        )
        lines.append(f"  overlap:    {d['overlap_size']:,} of {d['population']:,} people, {how}; "
                     f"{d['candidate_only']:,} only in the candidate")  # fmt: skip
        if d.get("unlocatable"):
            unlocatable = d["unlocatable"]  # the rows (pseudonymous), or their number
            n = len(unlocatable) if isinstance(unlocatable, list) else int(unlocatable)
            lines.append(f"  unlocatable in the candidate: {n:,} people "
                         "(--individuals FILE lists them)")  # fmt: skip
        if d.get("inconsistent"):
            lines.append(f"  inconsistent: {d['inconsistent']:,} people whose value sets do not "
                         "intersect (not in every release they are locatable in)")  # fmt: skip
    if d.get("overlap_size"):
        share = 100 * d["vp"] / d["overlap_size"]
        lines.append(f"  VP:         {d['vp']:,} of {d['overlap_size']:,} lose effective "
                     f"anonymity ({share:.1f}%)")  # fmt: skip
        table = d.get("pvp") or []
        lines.append("  PVP_C:      " + "  ".join(
            f"C={_pct(t['confidence'])}: {t['pvp']:.2f}%" for t in table))  # fmt: skip
        lines.append("  posterior:  " + "  ".join(
            f"C={_pct(t['confidence'])}: {t['posterior_pvp']:.2f}%" for t in table))  # fmt: skip
    lines.append(f"  why:        {wrap(env.summary, indent=14)}")
    worst = d.get("worst") or []
    if worst and d.get("overlap_size"):
        lines.append("  worst (by row of the population; their values are not shown):")
        for w in worst:
            parts = " with ".join(
                f"{r['release']} group {' | '.join(r.get('groups') or [])} ({r.get('ea')} left)"
                for r in w.get("releases") or []
            )
            lines.append(f"    row {w['row']}: C = {w['confidence']:.3g}, posterior "
                         f"{w['posterior']:.3g}; {parts}")  # fmt: skip
    for a in env.advice:  # the people pinned are listed above, worst first
        if a.get("kind") != "people-pinned":
            lines.append(f"  the way forward: {wrap(str(a.get('text')), indent=19)}")
    if env.outputs.get("individuals"):
        lines.append(f"  individuals (confidential): {env.outputs['individuals']}")
    if env.attempt is not None:
        lines.append(f"  recorded:   check {env.name!r} of attempt {env.attempt.uuid}")
    return "\n".join(lines) + "\n"
