"""``airflow-privacy risk``: the re-identification risk of a release (prosecutor, journalist,
marketer; population uniqueness; SUDA2), every number explained in one sentence.

An analysis without a verdict: exit 0 when measured, 2 = bad input. Recorded under an
attempt (``--attempt``), a result without a verdict blocks the gate like a check that did
not pass (docs/design.md).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    add_attempt_args,
    add_input_args,
    add_output_args,
    context,
    emit,
    number,
    ref,
)
from airflow_privacy.cli.report import add_report_arg, report_after, report_target

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "risk"
DEFAULT_THRESHOLD = 0.2  # gate.risk.DEFAULT_THRESHOLD (not imported: the parser stays light)


def register(sub: Any) -> None:
    p = sub.add_parser(
        NAME,
        help="re-identification risk: prosecutor, journalist, marketer, population "
        "uniqueness, SUDA",
        description="Measure the re-identification risk of a release on its quasi-identifiers, "
        "as ARX and sdcMicro do: prosecutor, journalist and marketer risk, population "
        "uniqueness (Zayatz, Pitman, SNB, Dankar's rule) and SUDA2 special uniques with the "
        "attributes that drive them; each number with one sentence saying what it means. An "
        "analysis without a verdict: exit 0, or 2 on bad input.",
    )
    p.add_argument("release", metavar="RELEASE", help="the release (file, URI or table:NAME)")
    p.add_argument(
        "--qi", action="append", required=True, metavar="COL", dest="qis",
        help="a quasi-identifier column (repeat for several)",
    )  # fmt: skip
    pop = p.add_mutually_exclusive_group()
    pop.add_argument(
        "--population", metavar="REF", default=None,
        help="the population table (file, URI or table:NAME), counted on the same --qi "
        "columns; it must contain the release",
    )  # fmt: skip
    pop.add_argument(
        "--population-size", type=number(int, "--population-size"), metavar="N", default=None,
        help="the population's size: sampling fraction = records / N",
    )  # fmt: skip
    pop.add_argument(
        "--sampling-fraction", type=number(float, "--sampling-fraction"), metavar="F",
        default=None, help="the share of the population in the release, in (0, 1]",
    )  # fmt: skip
    p.add_argument(
        "--threshold", type=number(float, "--threshold"), default=DEFAULT_THRESHOLD,
        metavar="T",
        help="a record is at risk when its re-identification probability is above T, in "
        f"(0, 1] (default {DEFAULT_THRESHOLD}, ARX's)",
    )  # fmt: skip
    p.add_argument(
        "--suda", action=argparse.BooleanOptionalAction, default=True,
        help="run SUDA2 (special uniques, DIS-SUDA, attribute contributions; default: on)",
    )  # fmt: skip
    p.add_argument(
        "--suda-max-size", type=number(int, "--suda-max-size"), metavar="N", default=None,
        help="the largest special unique SUDA2 looks for (default: every --qi)",
    )  # fmt: skip
    p.add_argument(
        "--dis-fraction", type=number(float, "--dis-fraction"), metavar="F", default=None,
        help="DIS-SUDA's sampling fraction (default: the sampling fraction when known, "
        "else 0.01, sdcMicro's)",
    )  # fmt: skip
    p.add_argument(
        "--records", metavar="FILE", default=None,
        help="write each record's SUDA and DIS-SUDA scores by row number (.csv or .parquet; "
        "records without a special unique are left out)",
    )  # fmt: skip
    p.add_argument(
        "--entity", metavar="COL", default=None,
        help="a column naming the person each row belongs to: count people, not rows "
        "(classes of the multiset of their rows' QI values, DLP's entity_id)",
    )  # fmt: skip
    p.add_argument(
        "--weight", metavar="COL", default=None,
        help="a column of sample weights (a record stands for w >= 1 people): population "
        "group sizes are the sums of the weights; sampling fraction records / sum",
    )  # fmt: skip
    add_input_args(p)
    add_attempt_args(p, NAME)
    add_report_arg(p)
    add_output_args(p)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.risk import RiskRequest, run_risk

    target = report_target(args)
    ctx = context(args)
    release = ref(args.release, args)
    if target is not None:
        from airflow_privacy.errors import InputError
        from airflow_privacy.gate.attempts import has_manifest

        if not has_manifest(release, ctx):
            raise InputError(
                f"--report needs the manifest beside {release.describe()} (it names the "
                "sensitive column the report shows); without one, write the envelope with "
                "--format json and run: airflow-privacy report RELEASE --check FILE "
                "--sensitive COL --group COL ..."
            )
    env = run_risk(
        RiskRequest(
            release=release,
            qis=args.qis,
            population=ref(args.population, args) if args.population is not None else None,
            population_size=args.population_size,
            sampling_fraction=args.sampling_fraction,
            threshold=args.threshold,
            suda=args.suda,
            suda_max_size=args.suda_max_size,
            dis_fraction=args.dis_fraction,
            records=ReleaseRef(path=args.records) if args.records is not None else None,
            name=args.name,
            attempt=args.attempt,
            ledger=args.ledger,
            fmt=args.input_format,
            delimiter=args.delimiter,
            entity=args.entity,
            weight=args.weight,
        ),
        ctx,
    )
    report_after(args, env, ctx, target)
    return emit(env, args, out, render)


def _fold(text: str, width: int = 88, indent: int = 4) -> str:
    """A sentence folded for the terminal, never inside a word ("re-identify" stays whole)."""
    import textwrap

    lines = textwrap.wrap(
        text, width=width - indent, break_long_words=False, break_on_hyphens=False
    )
    return ("\n" + " " * indent).join(lines or [""])


def render(env: Envelope) -> str:
    """The measures and their sentences, as a person reads them in a terminal."""
    if env.outcome == "already-published":
        return f"risk: {env.summary}\n"
    d = env.details
    rel = env.release
    lines = [
        f"risk of {rel.ref if rel else '?'} ({int(d.get('records') or 0):,} records in "
        f"{int(d.get('groups') or 0):,} groups on {', '.join(d.get('qis') or [])}); "
        "no verdict",
    ]
    for m in d.get("measures") or []:
        value = m.get("value")
        if isinstance(value, float):
            shown = f"{value:.4g}"
        elif value is None:
            shown = "-"
        else:
            shown = str(value)
        lines.append(f"  {m.get('label')}: {shown}")
        lines.append(f"    {_fold(str(m.get('explanation') or ''))}")
    for name, path in env.outputs.items():
        lines.append(f"  wrote {name}: {path}")
    return "\n".join(lines) + "\n"
