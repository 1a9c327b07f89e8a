"""Releases that are Spark tables (or local Parquet folders read by Spark): the session, the
columns, one ``groupBy`` count, and writing or dropping a release table, for the anonymize,
check and DP steps. Only counts leave Spark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef

if TYPE_CHECKING:
    from airflow_privacy.core.anonymize.plan import Recoding
    from airflow_privacy.core.backends.histogram import Histogram
    from airflow_privacy.core.model import Bucketization, ReleaseSpec
    from airflow_privacy.gate.pushdown import Where


def spark_session(ctx: GateContext) -> Any:
    """The session of backend ``spark``
    (:func:`airflow_privacy.core.backends.spark_session`: the active one, else Spark's own
    configuration)."""
    from airflow_privacy.core.backends import spark_session as session

    ctx.progress("connecting to Spark")
    return session()


def spark_source(ref: ReleaseRef) -> Any:
    """What :mod:`airflow_privacy.core.backends.spark` reads: a table name or a path."""
    if ref.spark_table is not None:
        return ref.spark_table
    from airflow_privacy.core.backends import check_spark_parquet

    check_spark_parquet(ref.local)
    return ref.local


def spark_column_names(ref: ReleaseRef, ctx: GateContext) -> list[str]:
    """The columns of a Spark table or a local Parquet dataset folder, by Spark (its
    schema)."""
    session = spark_session(ctx)
    from pyspark.errors import AnalysisException

    if ref.spark_table is None:
        try:
            return [str(c) for c in session.read.parquet(str(ref.local)).columns]
        except AnalysisException:
            raise InputError(f"cannot read {ref.describe()!r} as a Parquet dataset") from None
    try:
        return [str(c) for c in session.table(ref.spark_table).columns]
    except AnalysisException:
        raise InputError(f"table {ref.spark_table!r} does not exist in the Spark catalog") from None


def spark_count(
    ref: ReleaseRef, spec: ReleaseSpec, ctx: GateContext, *, missing_as: str | None = None
) -> Bucketization:
    """The normalized per-group counts of a Spark table (or a local Parquet file or
    folder), by one ``groupBy`` in Spark (the check step, the re-check)."""
    from airflow_privacy.core.backends import spark

    session = spark_session(ctx)
    ctx.progress(f"counting {ref.describe()} in Spark")
    counted: Bucketization = spark.count(
        spark_source(ref), spec, spark=session, missing_as=missing_as, progress=ctx.progress
    )
    return counted.normalized()


def check_spark_target(release: ReleaseRef, ctx: GateContext) -> None:
    """Before any work: the Spark table release does not exist yet (a release is never
    written over anything)."""
    if spark_session(ctx).catalog.tableExists(release.spark_table):
        raise InputError(
            f"the release ({opt('out_release')}) {release.describe()} already exists; a release is "
            "never written over anything: choose a new name"
        )


def write_spark_table(
    where: Where, hist: Histogram, recoding: Recoding, release: ReleaseRef, ctx: GateContext
) -> int:
    """The release written by Spark as the Spark table ``release`` (``mode="table"``)."""
    from airflow_privacy.core.backends import spark

    assert release.spark_table is not None
    ctx.progress(f"writing {release.describe()} with Spark")
    written: int = spark.write_release(
        spark_source(where.source), hist, recoding, release.spark_table, mode="table",
        spark=spark_session(ctx), missing_as=where.missing_as, progress=ctx.progress,
    )  # fmt: skip
    return written


def drop_spark_table(release: ReleaseRef, ctx: GateContext) -> None:
    """Remove a written Spark table that failed its re-check."""
    assert release.spark_table is not None
    # plain identifiers only (ReleaseRef checks the name): never SQL
    spark_session(ctx).sql(f"DROP TABLE IF EXISTS {release.spark_table}")
