"""``airflow-privacy anonymize``: write the least-distorted release that passes the criteria.

An adapter over :func:`airflow_privacy.gate.anonymize.run_anonymize` (the same service as
``BucketizeOperator`` / ``AnonymizeLatticeOperator``): the release, its manifest (beside it,
``RELEASE.manifest.json``, unless --manifest says elsewhere) and the QIT / ST tables of a
bucketization are written together and atomically, so a failure leaves nothing behind.
Exit 0 = release written, 2 = bad input or no release can pass the criteria.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.benign import add_benign_arg
from airflow_privacy.cli.common import (
    add_criterion_flags,
    add_input_args,
    add_missing_arg,
    add_output_args,
    column_pairs,
    context,
    criteria_with_shorthand,
    emit,
    number,
    ref,
)
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = "anonymize"

_LATTICE_ONLY = ("utility", "suppression", "max_lattice_size", "disclosure", "disclosure_limit")
_BUCKETIZE_ONLY = ("bucket_column", "qit", "st")


def register(sub: Any) -> None:
    from airflow_privacy.core.criteria.registry import CRITERIA
    from airflow_privacy.vocabulary import CATEGORICAL_SPLITS, METHODS, METRICS

    p = sub.add_parser(
        NAME,
        help="write a release that passes the criteria (bucketize, lattice, mondrian)",
        description="Anonymize INPUT so that every --criterion passes, and write the "
        "release (re-checkable with `airflow-privacy check`). Exit 0 = written, 2 = bad "
        "input or no release can pass.",
    )
    p.add_argument("input", metavar="INPUT",
                   help="input table (.csv[.gz] or .parquet, table:NAME on --conn, or "
                   "spark:NAME in the Spark catalog)")  # fmt: skip
    p.add_argument(
        "--qi", action="append", required=True, metavar="COL", dest="qis",
        help="a quasi-identifier column (repeat for several)",
    )  # fmt: skip
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    p.add_argument(
        "--method", required=True, choices=METHODS,
        help="bucketize (Anatomy: exact QIs + bucket id), lattice (full-domain "
        "generalization over hierarchies) or mondrian (multidimensional partitioning)",
    )  # fmt: skip
    p.add_argument(
        "--criterion", action="append", default=[], dest="criteria",
        metavar="NAME[:PARAM=VALUE,...]",
        help=f"a criterion every release must pass (repeat for several; all must pass), "
        f"e.g. k-anonymity:k=5 or ck-safety:c=0.7,k=3. Names: {', '.join(CRITERIA)}",
    )  # fmt: skip
    p.add_argument(
        "--criteria-file", metavar="FILE",
        help="YAML or JSON list of criteria: [{name: ck-safety, parameters: {c: 0.7, k: 3}}]",
    )  # fmt: skip
    add_criterion_flags(p)
    p.add_argument(
        "--hierarchy", action="append", default=[], metavar="COL=FILE",
        help="ARX hierarchy file (';'-separated, no header) for a QI (repeatable)",
    )  # fmt: skip
    p.add_argument(
        "--interval", action="append", default=[], metavar="COL=W1,W2,...",
        help="numeric hierarchy for a QI: intervals of the given increasing widths, then *",
    )  # fmt: skip
    p.add_argument(
        "--mask", action="append", default=[], metavar="COL[=DEPTH]",
        help="mask hierarchy for a QI: mask the last 1, 2, ... characters (at most DEPTH)",
    )  # fmt: skip
    p.add_argument(
        "--utility", choices=METRICS, default=None,
        help="lattice: metric that picks the published node among the minimal ones "
        "(default: loss)",
    )  # fmt: skip
    p.add_argument(
        "--suppression", type=number(float, "--suppression"), default=None,
        metavar="FRACTION",
        help="lattice: fraction of records that may be suppressed (removed) to pass, "
        "in [0, 1) (default: 0)",
    )  # fmt: skip
    p.add_argument(
        "--max-lattice-size", type=number(int, "--max-lattice-size"), default=None,
        metavar="NODES",
        help="lattice: refuse lattices larger than this (default: 1000000; at most 10000000)",
    )  # fmt: skip
    p.add_argument(
        "--disclosure", choices=("naive", "safe"), default=None,
        help="lattice: naive (publish the first node that passes, the default) or safe "
        "(publish the first node whose disclosure set passes, against an adversary who "
        "knows the search; small tables only, see docs/algorithm-aware.md)",
    )  # fmt: skip
    p.add_argument(
        "--disclosure-limit", type=number(int, "--disclosure-limit"), default=None,
        metavar="WORLDS",
        help="lattice, --disclosure safe: largest block enumerated; larger blocks are "
        "declined (default: 200000; at most 10000000)",
    )  # fmt: skip
    p.add_argument(
        "--categorical-split", choices=CATEGORICAL_SPLITS, default=None,
        help="mondrian: split a categorical QI along its hierarchy (hierarchy: published as "
        "the values' lowest common ancestor) or into two halves of the values present "
        "(halving, as anonypy: published as the set {a|b|c}; labels outside the hierarchy); "
        "auto (the default) makes both and publishes the one with more classes, the "
        "hierarchy's on a tie; see docs/anonymizers.md",
    )  # fmt: skip
    p.add_argument(
        "--bucket-column", default=None, metavar="COL",
        help="bucketize: name of the bucket id column (default: bucket)",
    )  # fmt: skip
    p.add_argument(
        "--seed", type=number(int, "--seed"), default=0,
        help="seed of the published row order and within-bucket permutations (default: 0)",
    )  # fmt: skip
    p.add_argument("--out", required=True, metavar="RELEASE",
                   help="release to write: a file (.csv[.gz] or .parquet), table:NAME on "
                   "--conn when INPUT is a table there (written in the database), or "
                   "spark:NAME (a Spark table written by Spark, from a spark:NAME or Parquet "
                   "INPUT; needs --manifest)")  # fmt: skip
    p.add_argument(
        "--backend", choices=("auto", "arrow", "duckdb", "sql", "spark"), default="auto",
        help="where the anonymization runs: auto (default: a table in its database, a "
        "spark:NAME release by Spark, a file with DuckDB from 4 x 10^7 Parquet cells, else in "
        "process), arrow (in process), duckdb (out of core: counts and the release written "
        "by DuckDB), sql (a table in its database), spark (--out spark:NAME, counted and "
        "written by Spark) (docs/backends.md)",
    )  # fmt: skip
    p.add_argument(
        "--manifest", metavar="FILE",
        help="write the manifest (JSON) here (default: RELEASE.manifest.json)",
    )  # fmt: skip
    p.add_argument("--qit", metavar="FILE", help="bucketize: also write the QI table (QIT)")
    p.add_argument("--st", metavar="FILE", help="bucketize: also write the sensitive table (ST)")
    add_benign_arg(p)
    p.add_argument(
        "--population", metavar="REF", default=None,
        help="lattice, mondrian: a population table containing INPUT (file, URI or "
        "table:NAME), generalized as INPUT is, for k-map without --sampling-fraction/"
        "--population-size and delta-presence",
    )  # fmt: skip
    add_missing_arg(p)
    add_input_args(p)
    add_output_args(p)


# ------------------------------------------------------------------------- criteria
def _criteria_file(path: str) -> list[tuple[str, dict[str, Any]]]:
    from airflow_privacy.core.io import load_yaml, read_text

    text = read_text(Path(path), "criteria", limit=1 << 20)
    data = load_yaml(text, f"criteria file {path!r}")
    if isinstance(data, dict) and "criteria" in data:
        data = data["criteria"]
    if not isinstance(data, list) or not data:
        raise InputError(f"criteria file {path!r} must hold a non-empty list of criteria")
    out = []
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or "name" not in entry:
            raise InputError(
                f"criteria file {path!r}, entry {i + 1}: expected {{name, parameters}}"
            )
        params = entry.get("parameters", entry.get("params", {})) or {}
        if not isinstance(params, dict):
            raise InputError(f"criteria file {path!r}, entry {i + 1}: parameters must be a mapping")
        out.append((str(entry["name"]), dict(params)))
    return out


def criteria_from_args(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """``--criterion`` (with the shorthand flags, as in ``check``) and ``--criteria-file``."""
    parsed = criteria_with_shorthand(args)
    if args.criteria_file is not None:
        parsed.extend(_criteria_file(args.criteria_file))
    if not parsed:
        raise InputError("at least one criterion is required (--criterion NAME[:PARAM=VALUE,...])")
    return parsed


# ---------------------------------------------------------------------- hierarchies
def hierarchy_specs(args: argparse.Namespace) -> dict[str, str]:
    """``--hierarchy COL=FILE`` as ``{col: file}`` (a column at most once)."""
    return column_pairs("hierarchy", args.hierarchy, "COL=FILE")


def interval_specs(args: argparse.Namespace) -> dict[str, list[int]]:
    from airflow_privacy.cli.steps import interval_specs as parse

    return parse("interval", args.interval)


def mask_specs(args: argparse.Namespace) -> dict[str, int | None]:
    from airflow_privacy.cli.steps import mask_specs as parse

    return parse("mask", args.mask)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.anonymize import AnonymizeRequest, run_anonymize
    from airflow_privacy.gate.refs import ReleaseRef

    criteria: list[Any] = list(criteria_from_args(args))
    options: dict[str, Any] = {}
    for key, opt in (("utility", "utility"), ("suppression", "suppression_limit"),
                     ("max_lattice_size", "max_lattice_size"), ("disclosure", "disclosure"),
                     ("disclosure_limit", "disclosure_limit"),
                     ("bucket_column", "bucket_column"),
                     ("categorical_split", "categorical_split")):  # fmt: skip
        if getattr(args, key) is not None:
            options[opt] = getattr(args, key)
    for opt, flag in (("utility", "--utility"), ("suppression_limit", "--suppression"),
                      ("max_lattice_size", "--max-lattice-size"), ("disclosure", "--disclosure"),
                      ("disclosure_limit", "--disclosure-limit")):  # fmt: skip
        if opt in options and args.method != "lattice":
            raise InputError(f"{flag} applies to --method lattice only")
    for opt, flag in (("bucket_column", "--bucket-column"),):
        if opt in options and args.method != "bucketize":
            raise InputError(f"{flag} applies to --method bucketize only")
    if "categorical_split" in options and args.method != "mondrian":
        raise InputError("--categorical-split applies to --method mondrian only")
    if (args.qit or args.st) and args.method != "bucketize":
        raise InputError("--qit and --st apply to --method bucketize only")
    env = run_anonymize(
        AnonymizeRequest(
            source=ref(args.input, args),
            release=(
                ref(args.out, args)
                if args.out.startswith(("table:", "spark:"))
                else ReleaseRef(path=args.out)
            ),
            backend=args.backend,
            also_read=[args.criteria_file] if args.criteria_file is not None else [],
            qis=list(args.qis),
            sensitive=args.sensitive,
            method=args.method,
            criteria=criteria,
            hierarchies=hierarchy_specs(args),
            intervals=interval_specs(args),
            masks=mask_specs(args),
            seed=args.seed,
            options=options,
            manifest=ReleaseRef(path=args.manifest) if args.manifest is not None else None,
            qit=ReleaseRef(path=args.qit) if args.qit is not None else None,
            st=ReleaseRef(path=args.st) if args.st is not None else None,
            missing_as=args.missing_as,
            fmt=args.input_format,
            delimiter=args.delimiter,
            benign=args.benign,
            population=ref(args.population, args) if args.population is not None else None,
        ),
        context(args),
    )
    return emit(env, args, out, render, 0)


def recheck_command(env: Envelope) -> str:
    """The ``check`` command line that re-checks the release's first criterion (with the
    benign values the anonymizer used)."""
    d = env.details
    groups = " ".join(f"--group {c}" for c in d["group_columns"])
    crit = d["criteria"][0]
    params = " ".join(_flag(k, v) for k, v in crit["parameters"].items() if v is not None)
    benign = " ".join(f"--benign {shlex.quote(str(v))}" for v in d.get("benign") or ())
    population = d.get("population")
    if population:
        params = f"{params} --population {population['ref']}".strip()
    if str(env.outputs["release"]).startswith("table:"):  # never the URL: it may hold a password
        params = f"{params} --conn DATABASE_URL".strip()
    return (f"airflow-privacy check {env.outputs['release']} --sensitive "
            f"{env.release.sensitive if env.release else '?'} {groups} "
            f"--criterion {crit['name']} {params} {benign}").strip()  # fmt: skip


def _flag(key: str, value: Any) -> str:
    """A parameter as `check` flags, as its declaration writes it (skyline points as
    ``--point l,k,m,c``, repeated)."""
    from airflow_privacy.core.criteria.registry import parameter_named

    declared = parameter_named(key)
    return declared.cli_words(value) if declared is not None else f"--{key} {value}"


def render(env: Envelope) -> str:
    d = env.details
    md = d.get("method_details") or {}
    method = d["method"]
    lines = [
        f"anonymize ({method}): release written to {env.outputs['release']}",
        f"  input:    {d['records_in']:,} records; {len(d['qis'])} QIs; sensitive "
        f"'{env.release.sensitive if env.release else '?'}'",
        f"  release:  {d['records_out']:,} records in {d['groups']:,} groups"
        + (f" ({d['suppressed']:,} suppressed)" if d.get("suppressed") else ""),
    ]
    if method == "lattice":
        node = ", ".join(f"{k}={v}" for k, v in md["levels"].items())
        s = md["search"]
        if "disclosure" in md:
            lines.append(f"  node:     {node} (first node in {md['utility_metric']} order whose "
                         "disclosure set passes)")  # fmt: skip
        else:
            lines.append(f"  node:     {node} (best {md['utility_metric']} of "
                         f"{md['minimal_nodes_total']} minimal nodes)")  # fmt: skip
        lines.append(f"  search:   {s['nodes_checked']:,} of {s['lattice_size']:,} nodes checked")
        if "disclosure" in md:
            info = md["disclosure"]
            lines.append(f"  disclosure: safe — node {info['rank']} of {info['candidates']} in "
                         f"search order (the naive search publishes node {info['naive_rank']}); "
                         f"disclosure set {info['disclosure_set_size']:,} of "
                         f"{info['block_size']:,} worlds")  # fmt: skip
    elif method == "mondrian":
        lines.append(f"  split:    {md['partitions']:,} partitions "
                     f"({md['split_attempts']:,} split attempts)")  # fmt: skip
    else:
        lines.append(f"  buckets:  {md['buckets']:,} (l={md['l']} values per round, "
                     f"{md['rounds_per_bucket']} round(s) per bucket)")  # fmt: skip
    for r in env.results:
        params = ", ".join(
            f"{k}={'/'.join(map(str, v)) if isinstance(v, list) and k == 'benign' else v}"
            for k, v in r["parameters"].items()
            if v is not None
        )
        lines.append(f"  criterion: {r['criterion']} ({params}): SAFE (value {r['value']:.6g})")
    util = ", ".join(f"{k}={v:.6g}" for k, v in d["utility"].items() if v is not None)
    lines.append(f"  utility:  {util}")
    lines.append(f"  re-check: {recheck_command(env)}")
    lines.append(f"  manifest: {env.outputs['manifest']}")
    return "\n".join(lines) + "\n"
