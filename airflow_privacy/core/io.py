"""Readers for release tables: CSV (delimiter detected) and Parquet, via Arrow.

Reading goes through pyarrow so that only the needed columns are materialized; the
result is an Arrow table that :meth:`Bucketization.from_arrow` counts without pandas.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from airflow_privacy.core.model import Bucketization, ReleaseSpec

Format = Literal["csv", "parquet"]
_DELIMITERS = (",", ";", "\t", "|")


def detect_format(path: Path) -> Format:
    """``parquet`` for ``.parquet``/``.pq``, ``csv`` for ``.csv``/``.tsv``/``.txt`` (+ ``.gz``)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    if last in (".parquet", ".pq"):
        return "parquet"
    if last in (".csv", ".tsv", ".txt"):
        return "csv"
    raise InputError(
        f"cannot tell the format of {str(path)!r} from its extension; "
        "use a .csv or .parquet file (or pass --input-format)"
    )


def sniff_delimiter(path: Path) -> str:
    """The delimiter of a CSV file, judged from its header line (``,``, ``;``, tab or ``|``)."""
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        header = fh.readline()
    if not header.strip():
        raise InputError(f"{str(path)!r} is empty (no header line)")
    best = max(_DELIMITERS, key=header.count)
    return best if header.count(best) > 0 else ","


def read_release(
    path: str | Path,
    columns: Sequence[str] | None = None,
    fmt: Format | None = None,
    delimiter: str | None = None,
) -> pa.Table:
    """Read a release as an Arrow table, keeping only ``columns`` when given.

    Values of CSV files are read as strings (a release's cells are labels such as ``20-39``
    or ``*``), so a group column never changes meaning because it happens to look numeric.
    Raises :class:`InputError` naming the file or column at fault.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    p = _existing_file(path)
    kind = fmt or detect_format(p)
    cols = list(dict.fromkeys(columns)) if columns is not None else None
    try:
        if kind == "parquet":
            schema = pq.read_schema(p)
            if cols is not None:
                _require(cols, list(schema.names), p)
            # ParquetFile reads without the dataset layer (which imports pandas: ~0.4 s)
            return pq.ParquetFile(p).read(columns=cols)
        sep = delimiter or sniff_delimiter(p)
        header = _csv_header(p, sep)
        if cols is not None:
            _require(cols, header, p)
        convert = pacsv.ConvertOptions(
            column_types={c: pa.string() for c in header},
            include_columns=cols,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        )
        return pacsv.read_csv(
            p,
            parse_options=pacsv.ParseOptions(delimiter=sep),
            convert_options=convert,
        )
    except InputError:
        raise
    except (pa.ArrowInvalid, OSError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read {str(p)!r} as {kind}: {first}") from None


def column_names(
    path: str | Path, fmt: Format | None = None, delimiter: str | None = None
) -> list[str]:
    """The column names of a release file, read from its header / schema only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = _existing_file(path)
    kind = fmt or detect_format(p)
    try:
        if kind == "parquet":
            return list(pq.read_schema(p).names)
        return _csv_header(p, delimiter or sniff_delimiter(p))
    except (pa.ArrowInvalid, OSError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read {str(p)!r} as {kind}: {first}") from None


def read_release_frame(
    path: str | Path, columns: Sequence[str] | None = None, fmt: Format | None = None
) -> pd.DataFrame:
    """Like :func:`read_release`, as a pandas DataFrame."""
    frame: pd.DataFrame = read_release(path, columns, fmt).to_pandas()
    return frame


def write_release(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a release table as CSV or Parquet (by extension), atomically."""
    p = Path(path)
    kind = detect_format(p)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    if kind == "parquet":
        frame.to_parquet(tmp, index=False)
    else:
        frame.to_csv(tmp, index=False, compression="gzip" if p.suffix == ".gz" else None)
    tmp.replace(p)
    return p


def _existing_file(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(f"release file {str(p)!r} does not exist")
    if p.is_dir():
        raise InputError(f"release path {str(p)!r} is a directory, expected a file")
    return p


def _csv_header(path: Path, sep: str) -> list[str]:
    import csv

    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
        row = next(csv.reader(fh, delimiter=sep), [])
    return [c.strip() for c in row]


def _require(cols: Sequence[str], present: Sequence[str], path: Path) -> None:
    have = set(present)
    for c in cols:
        if c not in have:
            raise InputError(
                f"column {c!r} does not exist in {path.name} (columns: {', '.join(present)})"
            )


def read_bucketization(
    path: str | Path,
    spec: ReleaseSpec,
    fmt: Format | None = None,
    delimiter: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Bucketization:
    """Read a release file and count it into per-group sensitive counts.

    The header is checked first, so a missing column is reported by its role ("group column
    'age' does not exist") before any data is read; ``progress`` hears when reading starts.
    """
    from airflow_privacy.core.model import Bucketization, check_columns

    check_columns(column_names(path, fmt, delimiter), spec)
    if progress is not None:
        progress(f"reading {path}")
    table = read_release(path, spec.required_columns(), fmt, delimiter)
    return Bucketization.from_arrow(table, spec)
