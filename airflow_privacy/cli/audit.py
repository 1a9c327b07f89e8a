"""``airflow-privacy audit``: the intersection attack of Ganta et al. (2008) on a candidate
release and every earlier release (from the ledger and/or files), gated on PVP_C.

Exit 0 = pass, 1 = blocked, 2 = bad input.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    EXIT_UNSAFE,
    Progress,
    add_output_args,
    number,
    write_json,
)
from airflow_privacy.cli.ledger import LEDGER_HELP, add_release_file_args, open_ledger
from airflow_privacy.cli.report import add_report_arg, check_report_path, report_for
from airflow_privacy.core.composition.identifiers import DEFAULT_KEY_ENV
from airflow_privacy.errors import InputError

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
    p = sub.add_parser(
        NAME,
        help="intersect a candidate with earlier releases (composition attack)",
        description="Run the intersection attack (Ganta, Kasiviswanathan, Smith 2008) on a "
        "candidate release and the earlier releases of the same people, from the ledger and/or "
        "release files: locate every person of the candidate in every release from their QI "
        "values, intersect the groups' sensitive values, report EA, EA-hat, Anon_Drop, C and "
        "PVP_C, and block when PVP_C exceeds the limit. Exit 0 = pass, 1 = blocked, 2 = bad "
        "input.",
    )
    p.add_argument("candidate", metavar="CANDIDATE", help="the candidate release file")
    add_release_file_args(p, "the candidate (and of --prior files without a manifest)")
    p.add_argument(
        "--population",
        metavar="FILE",
        help="the original records of the candidate (exact QI values of its people; default: "
        "the candidate itself when it is bucketized)",
    )
    p.add_argument(
        "--id-column",
        metavar="COL",
        help="identifier column of --population: its keyed hashes tell who is in which "
        "ledger release (needed for --overlap known and recorded with --record)",
    )
    p.add_argument(
        "--key-env",
        default=DEFAULT_KEY_ENV,
        metavar="NAME",
        help=f"environment variable holding the HMAC key (default: {DEFAULT_KEY_ENV})",
    )
    p.add_argument(
        "--ledger",
        metavar="URL",
        help=LEDGER_HELP.replace(
            "(default: $AIRFLOW_PRIVACY_LEDGER_URL, else ./airflow-privacy-ledger.db)",
            "with the earlier releases (default: $AIRFLOW_PRIVACY_LEDGER_URL when set)",
        ),
    )
    p.add_argument(
        "--dataset",
        action="append",
        dest="datasets",
        metavar="NAME",
        help="audit against the published releases of this dataset only (repeatable; "
        "default: every published release in the ledger)",
    )
    p.add_argument(
        "--against",
        action="append",
        metavar="RELEASE",
        help="audit against this ledger release (id or DATASET@VERSION; repeatable)",
    )
    p.add_argument(
        "--prior",
        action="append",
        metavar="FILE",
        help="an earlier release file (repeatable); its manifest, or else the candidate's "
        "columns, say how to read it",
    )
    p.add_argument(
        "--hierarchy",
        action="append",
        metavar="COL=FILE",
        help="ARX hierarchy of a QI whose published labels come from it (repeatable); do not "
        "give one for numeric QIs published as intervals",
    )
    p.add_argument(
        "--overlap",
        choices=("worst-case", "known"),
        default="worst-case",
        help="worst-case: everyone locatable in a release is assumed to be in it (default); "
        "known: from identifier hashes (--id-column, ledger releases imported with them)",
    )
    p.add_argument(
        "--missing-qi",
        choices=("error", "suppressed"),
        default="error",
        help="a candidate QI an earlier release does not publish: an error (default), or "
        "treated as '*' there",
    )
    p.add_argument(
        "--confidence",
        type=confidence,
        default=1.0,
        metavar="C",
        help="confidence of the gate: 1 = perfect breach (default), 0.5, 50%%, 1/3 ...",
    )
    p.add_argument(
        "--max-pvp",
        type=number(float, "--max-pvp"),
        default=0.0,
        metavar="PERCENT",
        help="block when more than this percentage of the overlap is pinned with confidence "
        ">= C (default 0: any such person blocks)",
    )
    p.add_argument(
        "--measure",
        choices=("ganta", "posterior"),
        default="ganta",
        help="gate on Ganta's C_i = 1/|S_i| (default) or on the frequency-aware posterior",
    )
    p.add_argument(
        "--top",
        type=number(int, "--top"),
        default=10,
        metavar="N",
        help="how many of the worst individuals to report (default 10)",
    )
    p.add_argument(
        "--individuals",
        metavar="FILE",
        help="write one row per individual (EA per release, EA-hat, Anon_Drop, C, posterior, "
        "the values left) to this CSV or Parquet file; it is confidential",
    )
    p.add_argument(
        "--record",
        metavar="DATASET",
        help="record the candidate in the ledger under this dataset, as a candidate when it "
        "passes and as blocked (with the reason) when it does not",
    )
    p.add_argument("--version", help="version label for --record (default: the next number)")
    add_report_arg(p)
    add_output_args(p)


def _hierarchies(specs: list[str] | None) -> dict[str, Any]:
    from airflow_privacy.core.hierarchy import Hierarchy

    out: dict[str, Any] = {}
    for spec in specs or []:
        col, sep, path = spec.partition("=")
        if not sep or not col.strip() or not path.strip():
            raise InputError(f"--hierarchy expects COL=FILE, got {spec!r}")
        out[col.strip()] = Hierarchy.from_arx_csv(path.strip(), col.strip())
    return out


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.core.composition.result import check_max_pvp

    progress = Progress(args.quiet)
    check_max_pvp(args.max_pvp)
    if args.top < 0:
        raise InputError(f"--top must be >= 0, got {args.top}")
    url = args.ledger or os.environ.get("AIRFLOW_PRIVACY_LEDGER_URL") or None
    if url is None and not args.prior:
        raise InputError("nothing to audit against: pass --ledger URL and/or --prior FILE")
    if (args.datasets or args.against) and url is None:
        raise InputError("--dataset and --against need a ledger (--ledger URL)")
    if args.record and url is None:
        raise InputError("--record needs a ledger (--ledger URL)")
    if args.overlap == "known" and not args.id_column:
        raise InputError("--overlap known needs --id-column (identifiers of --population)")
    if args.individuals:
        from airflow_privacy.core.io import detect_format

        detect_format(Path(args.individuals))
    html = check_report_path(args.report)
    hierarchies = _hierarchies(args.hierarchy)

    from airflow_privacy.ledger.audit import AuditRequest, run_audit

    ledger = open_ledger(url, create=bool(args.record), key_env=args.key_env) if url else None
    req = AuditRequest(
        candidate=args.candidate,
        population=args.population,
        qis=args.qis,
        sensitive=args.sensitive,
        kind=args.kind,
        bucket=args.bucket,
        manifest=args.manifest,
        fmt=args.input_format,
        delimiter=args.delimiter,
        datasets=args.datasets,
        against=args.against,
        prior_files=args.prior,
        overlap=args.overlap,
        id_column=args.id_column,
        key_env=args.key_env,
        hierarchies=hierarchies,
        missing_qi=args.missing_qi,
        top=args.top,
        confidence=args.confidence,
        max_pvp=args.max_pvp,
        measure=args.measure,
    )
    audit = run_audit(req, ledger, progress)
    cand, candidate, population = audit.cand, audit.cand.release, audit.population
    result, verdict, sources = audit.result, audit.verdict, audit.sources
    progress("done")

    if args.individuals:
        _write_table(result.individuals_table(), Path(args.individuals))
        progress(f"per-individual results written to {args.individuals}")
    recorded = None
    if args.record:
        assert ledger is not None
        recorded = ledger.record(
            args.record,
            candidate,
            version=args.version,
            status="candidate" if verdict.safe else "blocked",
            spec=cand.spec(),
            manifest=cand.manifest,
            criteria=[*((cand.manifest or {}).get("criteria_results") or []), verdict.to_dict()],
            reasons=[] if verdict.safe else [verdict.reason],
            member_hashes=population.id_hashes,
        )
        progress(f"recorded as release #{recorded.id} ({recorded.status})")

    if args.format == "json" or html is not None:
        payload = verdict.to_dict()
        payload["audit"] = result.to_dict()
        payload["candidate"] = {
            "path": str(args.candidate),
            "records": candidate.n_records,
            "groups": candidate.n_groups,
            "kind": candidate.kind,
        }
        payload["priors"] = sources
        payload["population"] = {"path": audit.population_path, "records": population.n}
        payload["recorded"] = (
            {
                "id": recorded.id,
                "dataset": recorded.dataset,
                "version": recorded.version,
                "status": recorded.status,
                "created": recorded.created,
            }
            if recorded is not None
            else None
        )
    if html is not None:
        release = candidate
        groups = [cand.bucket] if release.kind == "bucketized" and cand.bucket else None
        report_for(html, args.candidate, NAME, payload, sensitive=release.sensitive,
                   group_columns=groups or list(release.qis), safe=verdict.safe,
                   reasons=[f"composition: {verdict.reason}"], progress=progress,
                   dataset=recorded.dataset if recorded else None,
                   version=str(recorded.version) if recorded else None,
                   release_id=int(recorded.id) if recorded else None,
                   status=str(recorded.status) if recorded else None)  # fmt: skip
    if args.format == "json":
        write_json(payload, out)
    else:
        out.write(render(verdict, result, args, candidate, recorded))
    return EXIT_SAFE if verdict.safe else EXIT_UNSAFE


def _write_table(table: Any, path: Path) -> None:
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from airflow_privacy.core.io import detect_format

    kind = detect_format(path)
    if not path.parent.exists():
        raise InputError(f"folder {str(path.parent)!r} of --individuals does not exist")
    tmp = path.with_name(path.name + ".tmp")
    if kind == "parquet":
        pq.write_table(table, tmp)
    else:
        pacsv.write_csv(table, tmp)
    tmp.replace(path)


def _pct(c: float) -> str:
    p = c * 100
    return f"{p:.0f}%" if abs(p - round(p)) < 1e-9 else f"{p:.4g}%"


def render(
    verdict: Any, result: Any, args: argparse.Namespace, candidate: Any, recorded: Any
) -> str:
    """The audit as a few lines a person reads in a terminal."""
    word = "PASS" if verdict.safe else "BLOCKED"
    p = verdict.parameters
    lines = [
        f"composition audit (C = {_pct(p['confidence'])}, limit {p['max_pvp']:g}%, "
        f"measure {p['measure']}): {word}",
        f"  candidate:  {args.candidate} ({candidate.n_records:,} records in "
        f"{candidate.n_groups:,} {candidate.kind} groups)",
    ]
    for r in result.releases[1:]:
        lines.append(
            f"  prior:      {r.name} ({r.records:,} records, {r.groups:,} groups): "
            f"{r.located:,} of the candidate's people locatable"
            + (f", {r.present:,} known present" if result.overlap == "known" else "")
            + (f", {r.ambiguous:,} in several groups" if r.ambiguous else "")
        )
    how = "worst case (locatable = present)" if result.overlap == "worst-case" else "known (hashes)"
    lines.append(
        f"  overlap:    {result.overlap_size:,} of {result.population:,} people, {how}; "
        f"{result.candidate_only:,} only in the candidate"
    )
    if result.releases[0].unlocatable:
        ex = result.unlocatable[0]
        lines.append(
            f"  unlocatable in the candidate: {result.releases[0].unlocatable:,} "
            f"(e.g. row {ex['row']}: {ex['reason']})"
        )
    if result.inconsistent:
        lines.append(
            f"  inconsistent: {result.inconsistent:,} people whose value sets do not intersect "
            f"(not in every release they are locatable in)"
        )
    if result.overlap_size:
        share = 100 * result.vp / result.overlap_size
        lines.append(
            f"  VP:         {result.vp:,} of {result.overlap_size:,} lose effective anonymity "
            f"({share:.1f}%)"
        )
        table = result.pvp_table()
        lines.append(
            "  PVP_C:      "
            + "  ".join(f"C={_pct(t['confidence'])}: {t['pvp']:.2f}%" for t in table)
        )
        lines.append(
            "  posterior:  "
            + "  ".join(f"C={_pct(t['confidence'])}: {t['posterior_pvp']:.2f}%" for t in table)
        )
        lines.append(
            "  alone:      "
            + "  ".join(
                f"C={_pct(t['confidence'])}: {t['alone_pvp']:.2f}/{t['alone_posterior_pvp']:.2f}%"
                for t in table
            )
            + "  (candidate without the others: C_i/posterior)"
        )
        av = result.averages
        per = ", ".join(f"{n} {v:.2f}" for n, v in av["prior_ea"].items() if v is not None)
        lines.append(
            f"  anonymity:  effective {per}; after intersecting {av['posterior_ea']:.2f} "
            f"(average drop {av['anon_drop']:.2f}"
            + (f", {100 * av['relative_drop']:.1f}%" if av["relative_drop"] is not None else "")
            + ")"
        )
    lines.append(f"  why:        {_wrap(verdict.reason)}")
    if result.worst and result.overlap_size:
        lines.append("  worst:")
        for b in result.worst:
            lines.append(
                f"    {b.describe()} (C = {b.confidence:.3g}, posterior {b.posterior:.3g})"
            )
    if recorded is not None:
        lines.append(
            f"  recorded:   release #{recorded.id} ({recorded.dataset} v{recorded.version}, "
            f"{recorded.status})"
        )
    return "\n".join(lines) + "\n"


def _wrap(text: str, width: int = 88, indent: int = 14) -> str:
    words = re.split(r"(\s+)", text)
    out, line = [], ""
    for w in words:
        if len(line) + len(w) > width - indent and line.strip():
            out.append(line.rstrip())
            line = w.lstrip()
        else:
            line += w
    out.append(line.rstrip())
    return ("\n" + " " * indent).join(out)
