"""Reading and writing releases by reference, for every step and every front end.

Readers: a local file goes through :mod:`airflow_privacy.core.io` (CSV with its delimiter
detected, ``.csv.gz``, Parquet; every malformed input is one :class:`InputError`); an
object-store URI is fetched through the front end's connections into a private temporary
file and read the same way; a SQL table is read column by column, or for counts only as a
``GROUP BY`` pushed down to the database.

Writers (:func:`write_outputs`): every output (a table in the format its name says, gzip
included; a JSON document; a text document) is checked first (:func:`check_writable`: the
folder, and a name that fits what is written: a table ``.csv[.gz]``/``.tsv``/``.txt``/
``.parquet``, JSON ``.json``, HTML ``.html``), then written in full, local ones to a
temporary file in the target folder and remote ones to memory. Only when every output is
written are they put in place: the remote ones uploaded first (the slow step, the one most
likely to fail; each object store replaces an object atomically), then the local ones
renamed, one quick ``rename`` each. A failure before that leaves every old file as it was
and no temporary file; a failure while putting them in place (an upload refused, a rename
failing) says which outputs were written and which were not.

On Linux the temporary file is unnamed (``O_TMPFILE``) until the moment it is renamed, so a
process killed with ``kill -9`` leaves nothing behind; where that is not available a named
``.NAME.HOST.PID.RANDOM.tmp`` is used (``HOST``: this machine's name, shortened, with a hash
of the whole name). The next write into the folder removes such files only when they are
this host's, their process is gone and they are older than :data:`STALE_AGE` seconds: a
folder on NFS or another shared volume may hold another machine's write in progress, whose
process cannot be seen from here.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import re
import shutil
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.model import Bucketization, ReleaseSpec

Content = Any  # pa.Table | dict (JSON) | str (text) | bytes | Path (a file to copy)
Kind = Literal["table", "json", "html", "file"]
"""What an output holds, which its name must say: a table (``.csv``, ``.csv.gz``, ``.tsv``,
``.txt``, ``.parquet``), a JSON document (``.json``), an HTML page (``.html``, ``.htm``), or
any file (no check of the name)."""
_KIND_SUFFIXES: dict[str, tuple[str, ...]] = {"json": (".json",), "html": (".html", ".htm")}
_STALE = re.compile(
    r"^\.(?P<name>.+)\.(?P<host>[A-Za-z0-9-]{1,16}-[0-9a-f]{8})\.(?P<pid>\d+)\.[0-9a-f]{8}\.tmp$"
)
_NAME_MAX = 255 - 48  # room for the ".NAME.HOST.PID.RANDOM.tmp" of a named temporary file
STALE_AGE = 3600.0
"""Seconds a dead writer's named temporary file is left alone before it is swept (1 hour)."""


# ----------------------------------------------------------------------------- reading
@contextlib.contextmanager
def local_copy(ref: ReleaseRef, ctx: GateContext) -> Iterator[Path]:
    """A local file with the reference's content (the file itself when it is local)."""
    if ref.is_table:
        raise InputError(f"{ref.describe()} is a table, not a file")
    if not ref.is_uri:
        yield ref.local
        return
    from airflow_privacy.core.private_folders import private_folder

    with private_folder("download") as folder:
        path = folder / ref.name
        ctx.connections.download(str(ref.path), ref.conn, str(path))  # streamed, not in memory
        yield path


def read_table(
    ref: ReleaseRef,
    columns: Sequence[str] | None,
    ctx: GateContext,
    *,
    fmt: Any = None,
    delimiter: str | None = None,
    sensitive: str | None = None,
    missing_as: str | None = None,
) -> pa.Table:
    """The release as an Arrow table of text columns (only ``columns`` when given); blank
    cells of ``sensitive`` are refused unless ``missing_as`` replaces them."""
    from airflow_privacy.core.io import read_release

    if ref.is_table:
        return _sql_table(ref, columns, ctx)
    with local_copy(ref, ctx) as path:
        return read_release(
            path, columns, fmt, delimiter, sensitive=sensitive, missing_as=missing_as
        )


def column_names(
    ref: ReleaseRef, ctx: GateContext, *, fmt: Any = None, delimiter: str | None = None
) -> list[str]:
    from airflow_privacy.core.io import column_names as names

    if ref.is_table:
        return sql_column_names(ref, ctx)
    with local_copy(ref, ctx) as path:
        return names(path, fmt, delimiter)


def read_counts(
    ref: ReleaseRef,
    spec: ReleaseSpec,
    ctx: GateContext,
    *,
    fmt: Any = None,
    delimiter: str | None = None,
    missing_as: str | None = None,
    backend: str | None = None,
) -> Bucketization:
    """Per-group sensitive counts; for a SQL table the counting runs in the database. Blank
    sensitive cells are refused unless ``missing_as`` names the value to publish instead.
    ``backend`` (``auto``, ``arrow``, ``duckdb``: :func:`read_counts_by`) counts a file with
    that backend, in the normalized order; without it, the in-process Arrow path."""
    from airflow_privacy.core.io import read_bucketization
    from airflow_privacy.core.model import Bucketization

    if backend is not None:
        return read_counts_by(
            ref, spec, ctx, fmt=fmt, delimiter=delimiter, missing_as=missing_as,
            backend=backend,
        )[0]  # fmt: skip
    if ref.is_table:
        return Bucketization.from_counts(
            _sql_group_counts(ref, spec, ctx), spec.group_columns, spec.sensitive,
            missing_as=missing_as,
        )  # fmt: skip
    with local_copy(ref, ctx) as path:
        return read_bucketization(path, spec, fmt, delimiter, ctx.progress, missing_as=missing_as)


def backend_for(ref: ReleaseRef, backend: str) -> str:
    """``backend`` checked against where ``ref`` lives: a Spark table is counted by Spark
    (``auto`` or ``spark``), a SQL table in its own database (``auto`` only)."""
    from airflow_privacy.core.backends import check_backend

    requested = check_backend(backend)
    if ref.is_spark and requested not in ("auto", "spark"):
        raise InputError(
            f"{opt('backend')} {requested} does not apply to {ref.describe()}: a Spark "
            f"table is counted by Spark (leave {opt('backend')} at auto, or spark)"
        )
    if ref.is_table and requested != "auto":
        raise InputError(
            f"{opt('backend')} {requested} does not apply to {ref.describe()}: a SQL "
            f"table is counted in its own database (leave {opt('backend')} at auto)"
        )
    return requested


def read_counts_by(
    ref: ReleaseRef,
    spec: ReleaseSpec,
    ctx: GateContext,
    *,
    backend: str = "auto",
    fmt: Any = None,
    delimiter: str | None = None,
    missing_as: str | None = None,
) -> tuple[Bucketization, str]:
    """The normalized per-group counts (:meth:`Bucketization.normalized`) and the backend
    that counted them: ``sql`` for a SQL table (a ``GROUP BY`` in its database, under
    ``auto`` only), else the file's counting backend (:mod:`airflow_privacy.core.backends`:
    ``auto`` picks by size, ``arrow``, ``duckdb`` or ``spark`` as asked); ``spark`` for a
    Spark table (``spark:NAME``) or a local Parquet file or folder under ``spark``: a
    ``groupBy`` in Spark. Only counts leave DuckDB, the database or Spark."""
    from airflow_privacy.core.backends import count_release
    from airflow_privacy.core.model import Bucketization

    requested = backend_for(ref, backend)
    if ref.is_spark:
        from airflow_privacy.gate.spark_tables import spark_count

        return spark_count(ref, spec, ctx, missing_as=missing_as), "spark"
    if ref.is_table:
        b = Bucketization.from_counts(
            _sql_group_counts(ref, spec, ctx), spec.group_columns, spec.sensitive,
            missing_as=missing_as,
        )  # fmt: skip
        return b.normalized(), "sql"
    if requested == "spark" and ref.is_uri:
        raise InputError(
            f"{opt('backend')} spark reads a local Parquet file or folder or a spark:TABLE, "
            f"not {ref.describe()}: register it as a table in Spark's catalog"
        )
    with local_copy(ref, ctx) as path:
        counted, name = count_release(
            path, spec, requested=requested, fmt=fmt, delimiter=delimiter,
            missing_as=missing_as, progress=ctx.progress,
        )  # fmt: skip
    return counted, name


@contextlib.contextmanager
def database_errors(ref: ReleaseRef) -> Iterator[None]:
    """Errors of the database behind a SQL reference as bad input naming the table and the
    database (never its password): not a database, no such schema, unreachable."""
    from sqlalchemy.exc import NoSuchTableError, SQLAlchemyError

    try:
        yield
    except NoSuchTableError:
        raise InputError(f"table {ref.sql_table!r} does not exist") from None
    except SQLAlchemyError as exc:
        from airflow_privacy.ledger.engine import safe_url

        orig = getattr(exc, "orig", None) or exc
        text = str(orig).strip().splitlines()
        reason = text[0][:200] if text else type(exc).__name__
        raise InputError(
            f"cannot read table {ref.sql_table!r} from database {safe_url(str(ref.conn))!r}: "
            f"{reason}"
        ) from None


def sql_name_parts(name: str) -> tuple[str | None, str]:
    schema, _, table = name.rpartition(".")
    return (schema or None), table


def sql_target(ref: ReleaseRef, ctx: GateContext, *, write: bool = False) -> tuple[Any, str]:
    """The SQLAlchemy engine of a SQL table reference and the table's name
    (``schema.table`` or ``table``); ``write``: an engine that may create tables."""
    if ref.sql_table is None or ref.conn is None:
        raise InputError(f"{ref.describe()} is not a SQL table")
    return ctx.connections.sql_engine(ref.conn, write=write), ref.sql_table


def sql_column_names(ref: ReleaseRef, ctx: GateContext) -> list[str]:
    return list(_sql_column_types(ref, ctx))


def _sql_column_types(ref: ReleaseRef, ctx: GateContext) -> dict[str, Any]:
    """The reflected SQLAlchemy type of every column of a SQL table reference, in order."""
    import sqlalchemy as sa

    assert ref.sql_table is not None and ref.conn is not None
    engine = ctx.connections.sql_engine(ref.conn)
    schema, table = sql_name_parts(ref.sql_table)
    with database_errors(ref):
        return {str(c["name"]): c["type"] for c in sa.inspect(engine).get_columns(table, schema)}


def _sql_columns(
    ref: ReleaseRef, ctx: GateContext, columns: Sequence[str]
) -> tuple[Any, Any, list[Any]]:
    """The engine, a table clause of ``columns`` (each checked to exist) and their types."""
    import sqlalchemy as sa

    assert ref.sql_table is not None and ref.conn is not None
    present = _sql_column_types(ref, ctx)
    for c in columns:
        if c not in present:
            raise InputError(f"column {c!r} does not exist in table {ref.sql_table!r}")
    schema, name = sql_name_parts(ref.sql_table)
    table = sa.table(name, *[sa.column(c) for c in columns], schema=schema)
    return ctx.connections.sql_engine(ref.conn), table, [present[c] for c in columns]


def _sql_group_counts(
    ref: ReleaseRef, spec: ReleaseSpec, ctx: GateContext
) -> list[tuple[Any, ...]]:
    """The per-group sensitive counts' rows of ``spec``'s columns, counted in the
    database."""
    ctx.progress(f"counting {ref.describe()} in the database (GROUP BY)")
    return sql_group_counts(ref, spec.required_columns(), ctx)


def sql_group_counts(
    ref: ReleaseRef, columns: Sequence[str], ctx: GateContext
) -> list[tuple[Any, ...]]:
    """``SELECT c..., COUNT(*) ... GROUP BY c...`` of a SQL table reference, in its
    database (quoted identifiers, bound parameters only; every column checked to exist; a
    float zero's sign kept as the file backends keep it:
    :func:`airflow_privacy.core.backends.sql.grouped_rows`): the rows as the driver returns
    them, the count last. Every step that reads a SQL table reads it this way (only counts
    leave the database)."""
    from airflow_privacy.core.backends.sql import grouped_rows

    cols = list(columns)
    engine, table, types = _sql_columns(ref, ctx, cols)
    with database_errors(ref), engine.connect() as conn:
        return grouped_rows(conn, table, cols, types)


def _sql_table(ref: ReleaseRef, columns: Sequence[str] | None, ctx: GateContext) -> pa.Table:
    import pyarrow as pa
    import sqlalchemy as sa

    cols = list(columns) if columns is not None else sql_column_names(ref, ctx)
    engine, table, _ = _sql_columns(ref, ctx, cols)
    with database_errors(ref), engine.connect() as conn:
        rows = conn.execute(sa.select(*[table.c[c] for c in cols])).all()
    return pa.table(
        {
            c: pa.array([None if r[i] is None else str(r[i]) for r in rows], pa.string())
            for i, c in enumerate(cols)
        }
    )


# ----------------------------------------------------------------------------- writing
def check_writable(
    ref: ReleaseRef, what: str, *, option: str | None = None, kind: Kind | None = None
) -> None:
    """Before any work: the output's folder exists and it is not a folder itself (local);
    its name fits ``kind``, what will be written there (:data:`Kind`; default: a table
    unless the name ends in ``.json``, ``.html`` or ``.htm``). ``what`` names the output in
    messages (``the posterior table``) and ``option``, when given, the parameter that set
    it (an :func:`~airflow_privacy.errors.opt` name: ``--output`` on the command line,
    ``output`` in Airflow)."""
    label = f"{what} ({opt(option)})" if option else what
    if ref.is_table:
        raise InputError(f"{label} cannot be written to a SQL table; give a path or URI")
    if not ref.is_uri:
        check_output_path(ref.local, label)
    if kind is None:
        legacy = ref.name.lower().endswith((".json", ".html", ".htm"))
        kind = "file" if legacy else "table"
    check_kind(ref.name, kind, label)


def _same_file(a: ReleaseRef, b: ReleaseRef) -> bool:
    """Whether two path references name one file: the same inode when both exist (a
    symlink, ``./x`` and ``x``, a hard link), else the same resolved path; URIs by text."""
    if a.is_table or b.is_table:
        return a.is_table and b.is_table and _same_table(a, b)
    if a.is_spark or b.is_spark:
        return a.describe() == b.describe()
    if a.is_uri or b.is_uri:
        return a.describe() == b.describe()
    pa_, pb = a.local, b.local
    try:
        if pa_.exists() and pb.exists():
            return os.path.samefile(pa_, pb)
        return pa_.resolve() == pb.resolve()
    except (OSError, RuntimeError, ValueError):
        return os.path.abspath(pa_) == os.path.abspath(pb)


def _same_table(a: ReleaseRef, b: ReleaseRef) -> bool:
    """Whether two SQL table references may name one table: the same connection and name,
    the schemas equal or one left to the database's default (which may be the other's: taken
    as the same, to be safe)."""
    if a.conn != b.conn:
        return False
    assert a.sql_table is not None and b.sql_table is not None
    sa_, _, na = a.sql_table.strip().rpartition(".")
    sb, _, nb = b.sql_table.strip().rpartition(".")
    return na == nb and (sa_ == sb or not sa_ or not sb)


def check_not_input(
    ref: ReleaseRef,
    what: str,
    inputs: Sequence[ReleaseRef | str | None],
    *,
    option: str | None = None,
) -> None:
    """Before any work: the output ``ref`` is none of the files the step reads (``inputs``:
    the release, a population, a prior release, a hierarchy file), which writing it would
    destroy: bad input, refused before anything is read or written."""
    label = f"{what} ({opt(option)})" if option else what
    for item in inputs:
        if item is None:
            continue
        other = item if isinstance(item, ReleaseRef) else ReleaseRef(path=str(item))
        if _same_file(ref, other):
            raise InputError(f"{label} would overwrite the input {other.describe()!r}")


def check_kind(name: str, kind: Kind, label: str) -> None:
    """The file name ``name`` says the format of what is written (:data:`Kind`)."""
    low = name.lower()
    if kind == "table":
        _table_format(name, label)
    elif kind in _KIND_SUFFIXES and not low.endswith(_KIND_SUFFIXES[kind]):
        want = " or ".join(_KIND_SUFFIXES[kind])
        raise InputError(
            f"{label} {name!r} is written as {kind.upper()}: its name must end in {want}"
        )


def _table_format(name: str, label: str) -> str:
    """The table format an output's name says (``csv`` or ``parquet``)."""
    from airflow_privacy.core.io import detect_format

    low = name.lower()
    if low.endswith((".json", ".html", ".htm")):
        raise InputError(
            f"{label} {name!r} is a table: name it .csv, .csv.gz or .parquet, not "
            f"{Path(low).suffix}"
        )
    try:
        return detect_format(Path(name))
    except InputError as exc:
        if "Parquet compresses" in str(exc):
            raise
        raise InputError(
            f"cannot tell the format to write {label} {name!r} in from its extension: name "
            "it .csv, .csv.gz, .tsv or .parquet"
        ) from None


def check_output_path(path: Path, what: str) -> None:
    """A local file that may be written: its folder exists and is writable, and the name is
    no folder, no FIFO or device (replacing one with a file would break whatever uses it),
    no dangling or looping link, and short enough for the file system (and for the named
    temporary file beside it)."""
    parent = path.parent if str(path.parent) else Path(".")
    try:
        parent_mode = os.stat(parent).st_mode
    except FileNotFoundError:
        raise InputError(f"folder {str(parent)!r} of {what} does not exist") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot write {what} {str(path)!r}: {_why(exc)}") from None
    if not stat.S_ISDIR(parent_mode):
        raise InputError(f"folder {str(parent)!r} of {what} is not a folder")
    try:
        mode: int | None = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
        if os.path.lexists(path):
            raise InputError(
                f"{what} {str(path)!r} is a link to nothing; remove it or choose another name"
            ) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot write {what} {str(path)!r}: {_why(exc)}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"{what} {str(path)!r} is a folder, expected a file name")
    if mode is not None and not stat.S_ISREG(mode):
        raise InputError(
            f"{what} {str(path)!r} exists and is not a regular file (a FIFO, a device or a "
            "socket); choose another name"
        )
    if len(path.name.encode("utf-8", "surrogateescape")) > _NAME_MAX:
        raise InputError(f"cannot write {what} {str(path)!r}: the file name is too long")
    if not os.access(parent, os.W_OK):
        raise InputError(f"folder {str(parent)!r} of {what} is not writable")


def _why(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__


def _kind_of(content: Content) -> Kind:
    """What :func:`_serialize` writes for ``content``: its name must say so."""
    import pyarrow as pa

    if isinstance(content, pa.Table):
        return "table"
    if isinstance(content, dict | list):
        return "json"
    return "file"  # text, bytes, a file copied as it is


def _serialize(content: Content, name: str, sink: Any) -> None:
    """Write ``content`` in the format ``name`` says into the binary file object ``sink``."""
    import pyarrow as pa

    if isinstance(content, bytes):
        sink.write(content)
        return
    if isinstance(content, Path):
        with content.open("rb") as src:
            shutil.copyfileobj(src, sink, 1 << 20)
        return
    if isinstance(content, str):
        sink.write(content.encode("utf-8"))
        return
    if isinstance(content, dict | list):
        from airflow_privacy.serialization import json_safe

        sink.write(json.dumps(json_safe(content), indent=2, allow_nan=False).encode("utf-8"))
        sink.write(b"\n")
        return
    if isinstance(content, pa.Table):
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        from airflow_privacy.core.io import detect_format

        out = pa.PythonFile(sink, mode="w")
        if detect_format(Path(name)) == "parquet":
            pq.write_table(content, out)
        elif name.lower().endswith(".gz"):
            raw = pa.BufferOutputStream()  # the gzip stream closes its sink: not ours
            with pa.CompressedOutputStream(raw, "gzip") as gz:
                pacsv.write_csv(content, gz)
            sink.write(raw.getvalue().to_pybytes())
        else:
            pacsv.write_csv(content, out)
        return
    raise TypeError(f"cannot write {type(content).__name__}")


@functools.cache
def host_tag() -> str:
    """This machine in a temporary file's name: up to 16 characters of its host name
    (letters, digits, ``-``), a ``-`` and 8 hex digits of a hash of the whole name (two
    hosts whose names share a prefix still differ)."""
    import socket  # here, not at the top: a check that writes nothing never needs it

    name = socket.gethostname() or "localhost"
    short = re.sub(r"[^A-Za-z0-9-]", "-", name.split(".", 1)[0])[:16] or "host"
    return f"{short}-{hashlib.sha256(name.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def temp_name(final: Path) -> Path:
    """The named temporary file of ``final`` beside it: ``.NAME.HOST.PID.RANDOM.tmp``."""
    import secrets

    return final.with_name(f".{final.name}.{host_tag()}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def sweep_stale(folder: Path, min_age: float = STALE_AGE) -> int:
    """Remove ``.NAME.HOST.PID.RANDOM.tmp`` files left in ``folder`` by writers that died:
    only this host's (another host's write may be in progress on a shared volume), whose
    process is gone, and untouched for ``min_age`` seconds (a process id may be reused)."""
    removed = 0
    try:
        entries = list(folder.iterdir())
    except OSError:
        return 0
    now = time.time()
    for p in entries:
        m = _STALE.match(p.name)
        if m is None or m.group("host") != host_tag() or _alive(int(m.group("pid"))):
            continue
        with contextlib.suppress(OSError):
            st = p.lstat()
            if not stat.S_ISREG(st.st_mode) or now - st.st_mtime < min_age:
                continue
            p.unlink()
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Pending:
    """One local output being written: an unnamed O_TMPFILE, or a named temporary file."""

    def __init__(self, final: Path) -> None:
        self.final = final
        self.named: Path | None = None
        self.fd: int | None = None
        flag = getattr(os, "O_TMPFILE", None)
        if flag is not None:
            try:
                self.fd = os.open(final.parent, flag | os.O_WRONLY, 0o644)
            except OSError:
                self.fd = None
        if self.fd is None:
            self.named = temp_name(final)
            self.fd = os.open(self.named, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)

    def write(self, content: Content) -> None:
        """Write ``content`` (in the format the final name says) and flush it to disk."""
        assert self.fd is not None
        with os.fdopen(os.dup(self.fd), "wb") as fh:
            _serialize(content, self.final.name, fh)
            fh.flush()
            os.fsync(fh.fileno())

    def commit(self) -> None:
        """Give the file its final name (atomically replacing an older one)."""
        assert self.fd is not None
        if self.named is None:
            self.named = temp_name(self.final)
            # linkat(..., AT_SYMLINK_FOLLOW) through /proc: os.link uses it only when given a
            # directory descriptor (a plain link() would not follow the magic link)
            proc = os.open("/proc/self/fd", os.O_RDONLY)
            try:
                os.link(str(self.fd), self.named, src_dir_fd=proc, follow_symlinks=True)
            finally:
                os.close(proc)
        os.close(self.fd)
        self.fd = None
        os.replace(self.named, self.final)
        self.named = None

    def discard(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
        if self.named is not None:
            with contextlib.suppress(OSError):
                self.named.unlink()
            self.named = None


def write_outputs(outputs: Mapping[ReleaseRef, Content], ctx: GateContext) -> list[str]:
    """Write every output (module doc); returns where each went.

    Every output is checked, then written in full (local ones to temporary files, remote
    ones to memory): an error up to here changes no existing file and leaves no temporary
    file ("nothing was written"). Then the remote outputs are uploaded and the local ones
    renamed into place; an error there names the outputs already written and those not."""
    for ref, content in outputs.items():
        check_writable(ref, "output", kind=_kind_of(content))
    local = [(ref, content) for ref, content in outputs.items() if not ref.is_uri]
    remote = [(ref, content) for ref, content in outputs.items() if ref.is_uri]
    pending: list[_Pending] = []
    blobs: list[tuple[ReleaseRef, bytes]] = []
    done: list[str] = []
    current = ""
    try:
        for ref, content in local:
            path = ref.local
            current = str(path)
            sweep_stale(path.parent)
            p = _Pending(path)
            pending.append(p)
            p.write(content)
        for ref, content in remote:
            current = ref.describe()
            buf = io.BytesIO()
            _serialize(content, ref.name, buf)
            blobs.append((ref, buf.getvalue()))
        # in place: the uploads first (slow, most likely to fail), then the quick renames
        for ref, data in blobs:
            current = ref.describe()
            ctx.connections.write_bytes(str(ref.path), ref.conn, data)
            done.append(current)
        for p in pending:
            current = str(p.final)
            p.commit()
            done.append(current)
    except BaseException as exc:
        for p in pending:
            p.discard()
        where = _written(done, [r.describe() for r in outputs])
        if isinstance(exc, OSError):
            raise InputError(f"cannot write {current!r}: {_why(exc)}; {where}") from None
        if isinstance(exc, InputError) and done:
            raise InputError(f"{exc}; {where}") from None
        if done:
            exc.add_note(f"while writing {current!r}: {where}")
        raise
    return [ref.describe() for ref in outputs]


def _written(done: Sequence[str], every: Sequence[str]) -> str:
    """Which outputs an interrupted :func:`write_outputs` put in place."""
    if not done:
        return "nothing was written"
    rest = [x for x in every if x not in done]
    return (
        f"written: {', '.join(repr(x) for x in done)}; not written (the old file, if any, "
        f"is unchanged): {', '.join(repr(x) for x in rest)}"
    )


def copy_files(pairs: Sequence[tuple[ReleaseRef, ReleaseRef]], ctx: GateContext) -> None:
    """Copy files to another place, all put in place together (publishing)."""
    with contextlib.ExitStack() as stack:
        outputs: dict[ReleaseRef, Content] = {}
        for src, dst in pairs:
            if not dst.is_uri:
                dst.local.parent.mkdir(parents=True, exist_ok=True)
            outputs[dst] = stack.enter_context(local_copy(src, ctx))
        write_outputs(outputs, ctx)
