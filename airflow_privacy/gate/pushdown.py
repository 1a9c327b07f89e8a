"""Anonymizing where the data lives: the one row-level pass in the backend, the decision
from counts, the release written back by the backend and re-checked on its counts.

An anonymization reads its input once, as the histogram of distinct
``(QI..., sensitive)`` tuples with their record counts (the sufficient statistics every
anonymizer decides from; :mod:`airflow_privacy.core.anonymize.plan`), computed by the
backend where the data is: DuckDB over a Parquet/CSV file, the database of a SQL table,
Spark over a Spark table or a Parquet file or folder. The decision (a
:class:`~airflow_privacy.core.anonymize.plan.Recoding`) is applied by the same backend (a
join on a mapping table), which writes the release: a file through DuckDB's ``COPY``, a
table through ``CREATE TABLE ... AS SELECT`` in the database, a Spark table through Spark
(``saveAsTable``). Rows never pass
through Python. Before the step reports success, the written release is counted again by the
backend and every criterion re-checked on those counts; the counts must equal the ones the
decision promised. A failure there is a bug (exit 3) and leaves no release behind.

Which backend runs (:func:`choose`): a SQL table source is anonymized in its database when
the release is a table on the same connection; a release that is a Spark table
(``spark:NAME``) is written by Spark, from a Spark table or a local Parquet file or folder
(``backend`` ``spark``; a file release is never written by Spark: Spark writes folders,
the gate publishes single files); a file is anonymized by DuckDB from the size
at which DuckDB counts faster than the in-process path (``auto``), or as asked
(``backend``); everything else runs in process (the Arrow path of
:func:`airflow_privacy.core.anonymize.anonymize`, which decides from the same histogram).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.spark_tables import spark_session, spark_source

if TYPE_CHECKING:
    from airflow_privacy.core.anonymize.manifest import AnonymizationResult
    from airflow_privacy.core.anonymize.plan import Recoding
    from airflow_privacy.core.backends.histogram import Histogram
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

ANONYMIZE_BACKENDS: tuple[str, ...] = ("auto", "arrow", "duckdb", "sql", "spark")
"""The values of ``backend`` for the anonymize step: ``sql`` is the database of a SQL
table (``auto`` picks it for a table source written to a table); ``spark`` writes a Spark
table release (``auto`` picks it for a ``spark:`` release)."""


def choose(requested: str, source: ReleaseRef, release: ReleaseRef, ctx: GateContext,
           fmt: Any = None, columns: Sequence[str] | None = None) -> str:  # fmt: skip
    """The backend that anonymizes ``source`` into ``release`` (module doc)."""
    if not isinstance(requested, str) or requested not in ANONYMIZE_BACKENDS:
        raise InputError(
            f"{opt('backend')} must be one of {', '.join(ANONYMIZE_BACKENDS)}, got {requested!r}"
        )
    if source.is_spark or release.is_spark or requested == "spark":
        return _choose_spark(requested, source, release)
    if source.is_table or release.is_table:
        if not (source.is_table and release.is_table):
            if requested == "sql" or release.is_table:
                raise InputError(
                    f"{opt('backend')} sql writes a table from a table: "
                    + (
                        f"the release {release.describe()} is a table but the input "
                        f"{source.describe()} is not"
                        if release.is_table
                        else f"the release {release.describe()} is a file"
                    )
                )
            if requested == "duckdb":
                raise InputError(f"{opt('backend')} duckdb reads files, not {source.describe()}")
            return "arrow"
        if requested in ("arrow", "duckdb"):
            raise InputError(
                f"{opt('backend')} {requested} does not apply to {source.describe()}: a table "
                f"is anonymized in its own database (leave {opt('backend')} at auto)"
            )
        if source.conn != release.conn:
            raise InputError(
                f"the release {release.describe()} must be on the input's connection: the "
                "data never leaves its database"
            )
        return "sql"
    if requested == "sql":
        raise InputError(f"{opt('backend')} sql applies to SQL tables, not {source.describe()}")
    gzip = release.name.lower().endswith(".gz")  # DuckDB writes .parquet or .csv, not gzip
    if requested == "duckdb" and gzip:
        raise InputError(
            f"{opt('out_release')} {release.describe()}: backend duckdb writes .parquet or .csv "
            "releases"
        )
    if requested in ("arrow", "duckdb"):
        return requested
    if source.is_uri or gzip:
        return "arrow"
    from airflow_privacy.core.backends import large

    # the in-process anonymizers read the input whole: DuckDB for a large one
    return "duckdb" if large(source.local, fmt, columns) else "arrow"


def _choose_spark(requested: str, source: ReleaseRef, release: ReleaseRef) -> str:
    """Backend ``spark``: the release is a Spark table, the input a Spark table or a local
    Parquet file or folder."""
    if not release.is_spark:
        if source.is_spark:
            raise InputError(
                f"the input {source.describe()} is a Spark table: its release is written by "
                f"Spark, give {opt('out_release')} spark:TABLE (a file release of it: export the "
                "table to Parquet and anonymize the file)"
            )
        raise InputError(
            f"{opt('backend')} spark writes the release as a Spark table: give "
            f"{opt('out_release')} spark:TABLE, not {release.describe()} (Spark writes "
            f"folders; a file release is written by {opt('backend')} duckdb or arrow)"
        )
    if requested not in ("auto", "spark"):
        raise InputError(
            f"{opt('backend')} {requested} does not apply to the release "
            f"{release.describe()}: a Spark table is written by Spark (leave "
            f"{opt('backend')} at auto, or spark)"
        )
    if source.is_table or source.is_uri:
        raise InputError(
            f"a Spark table release is written from a Spark table or a local Parquet file or "
            f"folder, not {source.describe()}"
        )
    return "spark"


@dataclass(frozen=True)
class Where:
    """How the backend reaches the input (file options included)."""

    backend: str
    source: ReleaseRef
    fmt: Any = None
    delimiter: str | None = None
    missing_as: str | None = None


def histogram(where: Where, qis: Sequence[str], sensitive: str, ctx: GateContext) -> Histogram:
    """The input's histogram of distinct ``(qis..., sensitive)`` tuples, counted by the
    backend."""
    ctx.progress(f"counting the distinct tuples of {where.source.describe()} ({where.backend})")
    if where.backend == "spark":
        from airflow_privacy.core.backends import spark

        hist: Histogram = spark.histogram(
            spark_source(where.source), qis, sensitive, spark=spark_session(ctx),
            missing_as=where.missing_as, progress=ctx.progress,
        )  # fmt: skip
        return hist
    if where.backend == "sql":
        from airflow_privacy.core.backends import sql
        from airflow_privacy.gate.tables import sql_target

        engine, table = sql_target(where.source, ctx)
        return sql.histogram(engine, table, qis, sensitive, missing_as=where.missing_as,
                             progress=ctx.progress)  # fmt: skip
    from airflow_privacy.core.backends.duck import DuckDBBackend

    return DuckDBBackend().histogram(
        where.source.local, qis, sensitive, fmt=where.fmt, delimiter=where.delimiter,
        missing_as=where.missing_as, progress=ctx.progress,
    )  # fmt: skip


@contextlib.contextmanager
def written_file(
    where: Where, hist: Histogram, recoding: Recoding, release: ReleaseRef, ctx: GateContext
) -> Iterator[Path]:
    """The release written by DuckDB into a private temporary file named like the release
    (so its format is the release's); removed afterwards."""
    from airflow_privacy.core import private_folders
    from airflow_privacy.core.backends.duck import DuckDBBackend
    from airflow_privacy.core.io import detect_format

    folder = private_folders.make("release")
    try:
        target = folder / release.name  # not gzip: choose() leaves that to arrow
        kind = detect_format(target)
        ctx.progress(f"writing the release with DuckDB ({kind})")
        DuckDBBackend().write_release(
            where.source.local, hist, recoding, target, fmt=where.fmt,
            delimiter=where.delimiter, missing_as=where.missing_as, output_format=str(kind),
            progress=ctx.progress,
        )  # fmt: skip
        yield target
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def count_file(path: Path, spec: ReleaseSpec, ctx: GateContext) -> Bucketization:
    """The written release's counts, by DuckDB (the re-check)."""
    from airflow_privacy.core.backends.duck import DuckDBBackend

    return DuckDBBackend().count(path, spec, progress=ctx.progress).normalized()


def staging_name(release: ReleaseRef) -> str:
    """A private name, in the release table's schema, the release is built under before it
    is re-checked and put in place."""
    import secrets

    assert release.sql_table is not None
    schema, _, name = release.sql_table.rpartition(".")
    staged = f"{name[:40]}__ap_stage_{secrets.token_hex(4)}"
    return f"{schema}.{staged}" if schema else staged


def write_table(
    where: Where, hist: Histogram, recoding: Recoding, staging: str, ctx: GateContext
) -> int:
    """The release built in the input's database under the private name ``staging``."""
    from airflow_privacy.core.backends import sql
    from airflow_privacy.gate.tables import sql_target

    engine, source = sql_target(where.source, ctx, write=True)
    ctx.progress("writing the release in the database (INSERT ... SELECT of a join)")
    written: int = sql.write_release(
        engine, source, hist, recoding, staging, missing_as=where.missing_as,
        progress=ctx.progress,
    )  # fmt: skip
    return written


def count_table(release: ReleaseRef, spec: ReleaseSpec, ctx: GateContext) -> Bucketization:
    """The written table's counts, in its database (the re-check)."""
    from airflow_privacy.core.backends import sql
    from airflow_privacy.gate.tables import sql_target

    engine, table = sql_target(release, ctx)
    counted: Bucketization = sql.count(engine, table, spec, progress=ctx.progress)
    return counted.normalized()


def put_table(staging: str, release: ReleaseRef, ctx: GateContext) -> None:
    """The re-checked staging table put in place of the release table (one transaction on
    PostgreSQL)."""
    from airflow_privacy.core.backends import sql
    from airflow_privacy.gate.tables import sql_target

    engine, target = sql_target(release, ctx, write=True)
    sql.replace_table(engine, staging, target)


def drop_table(release: ReleaseRef, ctx: GateContext) -> None:
    """Remove a staging table (a release that failed its re-check, or an interrupted step)."""
    from airflow_privacy.core.backends import sql
    from airflow_privacy.gate.tables import sql_target

    engine, table = sql_target(release, ctx, write=True)
    sql.drop_table(engine, table)


def recheck(
    result: AnonymizationResult,
    counted: Bucketization,
    criteria: Sequence[tuple[str, Mapping[str, Any]]],
    benign: Sequence[str],
) -> None:
    """The written release's counts equal the decision's and pass every criterion again;
    anything else is a bug (the release is not kept)."""
    from airflow_privacy.core.anonymize.criteria import CriteriaSet

    promised = result.bucketization.normalized()
    if (
        promised.groups != counted.groups
        or promised.values != counted.values
        or promised.counts.tolist() != counted.counts.tolist()
    ):
        raise RuntimeError(
            "the release the backend wrote does not have the counts the anonymizer decided "
            f"({counted.n_records:,} records in {counted.n_groups:,} groups written, "
            f"{promised.n_records:,} in {promised.n_groups:,} decided)"
        )
    failure = CriteriaSet.parse(criteria, tuple(benign)).first_failure(counted)
    if failure is not None:
        raise RuntimeError(
            f"the written release fails criterion {failure.criterion} on the backend's counts"
        )


def decide(
    hist: Histogram,
    method: str,
    criteria: Any,
    hierarchies: Mapping[str, Any],
    seed: int,
    benign: Sequence[str],
    options: Mapping[str, Any],
    progress: Callable[[str], None],
) -> AnonymizationResult:
    """The anonymizer's decision from the histogram (the safe lattice mode supplied)."""
    from airflow_privacy.core.algorithm_aware import anonymize_histogram

    return anonymize_histogram(
        hist, method, criteria, hierarchies, seed,  # type: ignore[arg-type]
        benign=benign, progress=progress, **options,
    )  # fmt: skip
