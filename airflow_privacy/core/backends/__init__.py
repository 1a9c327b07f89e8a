"""Counting backends: where the one row-level pass of a release runs.

Every engine works on a release's sufficient statistics, its per-group sensitive counts
(Martin et al. 2007, section 2.1: ``n_b(s)`` for every group ``b`` and value ``s``). A
*counting backend* turns a release file into those counts, a
:class:`~airflow_privacy.core.model.Bucketization`; nothing else reads rows. Two backends
count local files today:

* ``arrow``: the in-process path (:func:`airflow_privacy.core.io.read_bucketization`,
  :mod:`airflow_privacy.core.counting`), the fastest for small files; a large Parquet
  file of several row groups is counted one row group at a time over its dictionary codes
  (:mod:`airflow_privacy.core.parquet_stream`), in memory bounded by a row group;
* ``duckdb``: an embedded DuckDB ``GROUP BY`` over ``read_parquet``/``read_csv`` of the
  file (:mod:`airflow_privacy.core.backends.duck`): out of core, only the per-group counts
  come back to Python.

Both make the same input checks with the same errors (missing, duplicate and unreadable
columns, blank sensitive cells refused unless ``missing_as``), and both return the
bucketization in its normalized order (:meth:`Bucketization.normalized`), so the same file
gives equal statistics and equal verdicts whichever counted it. ``auto`` picks Arrow for a
file that is not :func:`large` (a Parquet file under :data:`DUCKDB_MIN_CELLS` cells to
count, rows x columns, from the footer; CSV under :data:`DUCKDB_MIN_BYTES` bytes) and for
a large Parquet file of several row groups of bounded size (:func:`bounded_row_groups`);
DuckDB for every other large file (docs/backends.md).

``spark`` counts a Parquet file or dataset folder with one ``groupBy`` in the Spark session
(:mod:`airflow_privacy.core.backends.spark`, :class:`SparkBackend`): asked for only, never
picked by ``auto`` (a session is costly to start); Spark's own configuration says where it
runs (:func:`spark_session`).

DuckDB also computes an anonymization's histogram
(:meth:`~airflow_privacy.core.backends.duck.DuckDBBackend.histogram`) and writes the
release a recoding decides (:meth:`~airflow_privacy.core.backends.duck.DuckDBBackend.write_release`,
:mod:`airflow_privacy.core.backends.duck_write`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

BackendName = Literal["arrow", "duckdb", "spark"]
BACKENDS: tuple[str, ...] = ("auto", "arrow", "duckdb", "spark")
"""The values of ``backend``: ``auto`` chooses between ``arrow`` and ``duckdb`` by the
file's size and, for Parquet, its row groups (:func:`choose`); ``spark`` is used when
asked for."""
DUCKDB_MIN_BYTES: dict[str, int] = {"csv": 64 << 20, "csv.gz": 4 << 20}
"""Under ``auto``, text files of at least this many bytes are counted by DuckDB, by format:
the two backends take the same time at about 10^6 Adult-shaped rows, 88 MiB of CSV, where
DuckDB already needs less memory (benchmarks/bench_backends.py, docs/benchmarks.md); gzip
CSV (not measured) holds rows about as densely as Parquet."""
DUCKDB_MIN_CELLS = 40_000_000
"""A Parquet file is :func:`large` (not read whole in process) when its rows times the
columns counted reach this many cells (4 x 10^7: 5 x 10^6 rows of eight columns), read
from its footer, not its size in bytes; ``auto`` then counts it with DuckDB unless Arrow
can count it one row group at a time (:func:`bounded_row_groups`: each row group under
this many cells). The in-process path reads text columns as dictionaries and counts their
codes, so its time and memory follow the cells (about 25 ns and 10 bytes a
cell) and hardly the bytes or the groups; DuckDB adds a fixed ~0.2 s and a cost per
distinct ``(group, value)`` cell it returns, and stays in constant memory. Measured
(docs/backends.md): 10^6 Adult-shaped rows x 8 columns (8 x 10^6 cells, 3.1 MiB) 0.22 s
Arrow against 0.30 s DuckDB; 6 x 10^6 rows x 2 columns into 1.3 x 10^6 distinct cells
(1.2 x 10^7 cells, 17 MiB, the (c,k)-safety process) 0.4 s against 1.4 s; 10^7 rows x 8
columns (8 x 10^7 cells, 31.5 MiB) 2.1-2.4 s and 790 MiB read whole against 0.8 s and 190
MiB (a row group at a time: 0.7-1.0 s and 260 MiB)."""


class CountingBackend(Protocol):
    """Per-group sensitive counts of a local release file (module doc)."""

    name: BackendName

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
        """The counts of ``spec``'s group columns and sensitive column in ``path``, in any
        order; blank sensitive cells refused unless ``missing_as`` replaces them."""
        ...


class ArrowBackend:
    """The in-process Arrow path (:func:`airflow_privacy.core.io.read_bucketization`)."""

    name: BackendName = "arrow"

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
        from airflow_privacy.core.io import read_bucketization

        if streamed(path, fmt, spec.required_columns()):
            from airflow_privacy.core.parquet_stream import count_parquet

            return count_parquet(path, spec, missing_as=missing_as, progress=progress)
        return read_bucketization(path, spec, fmt, delimiter, progress, missing_as=missing_as)


def streamed(path: Path, fmt: Any = None, columns: Sequence[str] | None = None) -> bool:
    """Whether the Arrow path counts ``path`` one row group at a time
    (:mod:`airflow_privacy.core.parquet_stream`): a :func:`large` Parquet file whose row
    groups are bounded (:func:`bounded_row_groups`). A smaller file is read whole and
    counted directly, which is faster: the (c,k)-safety process of docs/benchmarks.md
    (6 x 10^6 rows in six row groups, 1.3 million distinct rows) took 2.2 s a row group
    at a time against 0.6 s read whole."""
    try:
        if (fmt or _format(path)) != "parquet":
            return False
        meta, width = _footer(path, columns)
    except (OSError, ValueError):  # the reader names the error
        return False
    return _many_cells(meta, width) and _bounded(meta, width)


class SparkBackend:
    """A Parquet file or dataset folder counted by Spark
    (:func:`airflow_privacy.core.backends.spark.count`) in :func:`spark_session`."""

    name: BackendName = "spark"

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
        from airflow_privacy.core.backends import spark

        check_spark_parquet(path, fmt)
        counted: Bucketization = spark.count(
            path, spec, spark=spark_session(), missing_as=missing_as, progress=progress
        )
        return counted


def check_spark_parquet(path: Path, fmt: Any = None) -> None:
    """Backend ``spark`` reads Parquet (a file or a dataset folder): anything else is bad
    input naming the backend."""
    from airflow_privacy.core.io import detect_format

    if fmt not in (None, "parquet"):
        raise InputError(
            f"{opt('backend')} spark reads Parquet files and folders, not format {fmt!r}: "
            "use arrow or duckdb"
        )
    if path.is_dir() or not path.exists():
        return  # a dataset folder, or missing: Spark's reader names the error
    try:
        kind = detect_format(path)
    except ValueError:
        kind = None
    if kind != "parquet":
        raise InputError(
            f"{opt('backend')} spark reads Parquet files and folders, not {path.name!r}: use "
            "arrow or duckdb"
        )


def spark_session() -> Any:
    """The Spark session of backend ``spark``: the active one, else
    ``SparkSession.builder.getOrCreate()``, which honours Spark's own configuration
    (``SPARK_REMOTE`` for Spark Connect, ``spark-defaults.conf``, ``PYSPARK_SUBMIT_ARGS``;
    docs/spark.md). Never called before a step runs (the command line's start-up imports
    no pyspark)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise InputError(
            f"{opt('backend')} spark needs pyspark: install airflow-privacy[spark]"
        ) from None
    active = SparkSession.getActiveSession()
    return active if active is not None else SparkSession.builder.getOrCreate()


def check_backend(value: object) -> str:
    """``value`` checked as a backend name (:data:`BACKENDS`)."""
    if not isinstance(value, str) or value not in BACKENDS:
        raise InputError(f"{opt('backend')} must be one of {', '.join(BACKENDS)}, got {value!r}")
    return value


def choose(
    requested: str, path: Path, fmt: Any = None, columns: Sequence[str] | None = None
) -> BackendName:
    """The backend that counts ``path``: the one requested, or for ``auto``: Arrow for a
    file that is not :func:`large`; a large Parquet file whose row groups Arrow counts one
    at a time in bounded memory (:func:`bounded_row_groups`) stays with Arrow; any other
    large file goes to DuckDB. Arrow when the file cannot be looked at or its format cannot
    be told (its reader names the error)."""
    chosen = check_backend(requested)
    if chosen == "arrow":
        return "arrow"
    if chosen == "duckdb":
        return "duckdb"
    if chosen == "spark":
        return "spark"
    if not large(path, fmt, columns):
        return "arrow"
    return "arrow" if streamed(path, fmt, columns) else "duckdb"


def _format(path: Path) -> str:
    from airflow_privacy.core.io import detect_format

    return str(detect_format(path))


def large(path: Path, fmt: Any = None, columns: Sequence[str] | None = None) -> bool:
    """Whether ``path`` is too large to read whole in process: a Parquet file of at least
    :data:`DUCKDB_MIN_CELLS` cells to count (``columns``; all when ``None``), from its
    footer; a CSV file of at least :data:`DUCKDB_MIN_BYTES` bytes of its format (a small
    ``.csv.gz`` that decompresses past the CSV limit too). Such a file is counted without
    being read whole, by DuckDB or one row group at a time (:func:`choose`). False when
    the file cannot be looked at or its format cannot be told (its reader names the
    error)."""
    try:
        kind = fmt or _format(path)
        if kind == "parquet":
            return _many_cells(*_footer(path, columns))
        size = os.stat(path).st_size
    except (OSError, ValueError):  # InputError is a ValueError
        return False
    if kind == "csv" and path.name.lower().endswith(".gz"):
        kind = "csv.gz"
        if size < DUCKDB_MIN_BYTES["csv.gz"] and gzip_reaches(path, DUCKDB_MIN_BYTES["csv"]):
            return True  # small, but not once decompressed: DuckDB streams it
    return size >= DUCKDB_MIN_BYTES.get(str(kind), 64 << 20)


GZIP_RATIO_MAX = 1032
"""Deflate's largest compression ratio: a gzip file of ``n`` bytes holds at most about
``1032 n`` (RFC 1951's longest match, 258 bytes, in about 2 bits)."""


def gzip_reaches(path: Path, limit: int) -> bool:
    """Whether the gzip file decompresses to at least ``limit`` bytes: never for a file too
    small to hold them (:data:`GZIP_RATIO_MAX`), else by decompressing it, streaming, until
    ``limit`` (a decompression bomb is seen for what it is, not for its size on disk; at
    most ``limit`` bytes are produced, about 0.1 s for 64 MiB). A file that is not gzip
    reaches nothing here: its reader names the error."""
    import gzip
    import zlib

    try:
        if os.stat(path).st_size * GZIP_RATIO_MAX < limit:
            return False
        seen = 0
        with gzip.open(path, "rb") as fh:
            while seen < limit:
                chunk = fh.read(1 << 20)
                if not chunk:
                    return False
                seen += len(chunk)
        return True
    except (OSError, EOFError, zlib.error):
        return False


def _footer(path: Path, columns: Sequence[str] | None) -> tuple[Any, int]:
    """A Parquet file's metadata and how many of ``columns`` it has (all when ``None``);
    :class:`OSError` or :class:`ValueError` when it is not Parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
    except pa.ArrowException as exc:
        raise ValueError(str(exc)) from None
    names = set(meta.schema.to_arrow_schema().names)
    return meta, len(names) if columns is None else len(set(columns) & names)


def _many_cells(meta: Any, width: int) -> bool:
    """At least :data:`DUCKDB_MIN_CELLS` cells of ``width`` (:func:`large`'s Parquet rule)."""
    return int(meta.num_rows) * width >= DUCKDB_MIN_CELLS


def _bounded(meta: Any, width: int) -> bool:
    """More than one row group, each under :data:`DUCKDB_MIN_CELLS` cells of ``width``."""
    groups = range(meta.num_row_groups)
    return len(groups) > 1 and all(
        meta.row_group(g).num_rows * width < DUCKDB_MIN_CELLS for g in groups
    )


def parquet_cells(path: Path, columns: Sequence[str] | None = None) -> int:
    """Rows times the ``columns`` of a Parquet file that exist (all when ``None``), from
    its footer alone; :class:`OSError` or :class:`ValueError` when it is not Parquet."""
    meta, width = _footer(path, columns)
    return int(meta.num_rows) * width


def bounded_row_groups(path: Path, columns: Sequence[str] | None = None) -> bool:
    """Whether the Arrow path counts a large Parquet file in bounded memory, one row group
    at a time (:mod:`airflow_privacy.core.parquet_stream`), from its footer: it has more
    than one row group and each has fewer than :data:`DUCKDB_MIN_CELLS` cells to count
    (``columns``; all when None). Text columns are read as dictionaries either way (a
    dictionary-encoded column's codes as they are; a plainly written one hashed as it is
    read): at 10^8 Adult-shaped rows both encodings counted this way took no more time
    than DuckDB and less CPU (docs/benchmarks.md), so the row groups decide, not the
    encoding. One huge row group goes to DuckDB."""
    return _bounded(*_footer(path, columns))


def backend(name: BackendName) -> CountingBackend:
    """The backend called ``name``."""
    if name == "duckdb":
        from airflow_privacy.core.backends.duck import DuckDBBackend

        return DuckDBBackend()
    if name == "spark":
        return SparkBackend()
    return ArrowBackend()


def count_release(
    path: str | Path,
    spec: ReleaseSpec,
    *,
    requested: str = "auto",
    fmt: Any = None,
    delimiter: str | None = None,
    missing_as: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Bucketization, BackendName]:
    """The normalized per-group counts of a local release file and the backend that
    counted them (``requested``: ``auto``, ``arrow``, ``duckdb`` or ``spark``)."""
    p = Path(path)
    name = choose(requested, p, fmt, spec.required_columns())
    b = backend(name).count(
        p, spec, fmt=fmt, delimiter=delimiter, missing_as=missing_as, progress=progress
    )
    return b.normalized(), name
