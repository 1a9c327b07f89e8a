"""Counting backends: where the one row-level pass of a release runs.

Every engine works on a release's sufficient statistics, its per-group sensitive counts
(Martin et al. 2007, section 2.1: ``n_b(s)`` for every group ``b`` and value ``s``). A
*counting backend* turns a release file into those counts, a
:class:`~airflow_privacy.core.model.Bucketization`; nothing else reads rows. Two backends
count local files today:

* ``arrow``: the in-process path (:func:`airflow_privacy.core.io.read_bucketization`,
  :mod:`airflow_privacy.core.counting`), the fastest for small files;
* ``duckdb``: an embedded DuckDB ``GROUP BY`` over ``read_parquet``/``read_csv`` of the
  file (:mod:`airflow_privacy.core.backends.duck`): out of core, only the per-group counts
  come back to Python.

Both make the same input checks with the same errors (missing, duplicate and unreadable
columns, blank sensitive cells refused unless ``missing_as``), and both return the
bucketization in its normalized order (:meth:`Bucketization.normalized`), so the same file
gives equal statistics and equal verdicts whichever counted it. ``auto`` picks DuckDB for
files of at least :data:`DUCKDB_MIN_BYTES` bytes of their format and Arrow below
(docs/backends.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

BackendName = Literal["arrow", "duckdb"]
BACKENDS: tuple[str, ...] = ("auto", "arrow", "duckdb")
"""The values of ``backend``: ``auto`` chooses by the file's size."""
DUCKDB_MIN_BYTES: dict[str, int] = {"parquet": 4 << 20, "csv": 64 << 20, "csv.gz": 4 << 20}
"""Under ``auto``, files of at least this many bytes are counted by DuckDB, by format: the
two backends take the same time at about 10^6 Adult-shaped rows, 3.1 MiB of Parquet and
88 MiB of CSV, where DuckDB already needs less memory (benchmarks/bench_backends.py,
docs/benchmarks.md); gzip CSV (not measured) holds rows about as densely as Parquet."""


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
    """The in-process Arrow path, unchanged (:func:`airflow_privacy.core.io.read_bucketization`)."""

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

        return read_bucketization(path, spec, fmt, delimiter, progress, missing_as=missing_as)


def check_backend(value: object) -> str:
    """``value`` checked as a backend name (:data:`BACKENDS`)."""
    if not isinstance(value, str) or value not in BACKENDS:
        raise InputError(f"{opt('backend')} must be one of {', '.join(BACKENDS)}, got {value!r}")
    return value


def choose(requested: str, path: Path, fmt: Any = None) -> BackendName:
    """The backend that counts ``path``: the one requested, or for ``auto`` DuckDB when
    the file has at least :data:`DUCKDB_MIN_BYTES` bytes of its format (Arrow when it
    cannot be looked at or its format cannot be told: its reader names the error)."""
    chosen = check_backend(requested)
    if chosen == "arrow":
        return "arrow"
    if chosen == "duckdb":
        return "duckdb"
    from airflow_privacy.core.io import detect_format

    try:
        kind = fmt or detect_format(path)
        size = os.stat(path).st_size
    except (OSError, ValueError):  # InputError is a ValueError
        return "arrow"
    if kind == "csv" and path.name.lower().endswith(".gz"):
        kind = "csv.gz"
    return "duckdb" if size >= DUCKDB_MIN_BYTES.get(str(kind), 64 << 20) else "arrow"


def backend(name: BackendName) -> CountingBackend:
    """The backend called ``name``."""
    if name == "duckdb":
        from airflow_privacy.core.backends.duck import DuckDBBackend

        return DuckDBBackend()
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
    counted them (``requested``: ``auto``, ``arrow`` or ``duckdb``)."""
    p = Path(path)
    name = choose(requested, p, fmt)
    b = backend(name).count(
        p, spec, fmt=fmt, delimiter=delimiter, missing_as=missing_as, progress=progress
    )
    return b.normalized(), name
