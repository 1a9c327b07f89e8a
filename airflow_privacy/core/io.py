"""Readers for release tables: CSV (delimiter detected) and Parquet, via Arrow.

Reading goes through pyarrow so that only the needed columns are materialized; the
result is an Arrow table that :meth:`Bucketization.from_arrow` counts without pandas.

Whatever a file holds, reading it ends in a table or in one :class:`InputError` naming the
file (and the column or row at fault), never in a hang, an exhausted memory or a silently
misread column:

* only regular files are opened (a FIFO, a device such as ``/dev/zero`` or a socket is
  refused before it is opened, so reading never blocks on a pipe);
* a CSV header is read from at most :data:`HEADER_LIMIT` bytes (a longer first line is
  refused before anything else is read); a UTF-8 byte-order mark is dropped; invalid UTF-8
  in the header or in a column read is refused, naming the column;
* column names (stripped of whitespace) must be unique, in CSV and Parquet, and a CSV
  column name holds no line break (a quote left open in the header would otherwise swallow
  the rows that follow, and show them in messages);
* Parquet columns of nested or binary types (lists, structs, maps, unions, binary; also
  dictionary-encoded) cannot be published as labels and are refused when read; the other
  types are read as they are (numbers stay numbers, :mod:`airflow_privacy.core.counting`
  turns them into labels);
* corrupt or truncated Parquet, gzip or CSV files are refused with a one-line reason
  (never a cell's content: parse errors are cut before the offending row's text); a CSV
  whose last record leaves a quote open is refused when that field is among the columns
  read (Arrow would read it as a field running to the end of the file);
* blank sensitive cells (null, empty or whitespace only) are refused, or replaced by
  ``missing_as`` (:func:`fill_blanks`), by every reader told which column is sensitive.

Small text inputs written by people (knowledge, criteria and hierarchy files) are read by
:func:`read_text`: a regular file of at most :data:`TEXT_LIMIT` bytes, valid UTF-8.
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
import os
import re
import stat
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from airflow_privacy.core.cells import blank_cells_message, check_missing_as, describe_columns
from airflow_privacy.errors import InputError, front_end, opt

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.model import Bucketization, ReleaseSpec

Format = Literal["csv", "parquet"]
#: the name of a release's manifest is the release's name plus this
MANIFEST_SUFFIX = ".manifest.json"
_DELIMITERS = (",", ";", "\t", "|")
HEADER_LIMIT = 1 << 20
"""Bytes a CSV header line may take (1 MiB)."""
_BOM = b"\xef\xbb\xbf"
_PARSE_ERROR = re.compile(r"^(.*?Expected \d+ columns, got \d+)")
_COLUMN_ERROR = re.compile(r"^In CSV column #(\d+): (.*)$")
_MAX_REASON = 200
TEXT_LIMIT = 16 << 20
"""Bytes a text input (knowledge, criteria or hierarchy file) may take (16 MiB)."""


def detect_format(path: Path) -> Format:
    """``parquet`` for ``.parquet``/``.pq``, ``csv`` for ``.csv``/``.tsv``/``.txt`` (+ ``.gz``)."""
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    if last in (".parquet", ".pq"):
        if gz:
            raise InputError(
                f"{str(path)!r}: Parquet compresses inside the file; name it .parquet, not "
                ".parquet.gz (gzip applies to CSV files)"
            )
        return "parquet"
    if last in (".csv", ".tsv", ".txt"):
        return "csv"
    # the command line can say the format; the operators read it from the name only
    hint = f" (or give {opt('input_format')})" if front_end() == "cli" else ""
    raise InputError(
        f"cannot tell the format of {str(path)!r} from its extension; "
        f"use a .csv or .parquet file{hint}"
    )


def sniff_delimiter(path: str | Path) -> str:
    """The delimiter of a CSV file, judged from its header line (``,``, ``;``, tab or ``|``)."""
    p = _existing_file(path)
    text, truncated = _head(p)
    return _sniff(text, truncated, p)


def _sniff(text: str, truncated: bool, path: Path) -> str:
    header = next((line for line in io.StringIO(text, newline="") if line.strip()), "")
    if truncated and not header.endswith(("\n", "\r")):
        raise _too_long(path)
    if not header.strip():
        raise InputError(f"{str(path)!r} is empty (no header line)")
    best = max(_DELIMITERS, key=header.count)
    return best if header.count(best) > 0 else ","


def fill_blanks(
    table: pa.Table, column: str, missing_as: str | None, source: str = "the release"
) -> pa.Table:
    """``table`` with the blank cells of sensitive ``column`` (null, empty or whitespace
    only) replaced by ``missing_as``; without it, blank cells are an :class:`InputError`
    naming the column, ``source``, how many there are and the data row of the first (1 =
    the first record). Other cells are left exactly as they are."""
    import pyarrow as pa

    replacement = check_missing_as(missing_as)
    if column not in table.column_names:
        raise InputError(
            f"column {column!r} does not exist in {source} "
            f"(columns: {describe_columns(table.column_names)})"
        )
    col = table.column(column)
    kind = col.type
    # the usual case of a dictionary column: no null and no blank entry in any chunk's
    # dictionary (a few values) means no blank cell, without decoding millions of cells
    if (
        pa.types.is_dictionary(kind)
        and col.null_count == 0
        and not any(len(ch.dictionary) and _has_blank(ch.dictionary) for ch in col.chunks)
    ):
        return table
    import pyarrow.compute as pc

    col, blank, textual = blank_mask(col)
    kind = col.type
    count = int(pc.sum(blank).as_py() or 0)
    if count == 0:
        return table
    if replacement is None:
        first = int(pc.index(blank, True).as_py())
        raise InputError(blank_cells_message(column, source, count, f"data row {first + 1}"))
    if not textual:
        col = pc.cast(col, pa.string())
        kind = pa.string()
    filled = pc.if_else(blank, pa.scalar(replacement, kind), col)
    return table.set_column(table.column_names.index(column), column, filled)


def blank_mask(col: Any) -> tuple[Any, Any, bool]:
    """``(column, mask, textual)``: the column (a dictionary or string-view column decoded
    to its values), which of its cells are blank (null; for text also empty or whitespace
    only, as Arrow's ``utf8_trim_whitespace`` trims) and whether it holds text. The one
    definition of a blank sensitive cell, shared by every counting backend."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = col.type
    if pa.types.is_dictionary(kind):
        col = pc.cast(col, kind.value_type)
        kind = kind.value_type
    if getattr(pa.types, "is_string_view", lambda _: False)(kind):
        col = pc.cast(col, pa.string())
        kind = pa.string()
    textual = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    blank = pc.is_null(col)
    if textual:
        # no Python value (not even pa.scalar("")) enters this test: pyarrow asks pandas
        # whether a Python value is one of its objects, importing it (0.3 s of every
        # command's start). Empty after trimming = length 0 = false as a boolean.
        length = pc.utf8_length(pc.utf8_trim_whitespace(col))
        empty = pc.and_kleene(pc.is_valid(col), pc.invert(pc.cast(length, pa.bool_())))
        blank = pc.or_kleene(blank, empty)
    return col, blank, textual


_FEW_VALUES = 4096
"""A dictionary of at most this many values is looked at in Python by :func:`_has_blank`."""


def _has_blank(values: pa.Array) -> bool:
    """Whether a (small) array of dictionary values holds a null, empty or whitespace-only
    value. Up to :data:`_FEW_VALUES` text values are looked at in Python: ``str.strip()``
    removes exactly the characters Arrow's ``utf8_trim_whitespace`` does (the 29 code
    points of ``str.isspace``, checked by a test), so a value is blank for one iff for the
    other, and the process need not import ``pyarrow.compute`` (29 ms)."""
    import pyarrow as pa

    if values.null_count:
        return True
    kind = values.type
    if (pa.types.is_string(kind) or pa.types.is_large_string(kind)) and len(values) <= _FEW_VALUES:
        try:
            texts: list[str] = values.to_pylist()
        except UnicodeDecodeError:  # not UTF-8 (the readers refuse it first): Arrow says so
            pass
        else:
            return not all(text.strip() for text in texts)
    import pyarrow.compute as pc

    if getattr(pa.types, "is_string_view", lambda _: False)(kind):
        values = pc.cast(values, pa.string())
        kind = pa.string()
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        return False
    length = pc.utf8_length(pc.utf8_trim_whitespace(values))
    return not bool(pc.all(pc.cast(length, pa.bool_())).as_py())


def read_release(
    path: str | Path,
    columns: Sequence[str] | None = None,
    fmt: Format | None = None,
    delimiter: str | None = None,
    *,
    sensitive: str | None = None,
    missing_as: str | None = None,
) -> pa.Table:
    """Read a release as an Arrow table, keeping only ``columns`` when given.

    Values of CSV files are read as strings (a release's cells are labels such as ``20-39``
    or ``*``), so a group column never changes meaning because it happens to look numeric.
    ``sensitive`` names the sensitive column (read even when ``columns`` omits it): its
    blank cells are refused, or replaced by ``missing_as`` (:func:`fill_blanks`).
    Raises :class:`InputError` naming the file or column at fault (module doc).
    """
    p = _existing_file(path)
    kind = fmt or detect_format(p)
    replacement = check_missing_as(missing_as)
    cols = list(dict.fromkeys(columns)) if columns is not None else None
    if cols is not None and sensitive is not None and sensitive not in cols:
        cols.append(sensitive)
    table = _read_parquet(p, cols) if kind == "parquet" else _read_csv(p, cols, delimiter)
    if sensitive is not None:
        table = fill_blanks(table, sensitive, replacement, p.name)
    return table


def column_names(
    path: str | Path, fmt: Format | None = None, delimiter: str | None = None
) -> list[str]:
    """The column names of a release file, read from its header / schema only (unique:
    a name given twice is an :class:`InputError`)."""
    p = _existing_file(path)
    kind = fmt or detect_format(p)
    if kind == "parquet":
        with _reading(p, kind):
            import pyarrow.parquet as pq

            names = list(pq.read_schema(p).names)
        _unique(names, p)
        return names
    return _csv_header(p, delimiter)[1]


# ------------------------------------------------------------------------ internals
def _existing_file(path: str | Path, what: str = "release") -> Path:
    """``path`` when it names a regular file (following links); checked before any open,
    so that a FIFO is never opened (opening one blocks until a writer comes)."""
    p = Path(path)
    if "\x00" in str(p):
        raise InputError(f"the {what} path {str(p)!r} contains a NUL character")
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise InputError(f"{what} file {str(p)!r} does not exist") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {str(p)!r}: {_reason(exc)}") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{what} path {str(p)!r} is a directory, expected a file")
    if not stat.S_ISREG(mode):
        raise InputError(f"{what} path {str(p)!r} is {_what(mode)}, not a regular file")
    return p


def is_regular_file(path: str | Path) -> bool:
    """Whether ``path`` names a regular file; False for anything that cannot be looked at
    (a name too long, a symlink loop), where :meth:`Path.is_file` would raise."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


YAML_NODES = 50_000
"""Nodes a YAML/JSON text input may hold (PyYAML composes some 20,000 a second)."""
YAML_DEPTH = 64
"""How deeply its lists and mappings may nest."""


@functools.cache
def _bounded_loader() -> type[Any]:
    """A safe YAML loader that stops at :data:`YAML_NODES` nodes or :data:`YAML_DEPTH`
    levels while it parses, so a huge or deeply nested document ends early and cheaply (an
    alias is one node: the tree is never expanded, and readers walk it without following an
    alias more than once per use)."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        nodes = 0
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.nodes += 1
            self.depth += 1
            try:
                if self.nodes > YAML_NODES or self.depth > YAML_DEPTH:
                    what = (f"more than {YAML_NODES:,} values" if self.nodes > YAML_NODES
                            else f"nested more than {YAML_DEPTH} levels deep")  # fmt: skip
                    raise yaml.composer.ComposerError(
                        None,
                        None,
                        f"too large: {what}",
                        self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader


def _yaml_error(exc: Exception, source: str) -> InputError:
    import yaml

    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        line = f" line {mark.line + 1}" if mark is not None else ""
        what = exc.problem or exc.context or "syntax error"
    else:
        line, what = "", str(exc) or type(exc).__name__
    what = what.strip().splitlines()[0] if what.strip() else "syntax error"
    return InputError(f"{source}{line}: not valid YAML/JSON: {what}")


def compose_yaml(text: str, source: str) -> Any:
    """The YAML/JSON ``text`` as a node tree (``yaml.Node``; None for an empty document),
    within :data:`YAML_NODES` and :data:`YAML_DEPTH`; every error one line naming
    ``source`` and the line."""
    return _bounded_load(text, source, nodes=True)


def load_yaml(text: str, source: str) -> Any:
    """The YAML/JSON ``text`` as plain data (safe types only), bounded as
    :func:`compose_yaml`."""
    return _bounded_load(text, source, nodes=False)


def _bounded_load(text: str, source: str, *, nodes: bool) -> Any:
    import yaml

    loader = None
    try:
        loader = _bounded_loader()(text)  # refuses control characters at once
        return loader.get_single_node() if nodes else loader.get_single_data()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, source) from None
    except RecursionError:
        raise InputError(f"{source}: not valid YAML/JSON: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def read_text(path: str | Path, what: str, limit: int = TEXT_LIMIT) -> str:
    """A text input written by people (a knowledge, criteria or hierarchy file): a regular
    file (never a FIFO or a device, which could block or never end) of at most ``limit``
    bytes, valid UTF-8 (a byte-order mark is dropped). Errors name ``what``."""
    p = _existing_file(path, what)
    try:
        with _open_regular(p, what) as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what} {str(p)!r}: {_reason(exc)}") from None
    if len(data) > limit:
        raise InputError(f"{what} {str(p)!r} is larger than {limit / (1 << 20):g} MiB")
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} {str(p)!r} is not valid UTF-8 (byte {exc.start + 1}); save it as UTF-8"
        ) from None


def _what(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def _open_regular(path: Path, what: str = "release") -> IO[bytes]:
    """``path`` opened for reading bytes, without blocking, and checked again once open (a
    file swapped for a FIFO after :func:`_existing_file` cannot hang the reader); errors
    name ``what`` (``release``, ``knowledge``, ``criteria``, ...), as
    :func:`_existing_file` does."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(f"{what} path {str(path)!r} is {_what(mode)}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _head(path: Path) -> tuple[str, bool]:
    """The first :data:`HEADER_LIMIT` bytes of the (decompressed, for ``.gz``) file as text,
    without a byte-order mark (bytes that are not UTF-8 kept as surrogates, refused where
    they are used), and whether the file goes on beyond them."""
    want = HEADER_LIMIT + len(_BOM) + 1
    with _reading(path, "csv"), _open_regular(path) as raw:
        if path.suffix.lower() == ".gz":
            with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                data = unzipped.read(want)
        else:
            data = raw.read(want)
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    truncated = len(data) > HEADER_LIMIT
    return data[:HEADER_LIMIT].decode("utf-8", errors="surrogateescape"), truncated


def _too_long(path: Path) -> InputError:
    return InputError(
        f"the header line of {path.name} is longer than {HEADER_LIMIT // (1 << 20)} MiB; "
        "is it a CSV file with this delimiter?"
    )


def _csv_header(path: Path, delimiter: str | None) -> tuple[str, list[str]]:
    """The delimiter (``delimiter``, else detected) and the column names of a CSV file: its
    first non-blank record (quoted fields may span lines), each name stripped of
    whitespace; unique and valid UTF-8. Reads :data:`HEADER_LIMIT` bytes at most."""
    if delimiter is not None and (len(delimiter) != 1 or delimiter in '"\r\n'):
        raise InputError(
            f"{opt('delimiter')} must be one character (not a quote or a line break), "
            f"got {delimiter!r}"
        )
    text, truncated = _head(path)
    sep = delimiter or _sniff(text, truncated, path)
    return sep, _parse_header(text, truncated, path, sep)


def _parse_header(text: str, truncated: bool, path: Path, sep: str) -> list[str]:
    stream = io.StringIO(text, newline="")
    try:
        reader = csv.reader(stream, delimiter=sep)
        row: list[str] = []
        for row in reader:
            if row:
                break
    except csv.Error as exc:
        raise InputError(f"cannot read the header of {path.name}: {_reason(exc)}") from None
    if truncated and stream.tell() >= len(text):
        raise _too_long(path)
    if not row:
        raise InputError(f"{str(path)!r} is empty (no header line)")
    names = [c.strip() for c in row]
    for i, name in enumerate(names):
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"the header of {path.name} is not valid UTF-8 (column {i + 1}); "
                "save the file as UTF-8"
            ) from None
        if "\n" in name or "\r" in name:
            raise InputError(
                f"the header of {path.name} has a line break in column {i + 1} (a quote left "
                "open?); column names are one line each"
            )
    _unique(names, path)
    return names


def _unique(names: Sequence[str], path: Path) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(
                f"column {name!r} appears more than once in {path.name}; rename or drop one of them"
            )
        seen.add(name)


def _require(cols: Sequence[str], present: Sequence[str], path: Path) -> None:
    have = set(present)
    for c in cols:
        if c not in have:
            raise InputError(
                f"column {c!r} does not exist in {path.name} (columns: {describe_columns(present)})"
            )


def _read_csv(path: Path, cols: list[str] | None, delimiter: str | None) -> pa.Table:
    """Every (or the ``cols``) column(s) of a CSV file as strings, named by the header.

    Arrow parses the header as a data row under generated names (``f0``, ``f1``, ...), so
    the columns are picked by position and named with the stripped names of
    :func:`_csv_header`; the parsed header is compared with them and dropped.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    sep, header = _csv_header(path, delimiter)
    if cols is not None:
        _require(cols, header, path)
    wanted = cols if cols is not None else header
    position = {name: i for i, name in enumerate(header)}
    fields = [f"f{position[c]}" for c in wanted] or ["f0"]  # [] would mean every column
    convert = pacsv.ConvertOptions(
        column_types={f"f{i}": pa.string() for i in range(len(header))},
        include_columns=fields,
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    with _reading(path, "csv", header):
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(autogenerate_column_names=True),
            parse_options=pacsv.ParseOptions(delimiter=sep),
            convert_options=convert,
        )
    if table.num_rows == 0 or table.num_columns != len(fields):
        raise InputError(f"cannot read {str(path)!r} as csv: its header could not be parsed")
    parsed = [str(table.column(i)[0].as_py()).strip() for i in range(table.num_columns)]
    if wanted and parsed != list(wanted):
        raise InputError(
            f"cannot read {str(path)!r} as csv: its header is ambiguous (check its quoting)"
        )
    body = table.slice(1)
    if body.num_rows:
        # Arrow reads a quote left open at the end of the file as a field running to the
        # end (a truncated file): its value then ends with the file's last line break
        for i in range(body.num_columns):
            last = body.column(i)[-1].as_py()
            if isinstance(last, str) and last.endswith(("\n", "\r")):
                raise InputError(
                    f"cannot read {str(path)!r} as csv: its last record ends inside a quoted "
                    f"field (column {wanted[i]!r}); is the file truncated?"
                )
    return body.rename_columns(list(wanted)) if wanted else body.select([])


def _read_parquet(path: Path, cols: list[str] | None, *, dictionaries: bool = False) -> pa.Table:
    """The columns ``cols`` of a Parquet file (all when ``None``), checked. With
    ``dictionaries``, text columns are read as Arrow dictionaries (``read_dictionary``):
    the file's dictionary pages become the dictionary and each cell a 4-byte index, where
    decoding would allocate every cell's string (a 38.5 MB file of 3 x 10^7 rows peaked at
    2.2 GB); the values, and the labels counted from them, are the same."""
    import pyarrow.parquet as pq

    with _reading(path, "parquet"):
        wanted, text = parquet_columns(path, cols)
        # ParquetFile reads without the dataset layer (which imports pandas: ~0.4 s)
        with pq.ParquetFile(path, read_dictionary=text if dictionaries else None) as pf:
            if dictionaries and pf.num_row_groups > 1:
                table: pa.Table = _read_unified(pf, wanted)
            else:
                table = pf.read(columns=cols)
    check_utf8(table, path.name)
    return table


def parquet_columns(
    path: Path, cols: list[str] | None, schema: pa.Schema | None = None
) -> tuple[list[str], list[str]]:
    """The columns ``cols`` (all when ``None``) of a Parquet file checked from its schema
    (no column twice, every one present, each a type that can be a label) and which of
    them hold text (read as dictionaries by the counting). ``schema``: the file's, when
    the caller has read it already. Call inside ``_reading``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if schema is None:
        schema = pq.read_schema(path)
    names = list(schema.names)
    _unique(names, path)
    if cols is not None:
        _require(cols, names, path)
    wanted = cols if cols is not None else names
    for name in wanted:
        _check_parquet_type(name, schema.field(name).type, path)
    text = [
        c
        for c in wanted
        if pa.types.is_string(schema.field(c).type)
        or pa.types.is_large_string(schema.field(c).type)
    ]
    return wanted, text


def check_utf8(
    table: pa.Table,
    source: str,
    names: Mapping[str, str] | None = None,
    *,
    data_rows: bool = True,
    start: int = 0,
) -> None:
    """Refuse a text column holding bytes that are not UTF-8 (Parquet's reader, and Spark's,
    do not check them; every later step would fail on them), naming the column (``names``
    maps a table's column to the user's name) and, for ``data_rows``, its first bad row
    (``start``: the data rows before the table's first).
    Text columns are validated by Arrow in C++; a dictionary column through its
    dictionaries, which is all its text."""
    import pyarrow as pa

    for name in table.column_names:
        col = table.column(name)
        kind = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            continue
        offset = start
        for i, chunk in enumerate(col.chunks):
            text = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
            try:
                text.validate(full=True)
            except pa.ArrowInvalid:
                shown = (names or {}).get(name, name)
                where = ""
                # a dictionary (shared by the row groups once unified) may hold the bad
                # text before any row of this chunk uses it: the first later row that does
                rest = col.chunks[i:] if pa.types.is_dictionary(chunk.type) else [chunk]
                at = offset
                for later in rest if data_rows else []:
                    where = _first_bad_row(later, text if later is chunk else later.dictionary,
                                           kind, at)  # fmt: skip
                    if where:
                        break
                    at += len(later)
                raise InputError(
                    f"column {shown!r} of {source} holds text that is not valid UTF-8"
                    f"{where}; re-encode it as UTF-8"
                ) from None
            offset += len(chunk)


def _first_bad_row(chunk: Any, text: Any, kind: Any, offset: int) -> str:
    """`` (data row N first)``: the first row of ``chunk`` (rows before it: ``offset``)
    whose text, or whose dictionary entry, is not UTF-8; empty when none is found."""
    import pyarrow as pa
    import pyarrow.compute as pc

    raw = text.view(pa.large_binary() if pa.types.is_large_string(kind) else pa.binary())
    bad = [i for i, v in enumerate(raw.to_pylist()) if v is not None and not _is_utf8(v)]
    if not bad:
        return ""
    first: int | None = bad[0]
    if pa.types.is_dictionary(chunk.type):
        rows = pc.index_in(chunk.indices, value_set=pa.array(bad, chunk.indices.type))
        first = pc.index(pc.is_valid(rows), True).as_py()
    if first is None or first < 0:
        return ""
    return f" (data row {offset + first + 1:,} first)"


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


UNIFY_LIMIT = 1 << 16
"""A dictionary column whose values outgrow this while :func:`_read_unified` reads row
groups keeps its later row groups' own dictionaries (unified once by the counting), since
matching every row group against a large dictionary would cost its size each time."""


def _read_unified(pf: Any, names: list[str]) -> pa.Table:
    """The columns ``names`` of an open Parquet file, one row group at a time, each
    dictionary column's row groups re-coded onto one dictionary as they are read (the
    values in order of first appearance, as ``Table.unify_dictionaries`` orders them), so
    the counting's unification copies nothing and only one row group is decoded at a time.
    The same table as ``pf.read`` followed by ``unify_dictionaries``."""
    import pyarrow as pa

    known: dict[str, Any] = {}
    done: dict[str, list[Any]] = {n: [] for n in names}  # finished chunks
    codes: dict[str, list[Any]] = {n: [] for n in names}  # indices into known[n]
    own: set[str] = set()  # columns past UNIFY_LIMIT: later chunks keep their dictionary
    fields: dict[str, Any] = {}
    for i in range(pf.num_row_groups):
        part = pf.read_row_group(i, columns=names)
        for name in names:
            column = part.column(name)
            fields.setdefault(name, part.schema.field(name))
            for chunk in column.chunks:
                if not pa.types.is_dictionary(chunk.type) or name in own:
                    done[name].append(chunk)
                    continue
                seen = known.get(name)
                if seen is None:
                    known[name] = chunk.dictionary
                    codes[name].append(chunk.indices)
                    continue
                if chunk.dictionary.equals(seen):
                    # the usual file: its writer kept one dictionary for every row group
                    codes[name].append(chunk.indices)
                    continue
                import pyarrow.compute as pc

                pos = pc.index_in(chunk.dictionary, value_set=seen)
                fresh = pc.filter(chunk.dictionary, pc.is_null(pos))
                if len(fresh):
                    seen = pa.concat_arrays([seen, fresh])
                    known[name] = seen
                    pos = pc.index_in(chunk.dictionary, value_set=seen)
                codes[name].append(pc.take(pos.cast(chunk.indices.type), chunk.indices))
                if len(seen) > UNIFY_LIMIT:
                    done[name] = [pa.DictionaryArray.from_arrays(ix, seen) for ix in codes[name]]
                    codes[name] = []
                    own.add(name)
        del part
    columns = []
    for name in names:
        chunks = done[name] + [
            pa.DictionaryArray.from_arrays(ix, known[name]) for ix in codes[name]
        ]
        columns.append(pa.chunked_array(chunks, type=fields[name].type))
    return pa.Table.from_arrays(columns, names=names)


def _check_parquet_type(name: str, kind: pa.DataType, path: Path) -> None:
    """Refuse a column whose values cannot be labels (nested or binary)."""
    import pyarrow as pa

    inner = kind.value_type if pa.types.is_dictionary(kind) else kind
    t = pa.types
    binary = (
        t.is_binary(inner)
        or t.is_large_binary(inner)
        or t.is_fixed_size_binary(inner)
        or (hasattr(t, "is_binary_view") and t.is_binary_view(inner))
    )
    if t.is_nested(inner) or binary:
        what = "a nested type" if t.is_nested(inner) else "a binary type"
        raise InputError(
            f"column {name!r} of {path.name} has type {kind} ({what}), which cannot be read "
            "as labels; store it as text or numbers"
        )


class _reading:
    """Turn what a reader library raises on a bad file into one :class:`InputError` that
    names the file (and, for invalid UTF-8, the column)."""

    def __init__(self, path: Path, kind: str, header: Sequence[str] = ()) -> None:
        self.path = path
        self.kind = kind
        self.header = header

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        import pyarrow as pa

        if exc is None or isinstance(exc, InputError):
            return
        if not isinstance(
            exc,
            pa.ArrowException | OSError | EOFError | UnicodeError | csv.Error | zlib.error,
        ):
            return
        reason = _reason(exc)
        if "straddl" in reason:  # Arrow: a record longer than its block (1 MiB)
            reason = "a record is longer than 1 MiB (a quote left open, or a huge cell?)"
        m = _COLUMN_ERROR.match(reason)
        if m:
            i = int(m.group(1))
            col = f"column {self.header[i]!r}" if i < len(self.header) else f"column {i + 1}"
            if "UTF8" in m.group(2) or "UTF-8" in m.group(2):
                raise InputError(
                    f"{self.path.name} is not valid UTF-8 ({col}); save the file as UTF-8"
                ) from None
            reason = f"{col}: {m.group(2)}"
        elif isinstance(exc, UnicodeError):
            reason = "it is not valid UTF-8"
        raise InputError(f"cannot read {str(self.path)!r} as {self.kind}: {reason}") from None


def _reason(exc: BaseException) -> str:
    """The first line of ``exc``'s message, printable, bounded, and cut before the text of
    an offending CSV row (which may hold someone's sensitive value)."""
    text = str(exc).strip()
    first = text.splitlines()[0].strip() if text else ""
    m = _PARSE_ERROR.match(first)
    if m:
        first = m.group(1)
    first = "".join(ch if ch.isprintable() else "?" for ch in first)
    if len(first) > _MAX_REASON:
        first = first[: _MAX_REASON - 3] + "..."
    return first or type(exc).__name__


def read_bucketization(
    path: str | Path,
    spec: ReleaseSpec,
    fmt: Format | None = None,
    delimiter: str | None = None,
    progress: Callable[[str], None] | None = None,
    *,
    missing_as: str | None = None,
) -> Bucketization:
    """Read a release file and count it into per-group sensitive counts.

    The header is checked first, so a missing column is reported by its role ("group column
    'age' does not exist") before any data is read; ``progress`` hears when reading starts.
    Blank sensitive cells are refused, or published as ``missing_as``.
    """
    from airflow_privacy.core.model import Bucketization, check_columns

    replacement = check_missing_as(missing_as)
    check_columns(column_names(path, fmt, delimiter), spec)
    if progress is not None:
        progress(f"reading {path}")
    p = _existing_file(path)
    if (fmt or detect_format(p)) == "parquet":
        # text columns stay dictionaries: the counting reads their codes (_read_parquet)
        table = _read_parquet(p, list(spec.required_columns()), dictionaries=True)
        table = fill_blanks(table, spec.sensitive, replacement, p.name)
    else:
        table = read_release(
            p,
            spec.required_columns(),
            fmt,
            delimiter,
            sensitive=spec.sensitive,
            missing_as=replacement,
        )
    return Bucketization.from_arrow(table, spec)
