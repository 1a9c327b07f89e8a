"""What the DuckDB backends share: one private in-memory connection, the ``FROM`` clause that
reads a Parquet or CSV file (through a fixed-name link in a private folder), running a query
with DuckDB's errors turned into one :class:`InputError` in our words, and the labels of
DuckDB's columns as the file types them.

Used by the counting backend (:mod:`airflow_privacy.core.backends.duck`) and the writer
(:mod:`airflow_privacy.core.backends.duck_write`); the SQL safety rules are those of the
counting backend's module doc.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

    from airflow_privacy.core.model import ReleaseSpec


def quote_identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier: in double quotes, each of its own double
    quotes doubled, so any text is a name and never SQL."""
    if "\x00" in name:
        raise InputError(f"column name {name!r} contains a NUL character")
    return '"' + name.replace('"', '""') + '"'


class Source:
    """The ``FROM`` clause reading the file, its parameters and the expression of each
    column wanted (group columns first, the sensitive column last)."""

    def __init__(
        self, clause: str, params: list[Any], exprs: list[str], row: str, types: list[Any]
    ) -> None:
        self.clause = clause
        self.params = params
        self.exprs = exprs
        self.row = row  # the 1-based data row of a record
        self.types = types  # each column's Arrow type in the file (Parquet), or None


def file_kind(path: Path) -> Any:
    from airflow_privacy.core.io import detect_format

    return detect_format(path)


@contextlib.contextmanager
def private_link(path: Path, kind: str) -> Iterator[Path]:
    """A symbolic link to ``path`` with a plain fixed name, in a private folder."""
    from airflow_privacy.core.private_folders import private_folder

    with private_folder("duckdb") as folder:
        suffix = ".parquet" if kind == "parquet" else ".csv"
        if path.name.lower().endswith(".gz"):
            suffix += ".gz"
        link = folder / f"release{suffix}"
        os.symlink(path.resolve(), link)
        yield link


@contextlib.contextmanager
def connection() -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB that loads no extension and spills to a private folder."""
    import duckdb

    from airflow_privacy.core import private_folders

    spill = str(private_folders.make("spill"))
    con = duckdb.connect(
        ":memory:",
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "temp_directory": spill,
            "preserve_insertion_order": False,
        },
    )
    try:
        # DuckDB can draw a progress bar on stderr for a query past two seconds (a COPY, a
        # count of 10^8 rows) in the middle of the step's own output
        con.sql("SET enable_progress_bar = false")
        yield con
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def parquet_source(path: Path, link: Path, spec: ReleaseSpec | Sequence[str]) -> Source:
    """``spec``: its required columns, or the columns themselves."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from airflow_privacy.core.io import _check_parquet_type, _reading

    wanted = wanted_columns(spec)
    with _reading(path, "parquet"):
        schema = pq.read_schema(path)
    for name in wanted:
        _check_parquet_type(name, schema.field(name).type, path)
    types = []
    for name in wanted:
        kind = schema.field(name).type
        types.append(kind.value_type if pa.types.is_dictionary(kind) else kind)
    return Source(
        "read_parquet(?, file_row_number = true)",
        [str(link)],
        [quote_identifier(c) for c in wanted],
        "file_row_number + 1",
        types,
    )


def file_source(
    path: Path, link: Path, spec: ReleaseSpec | Sequence[str], kind: str, delimiter: str | None
) -> Source:
    """The ``FROM`` clause of a Parquet or CSV file (``kind``)."""
    if kind == "parquet":
        return parquet_source(path, link, spec)
    return csv_source(path, link, spec, delimiter)


def wanted_columns(spec: ReleaseSpec | Sequence[str]) -> list[str]:
    return list(spec) if isinstance(spec, Sequence) else list(spec.required_columns())


def csv_source(
    path: Path, link: Path, spec: ReleaseSpec | Sequence[str], delimiter: str | None
) -> Source:
    """Every field as text under a positional name (``c0``, ``c1``, ...; the header is
    the project's own parse, :func:`airflow_privacy.core.io._csv_header`, after the blank
    lines it skips); an empty field is the empty text, as the Arrow reader reads it."""
    from airflow_privacy.core.io import _csv_header, _head

    sep, header = _csv_header(path, delimiter)
    text, _ = _head(path)
    blank_lines = len(text) - len(text.lstrip("\r\n"))
    skip = text[:blank_lines].count("\n") or (1 if blank_lines else 0)
    position = {name: i for i, name in enumerate(header)}
    struct = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(header))) + "}"
    clause = (
        "read_csv(?, delim = ?, quote = ?, escape = ?, skip = ?, header = true, "
        f"columns = {struct}, auto_detect = false, strict_mode = true, "
        "null_padding = false, compression = ?)"
    )
    gz = path.name.lower().endswith(".gz")
    exprs = [f"coalesce(c{position[c]}, '')" for c in wanted_columns(spec)]
    params = [str(link), sep, '"', '"', skip, "gzip" if gz else "none"]
    return Source(clause, params, exprs, "", [None] * len(exprs))


def run(
    con: duckdb.DuckDBPyConnection, query: str, params: Sequence[Any], path: Path, kind: str
) -> pa.Table:
    """Run ``query``; DuckDB's errors become one :class:`InputError` naming the file, in
    words of our own (DuckDB's text can quote a row)."""
    import duckdb

    try:
        result: pa.Table = con.sql(query, params=list(params)).to_arrow_table()
    except duckdb.Error as exc:
        text = str(exc)
        if "UTF" in text or "unicode" in text.lower():
            reason = "it is not valid UTF-8"
        elif kind == "csv":
            reason = (
                "a record does not match the header (a wrong number of fields, or a quote "
                "left open)"
            )
        else:
            reason = f"DuckDB could not read it ({type(exc).__name__})"
        raise InputError(f"cannot read {str(path)!r} as {kind}: {reason}") from None
    return result


def as_in_file(table: pa.Table, keys: Sequence[str], types: Sequence[Any]) -> pa.Table:
    """DuckDB's columns in the types the Parquet file declares, where they differ (a
    timestamp with a time zone comes back in UTC: shown in the file's zone, as the Arrow
    path shows it), and a float zero with its sign (``z{i}``: SQL groups ``-0.0`` with
    ``0.0``), so that both backends write the same labels."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for i, (key, kind) in enumerate(zip(keys, types, strict=True)):
        col = table.column(key)
        if f"z{i}" in table.column_names:  # a negative zero: -|x|
            col = pc.if_else(table.column(f"z{i}"), pc.negate(pc.abs(col)), col)
            table = table.set_column(table.column_names.index(key), key, col)
        if kind is None or col.type == kind:
            continue
        try:
            cast = pc.cast(col, kind)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        table = table.set_column(table.column_names.index(key), key, cast)
    return table
