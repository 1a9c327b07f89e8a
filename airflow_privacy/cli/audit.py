"""``airflow-privacy audit``: the intersection attack of Ganta et al. (2008) on a candidate
release and every earlier release (from the ledger and/or files), gated on PVP_C.

An adapter over :func:`airflow_privacy.gate.audit.run_audit` (the same service as
``CompositionAuditOperator``). Exit 0 = pass, 1 = blocked, 2 = bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.benign import add_benign_arg
from airflow_privacy.cli.common import (
    add_attempt_args,
    add_input_args,
    add_output_args,
    column_pairs,
    context,
    emit,
    number,
    population_ref,
    ref,
    wrap,
)
from airflow_privacy.cli.report import add_report_arg, report_after, report_target

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "audit"


def confidence(text: str) -> float:
    """``1``, ``0.5``, ``50%`` or ``1/3``."""
    t = text.strip()
    try:
        if t.endswith("%"):
            value = float(t[:-1]) / 100
        elif "/" in t:
            num, den = t.split("/", 1)
            value = float(num) / float(den)
        else:
            value = float(t)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(
            f"--confidence must be a number in (0, 1], a percentage or a fraction, got {text!r}"
        ) from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"--confidence must be in (0, 1], got {text!r}")
    return value


def register(sub: Any) -> None:
    from airflow_privacy.cli.attempt import add_release_file_args

    p = sub.add_parser(
        NAME,
        help="intersect a candidate with earlier releases (composition attack)",
        description="Run the intersection attack (Ganta, Kasiviswanathan, Smith 2008) on a "
        "candidate release and the earlier releases of the same people, from the ledger "
        "(every published release, or those of --dataset) and/or release files: locate every "
        "person of the candidate in every release from their QI values, intersect the groups' "
        "sensitive values, report EA, EA-hat, Anon_Drop, C and PVP_C, and block when PVP_C "
        "exceeds the limit. A ledger that does not exist, or a dataset without published "
        "history, is an error unless --first-release. Exit 0 = pass, 1 = blocked, 2 = bad "
        "input.",
    )
    p.add_argument("candidate", metavar="CANDIDATE", help="the candidate release file")
    add_release_file_args(p, "the candidate (and of --prior files without a manifest)")
    p.add_argument(
        "--population", metavar="FILE",
        help="the original records of the candidate (exact QI values of its people; default: "
        "the candidate itself when it is bucketized)",
    )  # fmt: skip
    p.add_argument(
        "--id-column", metavar="COL",
        help="identifier column of --population: its keyed hashes tell who is in which "
        "ledger release (needed for --overlap known)",
    )  # fmt: skip
    p.add_argument(
        "--dataset", action="append", dest="datasets", metavar="NAME",
        help="audit against the published releases of this dataset only (repeatable; "
        "default: every published release in the ledger); a name without published "
        "releases is an error unless --first-release",
    )  # fmt: skip
    p.add_argument(
        "--against", action="append", metavar="RELEASE",
        help="audit against this published ledger release (id, UUID or DATASET@VERSION; "
        "repeatable)",
    )  # fmt: skip
    p.add_argument(
        "--prior", action="append", default=[], metavar="FILE",
        help="an earlier release file (repeatable); its manifest, or else the candidate's "
        "columns, say how to read it",
    )  # fmt: skip
    p.add_argument(
        "--no-ledger", action="store_true",
        help="audit against the --prior files only (the ledger is not read)",
    )  # fmt: skip
    p.add_argument(
        "--first-release", action="store_true",
        help="declare the candidate the dataset's first release: no ledger or no published "
        "history is then not an error (an attempt carries its own declaration)",
    )  # fmt: skip
    p.add_argument(
        "--hierarchy", action="append", metavar="COL=FILE",
        help="ARX hierarchy of a QI whose published labels come from it (repeatable); do not "
        "give one for numeric QIs published as intervals",
    )  # fmt: skip
    p.add_argument(
        "--overlap", choices=("worst-case", "known"), default="worst-case",
        help="worst-case: everyone locatable in a release is assumed to be in it (default); "
        "known: from identifier hashes (--id-column, ledger releases recorded with them)",
    )  # fmt: skip
    p.add_argument(
        "--missing-qi", choices=("error", "suppressed"), default="error",
        help="a candidate QI an earlier release does not publish: an error (default), or "
        "treated as '*' there",
    )  # fmt: skip
    p.add_argument(
        "--confidence", type=confidence, default=1.0, metavar="C",
        help="confidence of the gate: 1 = perfect breach (default), 0.5, 50%%, 1/3 ...",
    )  # fmt: skip
    p.add_argument(
        "--max-pvp", type=number(float, "--max-pvp"), default=0.0, metavar="PERCENT",
        help="block when more than this percentage of the overlap is pinned with confidence "
        ">= C (default 0: any such person blocks)",
    )  # fmt: skip
    p.add_argument(
        "--measure", choices=("ganta", "posterior"), default="ganta",
        help="gate on Ganta's C_i = 1/|S_i| (default) or on the frequency-aware posterior",
    )  # fmt: skip
    p.add_argument(
        "--top", type=number(int, "--top"), default=10, metavar="N",
        help="how many of the worst individuals to report, by row number (default 10)",
    )  # fmt: skip
    p.add_argument(
        "--individuals", metavar="FILE",
        help="write one row per individual (EA per release, EA-hat, Anon_Drop, C, posterior, "
        "the values left) to this CSV or Parquet file; it is confidential (nothing else "
        "shows an individual's values)",
    )  # fmt: skip
    add_benign_arg(p)
    add_input_args(p)  # release files; a population may be table:NAME on --conn
    add_attempt_args(p, NAME)
    add_report_arg(p)
    add_output_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.audit import AuditRequest, run_audit
    from airflow_privacy.gate.refs import ReleaseRef

    target = report_target(args)
    ctx = context(args)
    env = run_audit(
        AuditRequest(
            candidate=ref(args.candidate, args),
            population=population_ref(args),
            qis=args.qis,
            sensitive=args.sensitive,
            kind=args.kind,
            bucket=args.bucket,
            manifest=ReleaseRef(path=args.manifest) if args.manifest is not None else None,
            datasets=args.datasets,
            against=args.against,
            prior_files=[ref(p, args) for p in args.prior],
            overlap=args.overlap,
            id_column=args.id_column,
            hierarchies=column_pairs("hierarchy", args.hierarchy, "COL=FILE"),
            missing_qi=args.missing_qi,
            top=args.top,
            confidence=args.confidence,
            max_pvp=args.max_pvp,
            measure=args.measure,
            first_release=bool(args.first_release),
            individuals=(
                ReleaseRef(path=args.individuals) if args.individuals is not None else None
            ),
            use_ledger=not args.no_ledger,
            ledger=args.ledger,
            attempt=args.attempt,
            name=args.name,
            fmt=args.input_format,
            delimiter=args.delimiter,
            benign=args.benign,
        ),
        ctx,
    )
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
    if env.outputs.get("individuals"):
        lines.append(f"  individuals (confidential): {env.outputs['individuals']}")
    if env.attempt is not None:
        lines.append(f"  recorded:   check {env.name!r} of attempt {env.attempt.uuid}")
    return "\n".join(lines) + "\n"
