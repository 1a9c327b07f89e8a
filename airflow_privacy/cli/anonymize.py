"""``airflow-privacy anonymize``: write the least-distorted release that passes the criteria.

A thin layer over :func:`airflow_privacy.core.anonymize.anonymize`: parse the options, read
the input, load the hierarchies, run the method, and write the release (and the manifest,
and the QIT / ST tables of a bucketization) atomically: every output goes to a temporary
file first and is renamed into place only when all of them are written, so a failure leaves
nothing behind. Exit 0 = release written, 2 = bad input or no release can pass the criteria.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli.common import (
    EXIT_SAFE,
    Progress,
    add_output_args,
    boolean,
    number,
    write_json,
)
from airflow_privacy.errors import InputError
from airflow_privacy.serialization import json_safe

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.anonymize import AnonymizationResult
    from airflow_privacy.core.hierarchy import Hierarchy

NAME = "anonymize"

_SHORTHAND = ("k", "l", "c", "t", "ordered", "points")
_LATTICE_ONLY = ("utility", "suppression", "max_lattice_size", "disclosure", "disclosure_limit")
_BUCKETIZE_ONLY = ("bucket_column", "qit", "st")


def register(sub: Any) -> None:
    from airflow_privacy.core.anonymize import METHODS, METRICS
    from airflow_privacy.core.criteria.registry import CRITERIA

    p = sub.add_parser(
        NAME,
        help="write a release that passes the criteria (bucketize, lattice, mondrian)",
        description="Anonymize INPUT so that every --criterion passes, and write the "
        "release (re-checkable with `airflow-privacy check`). Exit 0 = written, 2 = bad "
        "input or no release can pass.",
    )
    p.add_argument("input", metavar="INPUT", help="input table (.csv[.gz] or .parquet)")
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
    for key, kind, text in (
        ("k", int, "k of a single --criterion given without parameters (as in `check`)"),
        ("l", float, "l of a single --criterion given without parameters"),
        ("c", float, "c of a single --criterion given without parameters"),
        ("t", float, "t of a single --criterion given without parameters"),
    ):
        p.add_argument(f"--{key}", type=number(kind, f"--{key}"), default=None, help=text)
    p.add_argument(
        "--ordered", type=boolean, default=None,
        help="t-closeness of a single --criterion: ordered distance true/false (default auto)",
    )  # fmt: skip
    p.add_argument(
        "--point", action="append", default=None, dest="points", metavar="L,K,M,C",
        help="skyline point of a single --criterion skyline (repeatable, as in `check`)",
    )  # fmt: skip
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
        metavar="NODES", help="lattice: refuse lattices larger than this (default: 1000000)",
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
        "declined (default: 200000)",
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
                   help="release file to write (.csv[.gz] or .parquet)")  # fmt: skip
    p.add_argument("--manifest", metavar="FILE", help="write the manifest (JSON) here")
    p.add_argument("--qit", metavar="FILE", help="bucketize: also write the QI table (QIT)")
    p.add_argument("--st", metavar="FILE", help="bucketize: also write the sensitive table (ST)")
    p.add_argument(
        "--input-format", choices=("csv", "parquet"), default=None,
        help="input file format (default: from the extension)",
    )  # fmt: skip
    p.add_argument("--delimiter", default=None, help="input CSV delimiter (default: detected)")
    add_output_args(p)


# ------------------------------------------------------------------------- criteria
def _value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text.strip()


def parse_criterion(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME`` or ``NAME:key=value,key=value`` -> ``(name, params)``."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise InputError(f"--criterion {spec!r} has no name")
    params: dict[str, Any] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, val = item.partition("=")
        if not eq or not key.strip():
            raise InputError(f"--criterion {spec!r}: expected PARAM=VALUE, got {item!r}")
        params[key.strip()] = _value(val)
    return name, params


def _criteria_file(path: str) -> list[tuple[str, dict[str, Any]]]:
    import yaml

    p = Path(path)
    if not p.is_file():
        raise InputError(f"criteria file {path!r} does not exist")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise InputError(f"criteria file {path!r} is not valid YAML/JSON: {exc}") from None
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
    parsed = [parse_criterion(s) for s in args.criteria]
    shorthand = {k: getattr(args, k) for k in _SHORTHAND if getattr(args, k) is not None}
    if shorthand:
        if len(parsed) != 1 or parsed[0][1]:
            flags = " ".join(f"--{k}" for k in shorthand)
            raise InputError(
                f"{flags} apply to a single --criterion given without parameters; "
                "with several criteria write NAME:PARAM=VALUE,..."
            )
        parsed = [(parsed[0][0], shorthand)]
    if args.criteria_file:
        parsed.extend(_criteria_file(args.criteria_file))
    if not parsed:
        raise InputError("at least one criterion is required (--criterion NAME[:PARAM=VALUE,...])")
    return parsed


# ---------------------------------------------------------------------- hierarchies
def _pair(option: str, text: str, need_value: bool = True) -> tuple[str, str]:
    col, eq, val = text.partition("=")
    if not col.strip() or (need_value and (not eq or not val.strip())):
        form = "COL=VALUE" if need_value else "COL[=VALUE]"
        raise InputError(f"--{option} expects {form}, got {text!r}")
    return col.strip(), val.strip()


def hierarchy_files(args: argparse.Namespace) -> dict[str, Hierarchy]:
    """The ARX hierarchy files (loaded before the data: errors come early)."""
    from airflow_privacy.core.hierarchy import Hierarchy

    out: dict[str, Hierarchy] = {}
    for text in args.hierarchy:
        col, path = _pair("hierarchy", text)
        out[col] = Hierarchy.from_arx_csv(path, col)
    return out


def built_hierarchies(args: argparse.Namespace, table: pa.Table) -> dict[str, Hierarchy]:
    """Interval and mask hierarchies, built from the values of the data."""
    from airflow_privacy.core.hierarchy import Hierarchy

    out: dict[str, Hierarchy] = {}
    for text in args.interval:
        col, widths = _pair("interval", text)
        try:
            ws = [int(w) for w in widths.split(",")]
        except ValueError:
            raise InputError(f"--interval {text!r}: widths must be whole numbers") from None
        out[col] = Hierarchy.intervals(col, _values(table, col, "interval"), ws)
    for text in args.mask:
        col, depth = _pair("mask", text, need_value=False)
        try:
            d = int(depth) if depth else None
        except ValueError:
            raise InputError(f"--mask {text!r}: the depth must be a whole number") from None
        out[col] = Hierarchy.masks(col, _values(table, col, "mask"), d)
    return out


def _values(table: pa.Table, col: str, option: str) -> list[str]:
    import pyarrow as pa
    import pyarrow.compute as pc

    if col not in table.column_names:
        raise InputError(f"--{option}: column {col!r} does not exist")
    column = table.column(col)
    if column.type != pa.string():
        column = pc.cast(column, pa.string())
    return [str(v) for v in pc.unique(column).to_pylist() if v is not None]


# --------------------------------------------------------------------------- output
def _write_table(table: pa.Table, tmp: Path, final: Path) -> None:
    """Write ``table`` to ``tmp`` in the format ``final``'s extension names."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    from airflow_privacy.core.io import detect_format

    if detect_format(final) == "parquet":
        pq.write_table(table, tmp)
        return
    with pa.OSFile(str(tmp), "wb") as raw:
        if final.suffix.lower() == ".gz":
            with pa.CompressedOutputStream(raw, "gzip") as gz:
                pacsv.write_csv(table, gz)
        else:
            pacsv.write_csv(table, raw)


def write_outputs(outputs: Mapping[Path, Any]) -> None:
    """Write every output (a table or a JSON-ready dict) to a temporary file beside it, then
    rename them all into place; on any failure remove the temporaries (and report an
    :class:`OSError` as one line naming the file)."""
    temps: list[tuple[Path, Path]] = []
    current = Path()
    try:
        for path, content in outputs.items():
            current = path
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            temps.append((tmp, path))
            if isinstance(content, dict):
                with tmp.open("w", encoding="utf-8") as fh:
                    json.dump(json_safe(content), fh, indent=2, allow_nan=False)
                    fh.write("\n")
            else:
                _write_table(content, tmp, path)
        for tmp, path in temps:
            current = path
            tmp.replace(path)
    except BaseException as exc:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            reason = exc.strerror or str(exc)
            raise InputError(
                f"cannot write {str(current)!r}: {reason}; nothing was written"
            ) from None
        raise


def _check_options(args: argparse.Namespace) -> None:
    for opt in _LATTICE_ONLY:
        if getattr(args, opt) is not None and args.method != "lattice":
            raise InputError(f"--{opt.replace('_', '-')} applies to --method lattice only")
    for opt in _BUCKETIZE_ONLY:
        if getattr(args, opt) is not None and args.method != "bucketize":
            raise InputError(f"--{opt.replace('_', '-')} applies to --method bucketize only")
    paths = [args.out, args.manifest, args.qit, args.st]
    given = [Path(p).resolve() for p in paths if p]
    if Path(args.input).resolve() in given:
        raise InputError("an output path is the input file: it would be overwritten")
    if len(set(given)) != len(given):
        raise InputError("two outputs are written to the same path")
    from airflow_privacy.core.io import detect_format

    for p in (args.out, args.qit, args.st):
        if p:
            detect_format(Path(p))


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.core.anonymize import anonymize
    from airflow_privacy.core.anonymize.criteria import CriteriaSet
    from airflow_privacy.core.io import column_names, read_release

    progress = Progress(args.quiet)
    _check_options(args)
    criteria = criteria_from_args(args)
    CriteriaSet.parse(criteria)  # bad names / parameters before reading a large file
    hierarchies = hierarchy_files(args)
    path = Path(args.input)
    header = column_names(path, args.input_format, args.delimiter)
    for col in [*args.qis, args.sensitive]:
        if col not in header:
            raise InputError(f"column {col!r} does not exist in {path.name} "
                             f"(columns: {', '.join(header)})")  # fmt: skip
    progress(f"reading {path}")
    table = read_release(path, None, args.input_format, args.delimiter)
    hierarchies.update(built_hierarchies(args, table))
    options: dict[str, Any] = {"progress": progress}
    if args.method == "lattice":
        for key, opt in (("utility", "utility"), ("suppression", "suppression_limit"),
                         ("max_lattice_size", "max_lattice_size"), ("disclosure", "disclosure"),
                         ("disclosure_limit", "disclosure_limit")):  # fmt: skip
            if getattr(args, key) is not None:
                options[opt] = getattr(args, key)
    if args.method == "bucketize" and args.bucket_column is not None:
        options["bucket_column"] = args.bucket_column
    progress(f"anonymizing {table.num_rows:,} records with {args.method}")
    result = anonymize(
        table, args.qis, args.sensitive, args.method, criteria, hierarchies, args.seed, **options
    )
    outputs: dict[Path, Any] = {Path(args.out): result.release}
    if args.manifest:
        outputs[Path(args.manifest)] = result.manifest.to_dict()
    if args.qit:
        outputs[Path(args.qit)] = result.tables["qit"]
    if args.st:
        outputs[Path(args.st)] = result.tables["st"]
    write_outputs(outputs)
    progress(f"wrote {args.out}")
    if args.format == "json":
        payload = {
            "outputs": {
                "release": args.out, "manifest": args.manifest, "qit": args.qit, "st": args.st,
            },
            "recheck": recheck_command(args, result),
            "manifest": result.manifest.to_dict(),
        }  # fmt: skip
        write_json(payload, out)
    else:
        out.write(render(args, result))
    return EXIT_SAFE


def recheck_command(args: argparse.Namespace, result: AnonymizationResult) -> str:
    groups = " ".join(f"--group {c}" for c in result.group_columns)
    crit = result.manifest.criteria[0]
    params = " ".join(_flag(k, v) for k, v in crit["parameters"].items() if v is not None)
    return (f"airflow-privacy check {args.out} --sensitive {args.sensitive} {groups} "
            f"--criterion {crit['name']} {params}").strip()  # fmt: skip


def _flag(key: str, value: Any) -> str:
    """A parameter as `check` flags: skyline points as ``--point l,k,m,c`` (repeated)."""
    if key == "points":
        return " ".join("--point " + ",".join(f"{x:g}" for x in point) for point in value)
    return f"--{key} {value}"


def render(args: argparse.Namespace, result: AnonymizationResult) -> str:
    m = result.manifest
    d = m.details
    lines = [
        f"anonymize ({m.method}): release written to {args.out}",
        f"  input:    {args.input} ({m.records_in:,} records; {len(m.qis)} QIs; "
        f"sensitive '{m.sensitive}')",
        f"  release:  {m.records_out:,} records in {m.groups:,} groups"
        + (f" ({m.suppressed:,} suppressed)" if m.suppressed else ""),
    ]
    if m.method == "lattice":
        node = ", ".join(f"{k}={v}" for k, v in d["levels"].items())
        s = d["search"]
        if "disclosure" in d:
            lines.append(f"  node:     {node} (first node in {d['utility_metric']} order whose "
                         "disclosure set passes)")  # fmt: skip
        else:
            lines.append(f"  node:     {node} (best {d['utility_metric']} of "
                         f"{d['minimal_nodes_total']} minimal nodes)")  # fmt: skip
        lines.append(f"  search:   {s['nodes_checked']:,} of {s['lattice_size']:,} nodes checked")
        if "disclosure" in d:
            info = d["disclosure"]
            lines.append(f"  disclosure: safe — node {info['rank']} of {info['candidates']} in "
                         f"search order (the naive search publishes node {info['naive_rank']}); "
                         f"disclosure set {info['disclosure_set_size']:,} of "
                         f"{info['block_size']:,} worlds")  # fmt: skip
    elif m.method == "mondrian":
        lines.append(f"  split:    {len(d['partitions']):,} partitions "
                     f"({d['split_attempts']:,} split attempts)")  # fmt: skip
    else:
        lines.append(f"  buckets:  {d['buckets']:,} (l={d['l']} values per round, "
                     f"{d['rounds_per_bucket']} round(s) per bucket)")  # fmt: skip
    for r in m.criteria_results:
        params = ", ".join(f"{k}={v}" for k, v in r.parameters.items() if v is not None)
        lines.append(f"  criterion: {r.criterion} ({params}): SAFE (value {r.value:.6g})")
    util = ", ".join(f"{k}={v:.6g}" for k, v in m.utility.items() if v is not None)
    lines.append(f"  utility:  {util}")
    lines.append(f"  re-check: {recheck_command(args, result)}")
    if args.manifest:
        lines.append(f"  manifest: {args.manifest}")
    return "\n".join(lines) + "\n"
