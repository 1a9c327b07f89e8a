"""Release references: where a table is, for every front end alike.

A reference is a local path (``release.parquet``, ``file:///data/release.csv.gz``), an
object-store URI (``s3://bucket/release.parquet``, ``gs://...``; reached through the front
end's :class:`~airflow_privacy.gate.context.Connections` with an optional connection), or a
SQL table (``table:schema.name`` on the command line, ``sql_table=`` in Airflow) on a
connection, or a Spark table (``spark:db.name`` on the command line, ``spark_table=`` in
Airflow) in the catalog of the Spark session. Only the per-group counts of a SQL or Spark
table travel: the ``GROUP BY`` runs in the database or in Spark. A Spark table is read by
the check and anonymize steps only (docs/spark.md); any other step refuses it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from airflow_privacy.errors import InputError, opt

TABLE_PREFIX = "table:"
SPARK_PREFIX = "spark:"
SPARK_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")
"""A Spark table name: plain identifiers, dot-separated (``catalog.db.table``), so the name
is never SQL."""


@dataclass(frozen=True)
class ReleaseRef:
    """Exactly one of ``path`` (local path or URI), ``sql_table`` and ``spark_table``;
    ``conn`` is the connection of a URI or SQL table (an Airflow connection id, or on the
    command line a database URL for a table); a Spark table is in the Spark session's
    catalog and has none."""

    path: str | None = None
    sql_table: str | None = None
    conn: str | None = None
    spark_table: str | None = None

    def __post_init__(self) -> None:
        given = [x for x in (self.path, self.sql_table, self.spark_table) if x is not None]
        if len(given) != 1:
            raise InputError("give exactly one of a path/URI, a SQL table or a Spark table")
        name = self.spark_table
        if name is not None and not (isinstance(name, str) and SPARK_TABLE_NAME.fullmatch(name)):
            raise InputError(
                "a Spark table name is letters, digits and underscores, dot-separated "
                f"(catalog.db.table), got {self.spark_table!r}"
            )
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
        """``table:NAME`` -> a SQL table; ``spark:NAME`` -> a Spark table; anything else ->
        a path or URI. With ``tables`` false (a step that reads files only) ``table:NAME`` is
        refused as such, rather than asking for a connection the step has no use for."""
        if not isinstance(text, str):
            raise InputError(f"a release reference is text, got {type(text).__name__}")
        if text.startswith(SPARK_PREFIX):
            return cls(spark_table=text[len(SPARK_PREFIX) :].strip())
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
    def is_spark(self) -> bool:
        """A table in the Spark session's catalog (``spark:NAME``)."""
        return self.spark_table is not None

    @property
    def is_folder(self) -> bool:
        """A local folder (a Parquet dataset, which backend ``spark`` reads); False for a
        name that cannot be looked at (too long, a link loop): its reader names the error."""
        if self.path is None or self.is_uri:
            return False
        try:
            return self.local.is_dir()
        except (OSError, ValueError):
            return False

    @property
    def is_uri(self) -> bool:
        return self.path is not None and "://" in self.path and not self.path.startswith("file://")

    @property
    def local(self) -> Path:
        """The local file of a path reference."""
        if self.spark_table is not None:
            raise InputError(
                f"{self.describe()} is a Spark table, which only the check and anonymize "
                "steps read (backend spark): give a file, URI or SQL table here"
            )
        if self.path is None or self.is_uri:
            raise InputError(f"{self.describe()} is not a local file")
        return Path(self.path.removeprefix("file://"))

    @property
    def name(self) -> str:
        """The file name (for format detection and messages)."""
        if self.sql_table is not None:
            return self.sql_table
        if self.spark_table is not None:
            return self.spark_table
        assert self.path is not None
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def describe(self) -> str:
        """How messages and envelopes name it (never a password)."""
        if self.sql_table is not None:
            return f"{TABLE_PREFIX}{self.sql_table}"
        if self.spark_table is not None:
            return f"{SPARK_PREFIX}{self.spark_table}"
        assert self.path is not None
        return self.path

    def sibling(self, suffix: str) -> ReleaseRef:
        """``<this file><suffix>`` beside it (the manifest, the report)."""
        if self.path is None:
            raise InputError(f"{self.describe()} has no file to put {suffix!r} beside")
        return ReleaseRef(path=self.path + suffix, conn=self.conn)
