"""Release references: where a table is, for every front end alike.

A reference is a local path (``release.parquet``, ``file:///data/release.csv.gz``), an
object-store URI (``s3://bucket/release.parquet``, ``gs://...``; reached through the front
end's :class:`~airflow_privacy.gate.context.Connections` with an optional connection), or a
SQL table (``table:schema.name`` on the command line, ``sql_table=`` in Airflow) on a
connection. Only the per-group counts of a SQL table travel: the ``GROUP BY`` runs in the
database.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from airflow_privacy.errors import InputError, opt

TABLE_PREFIX = "table:"


@dataclass(frozen=True)
class ReleaseRef:
    """Exactly one of ``path`` (local path or URI) and ``sql_table``; ``conn`` is the
    connection of a URI or table (an Airflow connection id, or on the command line a database
    URL for a table)."""

    path: str | None = None
    sql_table: str | None = None
    conn: str | None = None

    def __post_init__(self) -> None:
        if (self.path is None) == (self.sql_table is None):
            raise InputError("give exactly one of a path/URI or a SQL table")
        if self.path is not None:
            if not isinstance(self.path, str) or not self.path.strip():
                raise InputError(f"a release path must be non-empty text, got {self.path!r}")
            if "\x00" in self.path:
                raise InputError("a release path contains a NUL character")
        if self.sql_table is not None:
            if not isinstance(self.sql_table, str) or not self.sql_table.strip():
                raise InputError(f"a SQL table name must be non-empty text, got {self.sql_table!r}")
            if not self.conn:
                raise InputError(f"table {self.sql_table!r} needs a connection ({opt('conn')})")

    @classmethod
    def parse(cls, text: str, conn: str | None = None, *, tables: bool = True) -> ReleaseRef:
        """``table:NAME`` -> a SQL table; anything else -> a path or URI. With ``tables``
        false (a step that reads files only) ``table:NAME`` is refused as such, rather than
        asking for a connection the step has no use for."""
        if not isinstance(text, str):
            raise InputError(f"a release reference is text, got {type(text).__name__}")
        if text.startswith(TABLE_PREFIX):
            if not tables:
                raise InputError(
                    f"{text!r} names a SQL table, which this step does not read: give a file "
                    "path or URI"
                )
            return cls(sql_table=text[len(TABLE_PREFIX) :].strip(), conn=conn)
        return cls(path=text, conn=conn)

    @property
    def is_table(self) -> bool:
        return self.sql_table is not None

    @property
    def is_uri(self) -> bool:
        return self.path is not None and "://" in self.path and not self.path.startswith("file://")

    @property
    def local(self) -> Path:
        """The local file of a path reference."""
        if self.path is None or self.is_uri:
            raise InputError(f"{self.describe()} is not a local file")
        return Path(self.path.removeprefix("file://"))

    @property
    def name(self) -> str:
        """The file name (for format detection and messages)."""
        if self.sql_table is not None:
            return self.sql_table
        assert self.path is not None
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def describe(self) -> str:
        """How messages and envelopes name it (never a password)."""
        if self.sql_table is not None:
            return f"{TABLE_PREFIX}{self.sql_table}"
        assert self.path is not None
        return self.path

    def sibling(self, suffix: str) -> ReleaseRef:
        """``<this file><suffix>`` beside it (the manifest, the report)."""
        if self.path is None:
            raise InputError(f"{self.describe()} has no file to put {suffix!r} beside")
        return ReleaseRef(path=self.path + suffix, conn=self.conn)
