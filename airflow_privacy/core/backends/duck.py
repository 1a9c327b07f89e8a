"""The DuckDB counting backend: one ``GROUP BY`` over the release file, in DuckDB.

DuckDB (embedded, no server) reads the Parquet or CSV file itself and returns one row per
distinct ``(group values..., sensitive value)`` with its count: the sufficient statistics
``n_b(s)`` of Martin et al. (2007), section 2.1, and nothing else. It streams the file and
spills to a private temporary folder past its memory limit, so the rows never reach Python.

The checks are those of :mod:`airflow_privacy.core.io` and :meth:`Bucketization.from_arrow`,
in the same order and with the same messages: the header or schema first (unique column
names, the group and sensitive columns present, Parquet column types that can be labels),
then the cells; blank sensitive cells are found with Arrow's own definition
(:func:`airflow_privacy.core.io.blank_mask`) applied to the *distinct* values DuckDB
returns, and refused naming the data row of the first (a second query, only on that error
path) unless ``missing_as`` replaces them; a null group value is refused like the Arrow
path does. Labels are the text of the Python values, as the Arrow path makes them.

SQL safety: the file path and every value (delimiter, quote, the blank values searched for)
are bound parameters; a column name is an identifier quoted by doubling its quotes (Parquet)
or replaced by a generated positional name (CSV, whose header the project parses itself).
The file is reached through a symbolic link with a fixed name in a private folder, so
DuckDB never reads a glob pattern, a ``~`` or a URL scheme from a user's path. DuckDB's own
error text can quote a row of the file: it never enters a message (module
:mod:`airflow_privacy.core.io`, the leak rule).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from airflow_privacy.core.backends import BackendName
from airflow_privacy.core.backends.duck_source import (
    Source,
    as_in_file,
    connection,
    file_kind,
    file_source,
    private_link,
    run,
)
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import duckdb
    import numpy.typing as npt
    import pyarrow as pa

    from airflow_privacy.core.anonymize.plan import Recoding
    from airflow_privacy.core.backends.histogram import Histogram
    from airflow_privacy.core.dp.marginals import Summed
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

    IntArray = npt.NDArray[np.int64]


class DuckDBBackend:
    """Counting with an embedded DuckDB (module doc)."""

    name: BackendName = "duckdb"

    def count(
        self,
        path: Path,
        spec: ReleaseSpec,
        *,
        fmt: Any = None,
        delimiter: str | None = None,
        missing_as: str | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> Bucketization:
        from airflow_privacy.core.model import Bucketization

        table, names = self._group_by(path, spec, fmt, delimiter, missing_as, progress)
        groups, labels, grid = _grid(table, names)
        return Bucketization(spec.group_columns, spec.sensitive, groups, labels, grid)

    def histogram(
        self,
        path: Path,
        qis: Sequence[str],
        sensitive: str,
        *,
        fmt: Any = None,
        delimiter: str | None = None,
        missing_as: str | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> Histogram:
        """The anonymizers' input: one ``GROUP BY qis..., sensitive`` over the file, the
        same checks and messages as :meth:`count`. ``keys`` holds DuckDB's typed values
        (in the file's declared types, as :meth:`count` labels them; the sensitive
        column's blank cells replaced by ``missing_as``, as the Arrow path fills them), so
        that :meth:`write_release` joins a recoding back on them; ``counts`` the records
        of each distinct tuple."""
        from airflow_privacy.core.backends.histogram import Histogram
        from airflow_privacy.core.io import column_names
        from airflow_privacy.core.model import ReleaseSpec

        spec = ReleaseSpec(sensitive=sensitive, group_columns=tuple(qis))
        table, names = self._group_by(
            path, spec, fmt, delimiter, missing_as, progress, ordered=True
        )
        if missing_as is not None:
            # blank cells of several kinds (null, "", " ") are now one value: one row each
            table = table.group_by(list(names), use_threads=False).aggregate([("n", "sum")])
            table = table.rename_columns([*names, "n"]).sort_by([(k, "ascending") for k in names])
        keys = table.select(list(names)).rename_columns([*spec.group_columns, spec.sensitive])
        counts = np.asarray(table.column("n").to_numpy(), dtype=np.int64)
        wanted = set(spec.required_columns())
        kind = fmt or file_kind(path)
        dropped = tuple(c for c in column_names(path, kind, delimiter) if c not in wanted)
        return Histogram(spec.group_columns, spec.sensitive, keys, counts, dropped)

    def write_release(
        self,
        path: Path,
        histogram: Histogram,
        recoding: Recoding,
        target: Path,
        *,
        fmt: Any = None,
        delimiter: str | None = None,
        missing_as: str | None = None,
        output_format: str = "parquet",
        progress: Callable[[str], None] | None = None,
    ) -> int:
        """Apply ``recoding`` (decided on ``histogram``, this backend's histogram of
        ``path``) where the data lives and write the release to exactly ``target``; returns
        the records written. See :mod:`airflow_privacy.core.backends.duck_write`."""
        from airflow_privacy.core.backends.duck_write import write_release

        return write_release(
            path,
            histogram,
            recoding,
            target,
            fmt=fmt,
            delimiter=delimiter,
            missing_as=missing_as,
            output_format=output_format,
            progress=progress,
        )

    def class_counts(
        self,
        path: Path,
        columns: Sequence[str],
        *,
        fmt: Any = None,
        delimiter: str | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> list[tuple[tuple[Any, ...], int]]:
        """``(values, records)`` of every distinct combination of ``columns`` (the
        equivalence classes the risk models count; El Emam and Dankar 2008, section 2):
        one ``GROUP BY`` in DuckDB, the values typed as the file declares (a missing value
        is ``None``: a value of its own, as in the in-process ``group_by``; -0.0 kept apart
        from 0.0, as Arrow does)."""
        import pyarrow as pa

        from airflow_privacy.core.io import _existing_file, column_names, detect_format

        p = _existing_file(path)
        kind = fmt or detect_format(p)
        present = column_names(p, kind, delimiter)
        for c in columns:
            if c not in present:
                raise InputError(f"column {c!r} does not exist in {p.name}")
        if progress is not None:
            progress(f"counting the classes of {path} (DuckDB)")
        with private_link(p, kind) as link, connection() as con:
            source = file_source(p, link, list(columns), kind, delimiter)
            keys = [f"k{i}" for i in range(len(source.exprs))]
            select = ", ".join(f"{e} AS {k}" for e, k in zip(source.exprs, keys, strict=True))
            for i, declared in enumerate(source.types):
                if declared is not None and pa.types.is_floating(declared):
                    e = source.exprs[i]
                    select += f", ({e} = 0 AND signbit({e})) AS z{i}"
            query = f"SELECT {select}, count(*) AS n FROM {source.clause} GROUP BY ALL"
            table = run(con, query, source.params, p, kind)
        cols = [table.column(k).to_pylist() for k in keys]
        signs = {
            i: table.column(f"z{i}").to_pylist()
            for i in range(len(keys))
            if f"z{i}" in table.column_names
        }
        for i, flags in signs.items():  # -0.0 as the file holds it
            cols[i] = [-0.0 if z else v for v, z in zip(cols[i], flags, strict=True)]
        counts = table.column("n").to_pylist()
        return [(tuple(c[r] for c in cols), int(counts[r])) for r in range(table.num_rows)]

    def _group_by(
        self,
        path: Path,
        spec: ReleaseSpec,
        fmt: Any,
        delimiter: str | None,
        missing_as: str | None,
        progress: Callable[[str], None] | None,
        *,
        ordered: bool = False,
    ) -> tuple[pa.Table, list[str]]:
        """DuckDB's ``(k0.., ks, n)`` rows of ``spec``'s columns in ``path``, checked
        (module doc): typed as the file declares, the sensitive blanks refused or replaced,
        no null group value, not empty. ``ordered``: sorted by their values (DuckDB's
        parallel ``GROUP BY`` returns them in any order; a histogram's row order is then
        the same on every run)."""
        import pyarrow as pa

        from airflow_privacy.core.cells import check_missing_as
        from airflow_privacy.core.io import (
            _existing_file,
            column_names,
            detect_format,
        )
        from airflow_privacy.core.model import check_columns

        replacement = check_missing_as(missing_as)
        p = _existing_file(path)
        kind = fmt or detect_format(p)
        check_columns(column_names(p, kind, delimiter), spec)
        if progress is not None:
            progress(f"reading {path} (DuckDB)")
        with private_link(p, kind) as link, connection() as con:
            source = file_source(p, link, spec, kind, delimiter)
            keys = [f"k{i}" for i in range(len(source.exprs))]
            select = ", ".join(f"{e} AS {k}" for e, k in zip(source.exprs, keys, strict=True))
            # SQL groups -0.0 with 0.0; Arrow (and the labels) keep them apart
            for i, declared in enumerate(source.types):
                if declared is not None and pa.types.is_floating(declared):
                    e = source.exprs[i]
                    select += f", ({e} = 0 AND signbit({e})) AS z{i}"
            query = f"SELECT {select}, count(*) AS n FROM {source.clause} GROUP BY ALL"
            if ordered:
                query += " ORDER BY ALL"
            try:
                table = run(con, query, source.params, p, kind)
            except InputError:
                # one reading rule for both backends: a file the Arrow reader accepts (a
                # backslash before a quote, line ends of both kinds) is counted as it reads
                # it; one it refuses is refused with its message
                read = _arrow_reason(p, spec, kind, delimiter)
                if read is None:
                    raise
                if progress is not None:
                    progress(f"DuckDB could not parse {p.name}; counted as the Arrow reader "
                             "reads it")  # fmt: skip
                table = _grouped(read, keys, ordered=ordered)
            table = _checked(table, spec, replacement, p, kind, con, source, keys)
            return table, keys


ARROW_REASON_BYTES = 256 << 20
"""A file DuckDB cannot read and of at most this size (256 MiB) is read again by the Arrow
reader, for its more precise message (the column with invalid UTF-8, the parse error); a
larger one keeps DuckDB's reason in our words, so a bad file never costs its size in
memory."""


def _arrow_reason(
    path: Path, spec: ReleaseSpec, kind: str, delimiter: str | None
) -> pa.Table | None:
    """For a file DuckDB refused, small enough to read again (:data:`ARROW_REASON_BYTES`):
    raise the Arrow reader's own :class:`InputError` when it refuses the file too, or return
    the columns it reads (the file is then valid by the project's reading rule). ``None``
    for a larger file (the caller raises DuckDB's reason)."""
    from airflow_privacy.core.io import read_release

    try:
        if os.stat(path).st_size > ARROW_REASON_BYTES:
            return None
    except OSError:
        return None
    cols = spec.required_columns()
    table: pa.Table = read_release(path, cols, kind, delimiter)  # type: ignore[arg-type]
    return table


def _grouped(table: pa.Table, keys: Sequence[str], *, ordered: bool) -> pa.Table:
    """The Arrow reader's columns as DuckDB's ``(k0.., n)`` rows: each distinct tuple and its
    records, sorted by the tuple when ``ordered``."""
    import pyarrow as pa

    renamed = table.rename_columns(list(keys))
    out = renamed.group_by(list(keys), use_threads=False).aggregate([([], "count_all")])
    out = out.rename_columns([*keys, "n"])
    out = out.set_column(len(keys), "n", out.column("n").cast(pa.int64()))
    if ordered:
        out = out.sort_by([(k, "ascending") for k in keys])
    return out


def _total(counts: Any, mask: Any) -> int:
    import pyarrow.compute as pc

    return int(pc.sum(pc.filter(counts, mask)).as_py() or 0)


def _checked(
    table: pa.Table,
    spec: ReleaseSpec,
    replacement: str | None,
    path: Path,
    kind: str,
    con: duckdb.DuckDBPyConnection,
    source: Source,
    keys: Sequence[str],
) -> pa.Table:
    """DuckDB's ``(k0.., ks, n)`` rows checked as the Arrow path checks a release (module
    doc): the columns in the file's types, the blank sensitive cells refused or replaced
    by ``replacement`` (the column then text), no null group value, not empty."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.cells import blank_cells_message
    from airflow_privacy.core.io import blank_mask

    table = as_in_file(table, keys, source.types)
    counts = table.column("n")
    s_col, blank, textual = blank_mask(table.column(keys[-1]))
    blanks = _total(counts, blank)
    if blanks:
        if replacement is None:
            first = _first_blank(con, source, s_col, blank, textual, path, kind)
            raise InputError(
                blank_cells_message(spec.sensitive, path.name, blanks, f"data row {first}")
            )
        if not textual:
            s_col = pc.cast(s_col, pa.string())
        s_col = pc.if_else(blank, pa.scalar(replacement, s_col.type), s_col)
        table = table.set_column(table.column_names.index(keys[-1]), keys[-1], s_col)
    if _total(counts, pc.is_valid(counts)) == 0:
        raise InputError("the release is empty (0 records)")
    for name, key in zip(spec.group_columns, keys[:-1], strict=True):
        nulls = _total(counts, pc.is_null(table.column(key)))
        if nulls:
            raise InputError(
                f"column {name!r} has {nulls} missing value(s); fill or drop them first"
            )
    return table.select([*keys, "n"])


def _label_codes(col: Any) -> tuple[list[str], IntArray]:
    """``(labels, codes)``: the text of each distinct value as Python writes it (the Arrow
    path's labels; two values with the same text are one label) and each row's label."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = pc.cast(col, col.type.value_type)
    enc = pc.dictionary_encode(col)
    position: dict[str, int] = {}
    remap = np.fromiter(
        (position.setdefault(str(v), len(position)) for v in enc.dictionary.to_pylist()),
        dtype=np.int64,
        count=len(enc.dictionary),
    )
    codes = remap[np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)]
    return list(position), codes


def _grid(
    table: pa.Table, keys: Sequence[str]
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...], IntArray]:
    """``(groups, values, counts)`` of checked ``(k0.., ks, n)`` rows, summed by label, in
    numpy (a million distinct cells cost a fraction of a second, not a Python loop)."""
    from airflow_privacy.core.anonymize.encoding import combine

    coded = [_label_codes(table.column(k)) for k in keys]
    g_labels = [labels for labels, _ in coded[:-1]]
    values, v_codes = coded[-1]
    key, _ = combine([c for _, c in coded[:-1]], [len(lbl) for lbl in g_labels])
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # groups in order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    g_idx = rank[inverse.reshape(-1)]
    n = np.asarray(table.column("n").to_numpy(), dtype=np.int64)
    grid = np.zeros((int(uniq.shape[0]), len(values)), dtype=np.int64)
    np.add.at(grid, (g_idx, v_codes), n)
    rows = first[order]
    parts = [c[rows].tolist() for _, c in coded[:-1]]
    groups = tuple(
        tuple(g_labels[j][code] for j, code in enumerate(row)) for row in zip(*parts, strict=True)
    )
    return groups, tuple(values), grid


def _first_blank(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    s_col: Any,
    blank: Any,
    textual: bool,
    path: Path,
    kind: str,
) -> int:
    """The data row (1 = the first record) of the first blank sensitive cell: the blank
    distinct values are bound as a list parameter, never written into the SQL."""
    import pyarrow.compute as pc

    shown = pc.filter(s_col, pc.and_kleene(blank, pc.is_valid(s_col)))
    blank_values = [str(v) for v in shown.to_pylist()] if textual else []
    cell = source.exprs[-1]
    if kind == "parquet":
        query = (
            f"SELECT min({source.row}) FROM {source.clause} "
            f"WHERE {cell} IS NULL OR list_contains(?, {cell})"
        )
    else:
        # CSV: number the records in file order (one thread keeps DuckDB's scan in order)
        con.sql("SET threads = 1")
        con.sql("SET preserve_insertion_order = true")
        query = (
            f"SELECT min(rn) FROM (SELECT {cell} AS cell, row_number() OVER () AS rn "
            f"FROM {source.clause}) WHERE list_contains(?, cell)"
        )
    found = run(con, query, [*source.params, blank_values], path, kind)
    value = found.column(0)[0].as_py()
    return int(value) if value is not None else 1


def bounded_counts(
    path: Path,
    columns: Sequence[str],
    *,
    entity: str | None = None,
    bound: int = 1,
    fmt: Any = None,
    delimiter: str | None = None,
    progress: Callable[[str], None] | None = None,
    sums: Sequence[Summed] = (),
) -> tuple[pa.Table, np.ndarray]:
    """``SELECT columns..., count(*) ... GROUP BY columns`` over the file with each person's
    records bounded: with ``entity``, at most ``bound`` records of each of its values (the
    first ones in the order of ``columns``' values, a choice that depends on that person's
    records only; which of a person's records are kept may differ between backends that
    order text differently, which the guarantee allows), in the same query. The values as
    text (a Parquet integer 17 is ``17``); the rows sorted by them; a blank cell is null (in
    no key set). With ``sums``, each one's clamped whole values added up per row too (the
    table's ``SUM_PREFIX{i}`` columns, :class:`~airflow_privacy.core.dp.marginals.Summed`),
    over the same records; a value that is not a number is refused. The input of a DP
    release (:mod:`airflow_privacy.core.dp`): only counts and sums leave DuckDB."""
    import pyarrow as pa

    from airflow_privacy.core.dp.marginals import SUM_PREFIX
    from airflow_privacy.core.io import _existing_file, column_names, detect_format

    p = _existing_file(path)
    kind = fmt or detect_format(p)
    summed = [c for c in dict.fromkeys(s.column for s in sums) if c not in columns]
    wanted = [*columns, *summed, *([entity] if entity is not None else [])]
    have = set(column_names(p, kind, delimiter))
    for name in wanted:
        if name not in have:
            raise InputError(
                f"column {name!r} is not in {p.name} (columns: {', '.join(sorted(have))})"
            )
    if progress is not None:
        progress(f"counting {p.name} (DuckDB)")
    with private_link(p, kind) as link, connection() as con:
        source = file_source(p, link, wanted, kind, delimiter)
        text = [f"nullif(CAST({e} AS VARCHAR), '')" for e in source.exprs]
        keys = [f"k{i}" for i in range(len(columns))]
        select = ", ".join(f"{e} AS {k}" for e, k in zip(text, keys, strict=False))
        group = ", ".join(keys)
        at = {c: i for i, c in enumerate(wanted)}
        values = [_clamped(source.exprs[at[x.column]], source.types[at[x.column]], x)
                  for x in sums]  # fmt: skip
        if values:
            select += "".join(f", {v} AS v{i}, {b} AS b{i}" for i, (v, b) in enumerate(values))
        totals = "".join(
            f", CAST(sum(v{i}) AS BIGINT) AS s{i}, bool_or(b{i}) AS b{i}"
            for i in range(len(values))
        )
        # a person's records in the order of their values (typed, as a database orders them)
        typed = [
            e if kind is not None and not pa.types.is_string(kind) and not
            pa.types.is_large_string(kind) else t
            for e, t, kind in zip(source.exprs, text, source.types, strict=False)
        ][: len(columns)]  # fmt: skip
        # then by the text: -0.0 before 0.0, equal as numbers (every backend breaks the tie so)
        order = ", ".join(f"{e} NULLS LAST" for e in [*typed, *text[: len(columns)]])
        inner = f"SELECT {select}"
        if entity is not None:
            inner += f", row_number() OVER (PARTITION BY {text[-1]} ORDER BY {order}) AS r"
        inner += f" FROM {source.clause}"
        query = (
            f"SELECT {group}, count(*) AS n{totals} FROM ({inner})"
            + (f" WHERE r <= {int(bound)}" if entity is not None else "")
            + f" GROUP BY {group} ORDER BY {group}"
        )
        table = run(con, query, source.params, p, kind)
    for i, x in enumerate(sums):
        if any(table.column(f"b{i}").to_pylist()):
            raise InputError(f"column {x.column!r} of {p.name} holds a value that is not a number")
    counts = np.asarray(table.column("n").to_numpy(), dtype=np.int64)
    out = table.select(keys).rename_columns(list(columns))
    result = {c: out.column(c).cast(pa.string()) for c in columns}
    for i in range(len(sums)):
        result[f"{SUM_PREFIX}{i}"] = table.column(f"s{i}").cast(pa.int64())
    return pa.table(result), counts


def _clamped(expr: str, declared: Any, summed: Summed) -> tuple[str, str]:
    """The SQL of one record's value of a summed column (clamped, rounded, a null 0) and of
    whether it is text that is not a number."""
    import pyarrow as pa

    low, high = int(summed.low), int(summed.high)
    numeric = declared is not None and (
        pa.types.is_integer(declared) or pa.types.is_floating(declared)
        or pa.types.is_decimal(declared)
    )  # fmt: skip
    if numeric:
        v, bad = f"CAST({expr} AS DOUBLE)", "false"
    else:
        t = f"nullif(trim(CAST({expr} AS VARCHAR)), '')"
        v, bad = (
            f"TRY_CAST({t} AS DOUBLE)",
            f"({t} IS NOT NULL AND TRY_CAST({t} AS DOUBLE) IS NULL)",
        )
    # greatest and least skip a null: it is 0 by a CASE of its own
    value = (
        f"CASE WHEN {v} IS NULL THEN 0 ELSE "
        f"CAST(floor(least(greatest({v}, {low}), {high}) + 0.5) AS BIGINT) END"
    )
    return value, bad
