"""``airflow-privacy audit-algorithm``: what an adversary who knows the disclosure algorithm
learns from a release (Zhang, Jajodia, Brodsky, CCS 2007).

A thin layer over :func:`airflow_privacy.core.algorithm_aware.audit_algorithm`: read the
original table, build the candidate sequence (``--candidate`` specs in the algorithm's
order, or by default every node of the lattice in the lattice anonymizer's order), and
report the disclosure set of the released candidate and the people whose posterior
reaches ``--threshold``. Exit 0 = nobody flagged and the predicate holds on the disclosure
set, 1 = somebody flagged or the predicate fails, 2 = bad input.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    EXIT_UNSAFE,
    Progress,
    add_criterion_flags,
    add_input_args,
    add_output_args,
    clean,
    number,
    ref,
    write_json,
)
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.core.algorithm_aware import AlgorithmAuditResult

NAME = "audit-algorithm"


def register(sub: Any) -> None:
    from airflow_privacy.core.criteria.registry import CRITERIA
    from airflow_privacy.vocabulary import INTERVAL_METHODS as METHODS
    from airflow_privacy.vocabulary import METRICS

    p = sub.add_parser(
        NAME,
        help="audit a release against an adversary who knows the disclosure algorithm",
        description="Compute what an adversary who knows the disclosure algorithm and its "
        "candidate order learns from the released candidate: the disclosure set (worlds "
        "consistent with the release in which every earlier candidate fails) and each "
        "person's posterior. Exit 0 = nobody reaches --threshold and the predicate holds on "
        "the disclosure set, 1 = otherwise, 2 = bad input.",
    )
    p.add_argument("input", metavar="INPUT", help="the original table (.csv[.gz] or .parquet)")
    p.add_argument(
        "--qi", action="append", required=True, metavar="COL", dest="qis",
        help="a quasi-identifier column, public knowledge (repeat for several)",
    )  # fmt: skip
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    p.add_argument("--id", default=None, metavar="COL", dest="id_column",
                   help="column naming the people in the report (default: row number)")  # fmt: skip
    p.add_argument(
        "--candidate", action="append", default=[], dest="candidates", metavar="SPEC",
        help="a candidate generalization, in the algorithm's order (repeat): the QIs kept, "
        "e.g. 'age,sex', 'age=1' (level 1 of age's hierarchy), '*' (all generalized); QIs "
        "not named are '*'. Default: every lattice node in the lattice anonymizer's order",
    )  # fmt: skip
    p.add_argument(
        "--released", default=None, metavar="SPEC",
        help="the released candidate (a SPEC as in --candidate); default: the one the "
        "--mode algorithm releases on INPUT",
    )  # fmt: skip
    p.add_argument(
        "--criterion", action="append", default=[], dest="criteria",
        metavar="NAME[:PARAM=VALUE,...]",
        help=f"the algorithm's safety predicate (repeat; all must hold). Names: "
        f"{', '.join(CRITERIA)}",
    )  # fmt: skip
    add_criterion_flags(p)
    p.add_argument(
        "--mode", choices=("naive", "safe"), default="naive",
        help="the algorithm: naive (stop at the first candidate whose table passes) or safe "
        "(stop at the first whose disclosure set passes); default naive",
    )  # fmt: skip
    p.add_argument("--threshold", type=number(float, "--threshold"), default=1.0,
                   help="flag people whose largest posterior reaches this, in (0, 1] "
                   "(default 1: certain disclosure)")  # fmt: skip
    p.add_argument("--exact-limit", type=number(int, "--exact-limit"), default=200_000,
                   metavar="WORLDS",
                   help="enumerate blocks up to this many worlds, sample beyond (default "
                   "200000); the safe mode declines larger blocks")  # fmt: skip
    p.add_argument("--samples", type=number(int, "--samples"), default=20_000,
                   help="worlds drawn when sampling (default 20000)")  # fmt: skip
    p.add_argument("--seed", type=number(int, "--seed"), default=0, help="sampling seed")
    p.add_argument("--confidence", type=number(float, "--confidence"), default=0.95,
                   help="confidence of the sampled intervals (default 0.95)")  # fmt: skip
    p.add_argument(
        "--interval-method",
        choices=METHODS,
        default="clopper-pearson",
        help="binomial interval of sampled posteriors (default clopper-pearson)",
    )
    p.add_argument(
        "--min-accepted",
        type=number(int, "--min-accepted"),
        default=100,
        help="fewer accepted samples than this: reported as not estimable",
    )
    p.add_argument("--people", type=number(int, "--people"), default=20,
                   help="people listed (highest posterior first; default 20)")  # fmt: skip
    p.add_argument(
        "--utility",
        choices=METRICS,
        default="loss",
        help="lattice order: the lattice anonymizer's utility metric (default loss)",
    )
    p.add_argument("--hierarchy", action="append", default=[], metavar="COL=FILE",
                   help="ARX hierarchy file for a QI (repeatable)")  # fmt: skip
    p.add_argument(
        "--interval",
        action="append",
        default=[],
        metavar="COL=W1,W2,...",
        help="numeric hierarchy for a QI: intervals of the given widths, then *",
    )
    p.add_argument("--mask", action="append", default=[], metavar="COL[=DEPTH]",
                   help="mask hierarchy for a QI")  # fmt: skip
    add_input_args(p, tables=False)  # the original table, a file
    add_output_args(p)
    p.set_defaults(criteria_file=None)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.cli.anonymize import (
        built_hierarchies,
        criteria_from_args,
        hierarchy_files,
    )
    from airflow_privacy.core.algorithm_aware import audit_algorithm
    from airflow_privacy.core.algorithm_aware.audit import check_threshold
    from airflow_privacy.core.algorithm_aware.candidates import Generalizer
    from airflow_privacy.core.algorithm_aware.intervals import check_interval
    from airflow_privacy.core.anonymize.criteria import CriteriaSet
    from airflow_privacy.core.io import describe_columns
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.tables import column_names, read_table

    progress = Progress(args.quiet)
    check_threshold(args.threshold)
    check_interval(args.interval_method, args.confidence)
    criteria = criteria_from_args(args)
    parsed = CriteriaSet.parse(criteria)
    hierarchies = hierarchy_files(args)
    source = ref(args.input, args)
    ctx = GateContext(progress=progress)
    header = column_names(source, ctx, fmt=args.input_format, delimiter=args.delimiter)
    for col in [*args.qis, args.sensitive, *([args.id_column] if args.id_column else [])]:
        if col not in header:
            raise InputError(f"column {col!r} does not exist in {source.name} "
                             f"(columns: {describe_columns(header)})")  # fmt: skip
    progress(f"reading {source.describe()}")
    table = read_table(source, None, ctx, fmt=args.input_format, delimiter=args.delimiter)
    hierarchies.update(built_hierarchies(args, table))
    gen = Generalizer(table, args.qis, args.sensitive, hierarchies, args.id_column)
    if args.candidates:
        cands = gen.candidates(args.candidates)
        order_of = "given"
    else:
        order = gen.lattice_sequence(parsed, args.utility)
        cands = [gen.candidate(node) for node in order]
        order_of = f"lattice order ({args.utility})"
    progress(f"{len(cands)} candidates ({order_of}); {gen.population.n:,} people")
    released: str | None = None
    if args.released is not None:
        released = gen.name(gen.parse(args.released))
    result = audit_algorithm(
        gen.population, cands, parsed, released=released, mode=args.mode,
        threshold=args.threshold, exact_limit=args.exact_limit, samples=args.samples,
        seed=args.seed, confidence=args.confidence, interval=args.interval_method,
        min_accepted=args.min_accepted, people_limit=max(args.people, 0), progress=progress,
    )  # fmt: skip
    if args.format == "json":
        # the public form: people by row number, never a name (--id) or a sensitive value
        payload = {"input": args.input, "candidate_source": order_of, **result.public_dict()}
        write_json(payload, out)
    else:
        out.write(clean(render(args.input, order_of, result)))
    return EXIT_SAFE if result.safe else EXIT_UNSAFE


def render(path: str, source: str, r: AlgorithmAuditResult) -> str:
    verdict = "SAFE" if r.safe else "UNSAFE"
    lines = [
        f"audit-algorithm ({r.mode}): {verdict} — release '{r.released}' "
        f"(candidate {r.released_index + 1} of {len(r.candidates)}, {source}) of {path}",
        f"  predicate:  {r.predicate}",
        f"  algorithm:  the {r.mode} algorithm releases "
        + (f"'{r.algorithm_release}'" if r.algorithm_release else "nothing")
        + " on this table"
        + ("" if r.released_passes else f"; '{r.released}' itself fails its stopping test"),
    ]
    if r.method == "exact":
        lines.append(
            f"  worlds:     {_block(r)} consistent with the release; disclosure "
            f"set {r.disclosure_set_size:,} (exact, bound {r.exact_limit:,})"
        )
    else:
        s = r.sampling
        assert s is not None
        lines.append(
            f"  worlds:     {_block(r)} consistent with the release (above the exact "
            f"bound {r.exact_limit:,}); {s.accepted:,} of {s.samples:,} sampled worlds in the "
            f"disclosure set ({s.interval}, {s.confidence:g} confidence)"
        )
    on_set = r.predicate_on_set
    if on_set["supported"] and on_set["passes"] is not None:
        state = (
            "holds" if on_set["passes"] else (f"FAILS for {len(on_set['failing_people'])} people")
        )
        est = " (estimated)" if on_set["estimated"] else ""
        within = on_set.get("within_error") or []
        if within:
            est += (f"; {len(within)} more fail at the estimate but pass inside their "
                    "confidence intervals")  # fmt: skip
        lines.append(f"  predicate on the disclosure set: {state}{est}")
    lines.append(f"  flagged:    {len(r.flagged)} people with posterior >= {r.threshold:g}")
    lines.append(f"  reason:     {r.reason}")
    if r.people:
        lines.append("  highest posteriors (people by row number; names and values stay in "
                     "the data):")  # fmt: skip
        where = max(28, *(len(p.group) for p in r.people))
        for p in r.people:
            ci = ""
            if p.interval is not None:
                lo, hi = p.interval[p.top_value]
                ci = f" [{lo:.3f}, {hi:.3f}]"
            mark = " *" if p.flagged else ""
            lines.append(f"    {'row ' + str(p.row):<10} {p.group:<{where}} "
                         f"{p.top_posterior:.3f}{ci}{mark}")  # fmt: skip
    return "\n".join(lines) + "\n"


def _block(r: AlgorithmAuditResult) -> str:
    from airflow_privacy.core.algorithm_aware.worlds import format_log10_count

    if r.consistent_worlds is not None:
        return f"{r.consistent_worlds:,}"
    return format_log10_count(r.log10_consistent_worlds)
