"""The anonymize step: write the least-distorted release that passes every criterion.

Options are checked and hierarchy files loaded before the data is read; the release, its
manifest (``<release>.manifest.json`` unless placed elsewhere) and, for a bucketization, the
two-table form (QIT / ST) are written together and atomically (:func:`write_outputs`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.io import MANIFEST_SUFFIX
from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.benign import benign_details, benign_values
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.criteria import parse_criteria
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.values import column, columns

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.hierarchy import Hierarchy

METHOD_OPTIONS = {
    "lattice": ("utility", "suppression_limit", "max_lattice_size", "disclosure",
                "disclosure_limit"),
    "bucketize": ("bucket_column",),
    "mondrian": ("categorical_split",),
}  # fmt: skip


@dataclass(frozen=True)
class AnonymizeRequest:
    source: ReleaseRef
    release: ReleaseRef
    qis: Sequence[str]
    sensitive: str
    method: str
    criteria: Any
    hierarchies: Mapping[str, str] = field(default_factory=dict)
    intervals: Mapping[str, Sequence[int]] = field(default_factory=dict)
    masks: Mapping[str, int | None] = field(default_factory=dict)
    seed: int = 0
    options: Mapping[str, Any] = field(default_factory=dict)
    manifest: ReleaseRef | None = None
    qit: ReleaseRef | None = None
    st: ReleaseRef | None = None
    name: str = "anonymize"
    missing_as: str | None = None
    fmt: Any = None
    delimiter: str | None = None
    benign: Sequence[str] = ()
    population: ReleaseRef | None = None
    """A population table containing the source (its QI columns are read): generalized with
    the same hierarchies, for k-map against a population and delta-presence."""
    also_read: Sequence[str] = ()
    """Other files the front end read for this request (the command line's
    ``--criteria-file``): no output may overwrite them either."""
    replace: bool = False
    """Write over outputs that exist already (a release file or table, its manifest, QIT,
    ST); without it an existing output is bad input, named, before any work."""
    backend: str = "auto"
    """Where the anonymization runs (:mod:`airflow_privacy.gate.pushdown`): ``auto``,
    ``arrow`` (in process), ``duckdb`` (a file, out of core), ``sql`` (a SQL table in its
    database, the release a table there), ``spark`` (the release a Spark table, read from a
    Spark table or a Parquet file or folder); recorded in ``details.backend``."""


def _options(req: AnonymizeRequest) -> dict[str, Any]:
    from airflow_privacy.core.anonymize import METHODS

    if req.method not in METHODS:
        raise InputError(f"{opt('method')} must be one of {', '.join(METHODS)}, got {req.method!r}")
    if not isinstance(req.options, Mapping):
        raise InputError(f"{opt('method_options')} must be a mapping")
    allowed = METHOD_OPTIONS[req.method]
    out: dict[str, Any] = {}
    for key, value in req.options.items():
        if value is None:
            continue
        if key not in allowed:
            others = [m for m, keys in METHOD_OPTIONS.items() if key in keys]
            where = f"applies to method {others[0]} only" if others else "is not an option"
            raise InputError(f"{opt(key)} {where} (method {req.method})")
        out[key] = value
    if "max_lattice_size" in out or "disclosure_limit" in out:
        # bounded before anything is read (each bound is what memory can hold)
        from airflow_privacy.core.anonymize.lattice import (
            check_disclosure_limit,
            check_max_lattice_size,
        )

        if "max_lattice_size" in out:
            check_max_lattice_size(out["max_lattice_size"])
        if "disclosure_limit" in out:
            check_disclosure_limit(out["disclosure_limit"])
    if (req.qit or req.st) and req.method != "bucketize":
        raise InputError(f"{opt('qit')} and {opt('st')} apply to method bucketize only")
    if "bucket_column" in out:
        name = out["bucket_column"]
        # a column the release will carry: a name that reads back the same (the CSV header
        # is stripped) and prints on one line
        if (
            not isinstance(name, str)
            or not name.strip()
            or name != name.strip()
            or any(not ch.isprintable() for ch in name)
        ):
            raise InputError(
                f"{opt('bucket_column')} must be a printable column name without leading or "
                f"trailing blanks, got {name!r}"
            )
    return out


def _not_there(ref: ReleaseRef, what: str, option: str, ctx: GateContext) -> None:
    """An output that exists already is bad input without ``replace`` (nothing of the
    user's is written over without being asked to); a Spark table is checked where it is
    written (never written over)."""
    if ref.is_spark:
        return
    if ref.is_table:
        from airflow_privacy.gate.sql_releases import exists
        from airflow_privacy.gate.tables import sql_target

        engine, name = sql_target(ref, ctx)
        there = exists(engine, name)
    elif ref.is_uri:
        there = ctx.connections.exists(str(ref.path), ref.conn)
    else:
        there = ref.local.exists() or ref.local.is_symlink()
    if there:
        raise InputError(
            f"the {what} ({opt(option)}) {ref.describe()} exists already: give {opt('replace')} "
            "to write over it, or another name"
        )


def criteria_file(path: str) -> list[tuple[str, dict[str, Any]]]:
    """The criteria of a YAML or JSON file: a list of ``{name, parameters}`` (or a mapping
    whose ``criteria`` is that list)."""
    from pathlib import Path

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


def _seed(value: Any) -> int:
    if isinstance(value, bool):
        raise InputError(f"{opt('seed')} must be a whole number >= 0, got {value!r}")
    try:
        seed = int(str(value).strip())
    except ValueError:
        raise InputError(f"{opt('seed')} must be a whole number >= 0, got {value!r}") from None
    if seed < 0:
        raise InputError(f"{opt('seed')} must be a whole number >= 0, got {seed}")
    return seed


def hierarchy_files(specs: Mapping[str, str], qis: Sequence[str]) -> dict[str, Hierarchy]:
    """The ARX hierarchy files of QIs (loaded before the data: errors come early)."""
    return _hierarchy_files(specs, qis)


def _hierarchy_files(specs: Mapping[str, str], qis: Sequence[str]) -> dict[str, Hierarchy]:
    from airflow_privacy.core.hierarchy import Hierarchy

    if not isinstance(specs, Mapping):
        raise InputError(f"{opt('hierarchy')}: expected column -> file")
    out: dict[str, Hierarchy] = {}
    for col, path in specs.items():
        _qi(col, qis, "hierarchy")
        out[col] = Hierarchy.from_arx_csv(str(path), col)
    return out


def _hierarchy_paths(specs: Any) -> list[str]:
    """The hierarchy files an anonymization reads (none when ``specs`` is malformed: that
    is refused by :func:`_hierarchy_files`)."""
    return [str(p) for p in specs.values()] if isinstance(specs, Mapping) else []


def _qi(col: str, qis: Sequence[str], what: str) -> None:
    if col not in qis:
        raise InputError(
            f"{opt(what)} is given for column {col!r}, which is not a quasi-identifier "
            f"({opt('qi')}: {', '.join(qis)})"
        )


def _built(
    req: AnonymizeRequest, table: pa.Table, qis: Sequence[str], population: pa.Table | None = None
) -> dict[str, Hierarchy]:
    return built_hierarchies(req.intervals, req.masks, table, qis, population)


def built_hierarchies(
    intervals: Mapping[str, Sequence[int]],
    masks: Mapping[str, int | None],
    table: pa.Table,
    qis: Sequence[str],
    population: pa.Table | None = None,
) -> dict[str, Hierarchy]:
    """Interval and mask hierarchies of QIs, built from the values of the data (and of the
    population, when there is one)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.hierarchy import Hierarchy

    def values(col: str) -> list[str]:
        out: dict[str, None] = {}
        for t in (table, population):
            if t is None or col not in t.column_names:
                continue
            column_ = t.column(col)
            if column_.type != pa.string():
                column_ = pc.cast(column_, pa.string())
            out.update((str(v), None) for v in pc.unique(column_).to_pylist() if v is not None)
        return list(out)

    out: dict[str, Hierarchy] = {}
    for col, widths in intervals.items():
        _qi(col, qis, "interval")
        try:
            ws = [int(w) for w in widths]
        except (TypeError, ValueError):
            raise InputError(f"{opt('interval')} {col}: widths must be whole numbers") from None
        out[col] = Hierarchy.intervals(col, values(col), ws)
    for col, depth in masks.items():
        _qi(col, qis, "mask")
        out[col] = Hierarchy.masks(col, values(col), depth)
    return out


def run_anonymize(req: AnonymizeRequest, ctx: GateContext) -> Envelope:
    """Anonymize ``req.source`` and write the release (module doc)."""
    from airflow_privacy.core.algorithm_aware import anonymize
    from airflow_privacy.core.anonymize import check_population_method
    from airflow_privacy.core.anonymize.criteria import CriteriaSet
    from airflow_privacy.core.cells import describe_columns
    from airflow_privacy.gate.population import check_population_ref
    from airflow_privacy.gate.tables import (
        check_not_input,
        check_writable,
        column_names,
        read_table,
        write_outputs,
    )

    qis = columns(req.qis, "qi")
    sensitive = column(req.sensitive, "sensitive")
    criteria = parse_criteria(req.criteria, "criterion")
    benign = benign_values(req.benign)
    check_population_ref(req.population, req.source)
    check_population_method(
        req.method, CriteriaSet.parse(criteria, benign), req.population is not None
    )
    options = _options(req)
    seed = _seed(req.seed)
    if (req.release.is_table or req.release.is_spark) and req.manifest is None:
        raise InputError(
            f"the release {req.release.describe()} is a "
            f"{'Spark' if req.release.is_spark else 'SQL'} table: give {opt('manifest')}, the "
            "file its manifest is written to"
        )
    if req.release.is_table:
        from airflow_privacy.core.backends.sql import check_name_length
        from airflow_privacy.gate.tables import sql_target

        engine, name = sql_target(req.release, ctx)
        check_name_length(engine, name, f"the release table ({opt('out_release')})")
    manifest_ref = req.manifest or req.release.sibling(MANIFEST_SUFFIX)
    outputs = [("release", req.release), ("manifest", manifest_ref)]
    outputs += [(k, r) for k, r in (("qit", req.qit), ("st", req.st)) if r is not None]
    seen: dict[str, str] = {}
    options_of = {"release": "out_release",
                  "manifest": "manifest" if req.manifest is not None else "out_release",
                  "qit": "qit", "st": "st"}  # fmt: skip
    for what, ref in outputs:
        if not (what == "release" and (ref.is_table or ref.is_spark)):  # written in place
            check_writable(ref, f"the {what}", option=options_of[what],
                           kind="json" if what == "manifest" else "table")  # fmt: skip
        key = ref.describe()
        if req.population is not None and key == req.population.describe():
            raise InputError(f"the {what} would overwrite {opt('population')} {key!r}")
        inputs: list[ReleaseRef | str | None] = [
            req.source, *_hierarchy_paths(req.hierarchies), req.population, *req.also_read,
        ]  # fmt: skip
        check_not_input(ref, f"the {what}", inputs, option=options_of[what])
        if key in seen:
            raise InputError(
                f"the {seen[key]} and the {what} are written to the same place {key!r}"
            )
        seen[key] = what
    if not req.replace:
        for what, ref in outputs:
            _not_there(ref, what, options_of[what], ctx)
    for col in req.intervals:
        if col in req.hierarchies:
            raise InputError(f"column {col!r} has both a hierarchy file and {opt('interval')}")
    hierarchies = _hierarchy_files(req.hierarchies, qis)
    dataset = req.source.is_folder and (req.release.is_spark or req.backend == "spark")
    if req.source.is_spark or dataset:
        from airflow_privacy.gate.spark_tables import spark_column_names

        header = spark_column_names(req.source, ctx)  # a Spark table or Parquet dataset
    else:
        header = column_names(req.source, ctx, fmt=req.fmt, delimiter=req.delimiter)
    for col in [*qis, sensitive]:
        if col not in header:
            raise InputError(
                f"column {col!r} does not exist in {req.source.name} "
                f"(columns: {describe_columns(header)})"
            )
    from airflow_privacy.gate.pushdown import choose

    backend = choose(req.backend, req.source, req.release, ctx, req.fmt, [*qis, sensitive])
    if backend != "arrow":
        if req.population is not None:
            raise InputError(
                f"{opt('population')} is read in process: give {opt('backend')} arrow "
                f"(a population does not apply to backend {backend})"
            )
        if req.qit is not None or req.st is not None:
            raise InputError(
                f"{opt('qit')} and {opt('st')} are written in process: give {opt('backend')} arrow"
            )
        return _anonymize_pushed(req, ctx, backend, qis, sensitive, criteria, benign,
                                 hierarchies, options, seed, manifest_ref, outputs)  # fmt: skip
    ctx.progress(f"reading {req.source.describe()}")
    table = read_table(req.source, None, ctx, fmt=req.fmt, delimiter=req.delimiter,
                       sensitive=sensitive, missing_as=req.missing_as)  # fmt: skip
    population = None
    if req.population is not None:
        population = _population_table(req.population, qis, ctx, req.fmt, req.delimiter)
        options["population"] = population
    hierarchies.update(_built(req, table, qis, population))
    ctx.progress(f"anonymizing {table.num_rows:,} records with {req.method}")
    result = anonymize(
        table, qis, sensitive, req.method,  # type: ignore[arg-type]
        criteria, hierarchies, seed, progress=ctx.progress, benign=benign, **options,
    )  # fmt: skip
    manifest = result.manifest.to_dict()
    contents: dict[ReleaseRef, Any] = {req.release: result.release, manifest_ref: manifest}
    if req.qit is not None:
        contents[req.qit] = result.tables["qit"]
    if req.st is not None:
        contents[req.st] = result.tables["st"]
    write_outputs(contents, ctx)
    ctx.progress(f"wrote {req.release.describe()}")
    extra = (
        {"population": {"ref": req.population.describe(), "records": population.num_rows}}
        if req.population is not None and population is not None
        else {}
    )
    return _envelope(req, result, manifest, seed, benign, outputs, {"backend": "arrow", **extra})


def _anonymize_pushed(
    req: AnonymizeRequest,
    ctx: GateContext,
    backend: str,
    qis: Sequence[str],
    sensitive: str,
    criteria: Any,
    benign: Sequence[str],
    hierarchies: dict[str, Hierarchy],
    options: dict[str, Any],
    seed: int,
    manifest_ref: ReleaseRef,
    outputs: Sequence[tuple[str, ReleaseRef]],
) -> Envelope:
    """The anonymization in the backend (:mod:`airflow_privacy.gate.pushdown`): histogram,
    decision, the release written by the backend, re-checked on its counts."""
    from airflow_privacy.core.model import ReleaseSpec
    from airflow_privacy.gate import pushdown, spark_tables
    from airflow_privacy.gate.tables import write_outputs

    where = pushdown.Where(backend, req.source, req.fmt, req.delimiter, req.missing_as)
    if backend == "spark":
        if req.method == "bucketize":
            raise InputError(
                f"{opt('method')} bucketize is not written by Spark yet (its release would lack "
                f"the QI columns the other backends publish): anonymize with {opt('method')} "
                "lattice or mondrian, or bucketize a Parquet file or a SQL table"
            )
        spark_tables.check_spark_target(req.release, ctx)
    hist = pushdown.histogram(where, qis, sensitive, ctx)
    hierarchies.update(_built(req, hist.keys, qis, None))
    ctx.progress(
        f"anonymizing {hist.records:,} records ({hist.keys.num_rows:,} distinct tuples) "
        f"with {req.method} ({backend})"
    )
    result = pushdown.decide(hist, req.method, criteria, hierarchies, seed, benign, options,
                             ctx.progress)  # fmt: skip
    assert result.recoding is not None
    manifest = result.manifest.to_dict()
    spec = ReleaseSpec(sensitive=sensitive, group_columns=tuple(result.group_columns))
    if backend == "spark":
        spark_tables.write_spark_table(where, hist, result.recoding, req.release, ctx)
        try:
            counted = spark_tables.spark_count(req.release, spec, ctx)
            pushdown.recheck(result, counted, criteria, benign)
            write_outputs({manifest_ref: manifest}, ctx)
        except BaseException:
            spark_tables.drop_spark_table(req.release, ctx)
            raise
    elif backend == "sql":
        # built under a private name, re-checked, then put in place: a failure leaves the
        # old release table as it was
        staging = ReleaseRef(sql_table=pushdown.staging_name(req.release), conn=req.release.conn)
        assert staging.sql_table is not None
        try:
            pushdown.write_table(where, hist, result.recoding, staging.sql_table, ctx)
            pushdown.recheck(result, pushdown.count_table(staging, spec, ctx), criteria,
                             benign)  # fmt: skip
            pushdown.put_table(staging.sql_table, req.release, ctx)
        except BaseException:
            pushdown.drop_table(staging, ctx)
            raise
        write_outputs({manifest_ref: manifest}, ctx)
    else:
        with pushdown.written_file(where, hist, result.recoding, req.release, ctx) as path:
            pushdown.recheck(result, pushdown.count_file(path, spec, ctx), criteria, benign)
            write_outputs({req.release: path, manifest_ref: manifest}, ctx)
    ctx.progress(f"wrote {req.release.describe()}")
    return _envelope(req, result, manifest, seed, benign, outputs, {"backend": backend})


def _envelope(
    req: AnonymizeRequest,
    result: Any,
    manifest: Mapping[str, Any],
    seed: int,
    benign: Sequence[str],
    outputs: Sequence[tuple[str, ReleaseRef]],
    extra: Mapping[str, Any],
) -> Envelope:
    m = result.manifest
    written = {what: ref.describe() for what, ref in outputs}
    return Envelope(
        step="anonymize",
        name=req.name,
        outcome="written",
        safe=True,
        summary=f"{m.method}: {m.records_out:,} records in {m.groups:,} groups pass "
        f"{len(m.criteria_results)} criteria; written to {req.release.describe()}",
        release=ReleaseFacts(
            ref=req.release.describe(),
            records=m.records_out,
            groups=m.groups,
            sensitive=m.sensitive,
            group_columns=list(result.group_columns),
            kind="bucketized" if m.method == "bucketize" else "generalized",
        ),
        results=[r.to_dict() for r in m.criteria_results],
        details={
            "method": m.method,
            "qis": list(m.qis),
            "records_in": m.records_in,
            "records_out": m.records_out,
            "suppressed": m.suppressed,
            "groups": m.groups,
            "group_columns": list(result.group_columns),
            "criteria": manifest["criteria"],
            "utility": manifest["utility"],
            "seed": seed,
            "method_details": _method_details(manifest),
            **benign_details(benign, result.bucketization.values),
            **extra,
        },
        outputs=written,
    )


def _population_table(
    ref: ReleaseRef, qis: Sequence[str], ctx: GateContext, fmt: Any, delimiter: str | None
) -> pa.Table:
    """The QI columns of the population table (checked: every QI is a column of it)."""
    from airflow_privacy.core.cells import describe_columns
    from airflow_privacy.gate.tables import column_names, read_table

    present = column_names(ref, ctx, fmt=fmt, delimiter=delimiter)
    for c in qis:
        if c not in present:
            raise InputError(
                f"{opt('population')} {ref.describe()} has no column {c!r} "
                f"(columns: {describe_columns(present)})"
            )
    ctx.progress(f"reading the population {ref.describe()}")
    return read_table(ref, list(qis), ctx, fmt=fmt, delimiter=delimiter)


def _method_details(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The method's headline facts (levels, search, partitions, buckets), small enough for
    XCom; the whole manifest is in the manifest file."""
    d = manifest.get("details") or {}
    keep: dict[str, Any] = {}
    for key in ("levels", "utility_metric", "minimal_nodes_total", "search", "disclosure",
                "split_attempts", "buckets", "l", "rounds_per_bucket"):  # fmt: skip
        if key in d:
            keep[key] = d[key]
    if "partitions" in d:
        keep["partitions"] = len(d["partitions"])
    return keep
