"""Where operators read releases from and write them to: paths, URIs, SQL tables.

Inputs and outputs travel by reference (DESIGN.md): a local path, a URI for an object
store (``s3://...``, ``gs://...``, read through Airflow's ``ObjectStoragePath`` with an
optional connection), or a SQL table through an Airflow connection. For checks on a SQL
table only the per-group counts travel: the ``GROUP BY`` is pushed down to the database.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.model import Bucketization, ReleaseSpec


@dataclass(frozen=True)
class ReleaseRef:
    """A reference to a release: exactly one of ``path`` (local path or URI) or
    ``sql_table`` (with ``conn_id`` of a SQL connection)."""

    path: str | None = None
    conn_id: str | None = None
    sql_table: str | None = None

    def __post_init__(self) -> None:
        if (self.path is None) == (self.sql_table is None):
            raise InputError("give exactly one of a path/URI or a sql_table (with conn_id)")
        if self.sql_table is not None and not self.conn_id:
            raise InputError(f"sql_table {self.sql_table!r} needs conn_id (an Airflow connection)")

    @property
    def is_uri(self) -> bool:
        return self.path is not None and "://" in self.path and not self.path.startswith("file://")

    def describe(self) -> str:
        if self.sql_table is not None:
            return f"table {self.sql_table} on connection {self.conn_id}"
        return str(self.path)


def _object_path(ref: ReleaseRef) -> Any:
    from airflow.sdk import ObjectStoragePath

    assert ref.path is not None
    return ObjectStoragePath(ref.path, conn_id=ref.conn_id)


def read_table(ref: ReleaseRef, columns: Sequence[str] | None = None) -> pa.Table:
    """The release as an Arrow table (only ``columns`` when given)."""
    from airflow_privacy.core.io import detect_format, read_release

    if ref.sql_table is not None:
        return _sql_table(ref, columns)
    assert ref.path is not None
    if not ref.is_uri:
        local = ref.path.removeprefix("file://")
        return read_release(local, columns)
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    remote = _object_path(ref)
    if not remote.exists():
        raise InputError(f"release {ref.path!r} does not exist")
    data = remote.read_bytes()
    kind = detect_format(Path(remote.name))
    if kind == "parquet":
        return pq.read_table(io.BytesIO(data), columns=list(columns) if columns else None)
    table = pacsv.read_csv(io.BytesIO(data))
    return table.select(list(columns)) if columns else table


def write_table(table: pa.Table, ref: ReleaseRef) -> str:
    """Write a release (atomically for local files); returns where it went."""
    import pyarrow.parquet as pq

    from airflow_privacy.core.io import detect_format

    if ref.sql_table is not None:
        raise InputError("writing releases to SQL tables is not supported; give a path or URI")
    assert ref.path is not None
    kind = detect_format(Path(ref.path))
    buffer = io.BytesIO()
    if kind == "parquet":
        pq.write_table(table, buffer)
    else:
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, buffer)
    if ref.is_uri:
        _object_path(ref).write_bytes(buffer.getvalue())
        return ref.path
    local = Path(ref.path.removeprefix("file://"))
    local.parent.mkdir(parents=True, exist_ok=True)
    tmp = local.with_name(local.name + ".tmp")
    tmp.write_bytes(buffer.getvalue())
    tmp.replace(local)
    return str(local)


def load_bucketization(ref: ReleaseRef, spec: ReleaseSpec) -> Bucketization:
    """Per-group counts of a release; for SQL tables the counting runs in the database."""
    from airflow_privacy.core.io import read_bucketization
    from airflow_privacy.core.model import Bucketization, check_columns

    if ref.sql_table is not None:
        return Bucketization.from_counts(
            _sql_group_counts(ref, spec), spec.group_columns, spec.sensitive
        )
    assert ref.path is not None
    if not ref.is_uri:
        return read_bucketization(ref.path.removeprefix("file://"), spec)
    table = read_table(ref)
    check_columns(table.column_names, spec)
    return Bucketization.from_arrow(table.select(list(spec.required_columns())), spec)


def _sql_engine(conn_id: str) -> Any:
    from airflow.sdk import BaseHook

    hook = BaseHook.get_connection(conn_id).get_hook()  # type: ignore[no-untyped-call]
    get_engine = getattr(hook, "get_sqlalchemy_engine", None)
    if get_engine is None:
        raise InputError(f"connection {conn_id!r} is not a SQL connection")
    return get_engine()


def _sql_columns(engine: Any, name: str, columns: Sequence[str]) -> tuple[Any, list[Any]]:
    import sqlalchemy as sa

    schema, _, table_name = name.rpartition(".")
    present = {c["name"] for c in sa.inspect(engine).get_columns(table_name, schema or None)}
    for c in columns:
        if c not in present:
            raise InputError(f"column {c!r} does not exist in table {name!r}")
    table = sa.table(table_name, *[sa.column(c) for c in columns], schema=schema or None)
    return table, [table.c[c] for c in columns]


def _sql_group_counts(ref: ReleaseRef, spec: ReleaseSpec) -> list[tuple[Any, ...]]:
    """``SELECT g.., s, COUNT(*) ... GROUP BY g.., s`` with quoted identifiers."""
    import sqlalchemy as sa

    assert ref.conn_id is not None and ref.sql_table is not None
    engine = _sql_engine(ref.conn_id)
    table, cols = _sql_columns(engine, ref.sql_table, spec.required_columns())
    query = sa.select(*cols, sa.func.count()).select_from(table).group_by(*cols)
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(query)]


def _sql_table(ref: ReleaseRef, columns: Sequence[str] | None) -> pa.Table:
    import pyarrow as pa
    import sqlalchemy as sa

    assert ref.conn_id is not None and ref.sql_table is not None
    engine = _sql_engine(ref.conn_id)
    if columns is None:
        schema, _, table_name = ref.sql_table.rpartition(".")
        columns = [c["name"] for c in sa.inspect(engine).get_columns(table_name, schema or None)]
    table, cols = _sql_columns(engine, ref.sql_table, columns)
    with engine.connect() as conn:
        rows = conn.execute(sa.select(*cols).select_from(table)).all()
    return pa.table(
        {
            c: pa.array([None if r[i] is None else str(r[i]) for r in rows], pa.string())
            for i, c in enumerate(columns)
        }
    )
