"""``airflow-privacy audit-algorithm``: what an adversary who knows the disclosure algorithm
learns from a release (Zhang, Jajodia, Brodsky, CCS 2007).

The parser is derived from the step's declaration
(:class:`airflow_privacy.gate.steps.audit_algorithm.AuditAlgorithmStep`, which runs the
audit); ``--format json`` prints its envelope, the text view is below. Exit 0 = nobody flagged
and the predicate holds on the disclosure set, 1 = somebody flagged or the predicate fails,
2 = bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import context, emit
from airflow_privacy.gate.steps.audit_algorithm import AUDIT_ALGORITHM

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = AUDIT_ALGORITHM.name


def register(sub: Any) -> None:
    steps.register(sub, AUDIT_ALGORITHM)


def run(args: argparse.Namespace, out: TextIO) -> int:
    env = AUDIT_ALGORITHM.run(
        AUDIT_ALGORITHM.request(steps.values(AUDIT_ALGORITHM, args)), context(args)
    )
    return emit(env, args, out, render)


def render(env: Envelope) -> str:
    r = env.details
    rel = env.release
    verdict = "SAFE" if env.safe else "UNSAFE"
    lines = [
        f"audit-algorithm ({r['mode']}): {verdict} — release '{r['released']}' "
        f"(candidate {r['released_index'] + 1} of {len(r['candidates'])}, "
        f"{r['candidate_source']}) of {rel.ref if rel else '?'}",
        f"  predicate:  {r['predicate']}",
        f"  algorithm:  the {r['mode']} algorithm releases "
        + (f"'{r['algorithm_release']}'" if r["algorithm_release"] else "nothing")
        + " on this table"
        + ("" if r["released_passes"] else f"; '{r['released']}' itself fails its stopping test"),
    ]
    if r["method"] == "exact":
        lines.append(
            f"  worlds:     {_block(r)} consistent with the release; disclosure "
            f"set {r['disclosure_set_size']:,} (exact, bound {r['exact_limit']:,})"
        )
    else:
        s = r["sampling"]
        lines.append(
            f"  worlds:     {_block(r)} consistent with the release (above the exact "
            f"bound {r['exact_limit']:,}); {s['accepted']:,} of {s['samples']:,} sampled "
            f"worlds in the disclosure set ({s['interval']}, {s['confidence']:g} confidence)"
        )
    on_set = r["predicate_on_set"]
    if on_set.get("supported") and on_set.get("passes") is not None:
        state = "holds" if on_set["passes"] else f"FAILS for {on_set['failing_people']} people"
        est = " (estimated)" if on_set.get("estimated") else ""
        within = on_set.get("within_error") or 0
        if within:
            est += (f"; {within} more fail at the estimate but pass inside their "
                    "confidence intervals")  # fmt: skip
        lines.append(f"  predicate on the disclosure set: {state}{est}")
    lines.append(
        f"  flagged:    {len(r['flagged_rows'])} people with posterior >= {r['threshold']:g}"
    )
    lines.append(f"  reason:     {r['reason']}")
    people = r.get("people") or []
    if people:
        lines.append("  highest posteriors (people by row number; names and values stay in "
                     "the data):")  # fmt: skip
        where = max(28, *(len(p["group"]) for p in people))
        for p in people:
            ci = ""
            if p.get("top_interval") is not None:
                lo, hi = p["top_interval"]
                ci = f" [{lo:.3f}, {hi:.3f}]"
            mark = " *" if p["flagged"] else ""
            lines.append(f"    {'row ' + str(p['row']):<10} {p['group']:<{where}} "
                         f"{p['top_posterior']:.3f}{ci}{mark}")  # fmt: skip
    return "\n".join(lines) + "\n"


def _block(r: dict[str, Any]) -> str:
    from airflow_privacy.core.algorithm_aware.worlds import format_log10_count

    if r["consistent_worlds"] is not None:
        return f"{r['consistent_worlds']:,}"
    return str(format_log10_count(r["log10_consistent_worlds"]))
