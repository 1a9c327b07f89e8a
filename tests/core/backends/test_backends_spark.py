"""The Spark backend (``airflow_privacy.core.backends.spark``) in local mode: the same
release through Spark and through the in-process paths gives the same histogram (labels and
counts), the same per-group counts as the Arrow and DuckDB backends, the same bad-input
errors, and a recoding applied by Spark writes exactly the records the recoding publishes.

Expected values are computed independently from the rows, by a plain dictionary count
(``n_b(s)`` by definition, Martin et al. 2007, section 2.1), not only by another backend.

One local SparkSession serves the session (``local[1]``, no UI, one shuffle partition,
adaptive execution off: tiny jobs; a private warehouse folder). pyspark and a Java runtime
are needed: missing, the tests are skipped locally and fail under ``CI=true`` (``.ci/run``
installs Java).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize.encoding import encode
from airflow_privacy.core.anonymize.plan import Recoding
from airflow_privacy.core.backends import count_release
from airflow_privacy.core.backends.histogram import Histogram
from airflow_privacy.core.io import read_release
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError
from tests.core.bucketization_cells import cells

IN_CI = os.environ.get("CI", "").lower() == "true"
ADULT = Path(__file__).resolve().parents[3] / "airflow_privacy" / "data" / "adult" / "adult.csv.gz"
TOKENS = ["a", "b", "01", "1", " ", "é", "日本", "\u00a0", "\t", "x y", "*", ""]


def spark_backend() -> Any:
    from airflow_privacy.core.backends import spark as backend

    return backend


# ------------------------------------------------------------------ independent references
def blank(v: Any) -> bool:
    """A blank sensitive cell by the readers' definition: null, or text empty after
    trimming whitespace (Python's ``str.strip`` agrees with Arrow on these tokens)."""
    return v is None or (isinstance(v, str) and not v.strip())


def text(v: Any) -> str:
    """A value's label as Arrow's cast to text writes it (integers and text here)."""
    return str(v)


def reference(
    rows: list[tuple[Any, ...]], missing_as: str | None
) -> dict[tuple[str, ...], int] | None:
    """The histogram of label tuples by definition, or None when a blank sensitive cell or
    a null QI makes the input bad."""
    out: Counter[tuple[str, ...]] = Counter()
    for *qis, s in rows:
        if blank(s):
            if missing_as is None:
                return None
            s = missing_as
        if any(v is None for v in qis):
            return None
        out[(*[text(v) for v in qis], text(s))] += 1
    return dict(out)


def labelled(h: Histogram) -> dict[tuple[str, ...], int]:
    """The histogram as label tuples (through :meth:`Histogram.encoded`)."""
    enc = h.encoded()
    out: Counter[tuple[str, ...]] = Counter()
    for r, w in enumerate(enc.row_weights()):
        key = tuple(c.values[int(c.codes[r])] for c in [*enc.qis, enc.sensitive])
        out[key] += int(w)
    return dict(out)


def arrow_histogram(
    path: Path, qis: list[str], sensitive: str, missing_as: str | None
) -> dict[tuple[str, ...], int] | tuple[str, str]:
    """The in-process Arrow path's histogram of labels, or its error message."""
    try:
        table = read_release(path, [*qis, sensitive], sensitive=sensitive, missing_as=missing_as)
        enc = encode(table, qis, sensitive)
    except InputError as exc:
        return ("error", str(exc))
    out: Counter[tuple[str, ...]] = Counter()
    for r in range(enc.rows):
        out[tuple(c.values[int(c.codes[r])] for c in [*enc.qis, enc.sensitive])] += 1
    return dict(out)


def spark_histogram(
    spark: Any, path: Path, qis: list[str], sensitive: str, missing_as: str | None
) -> Histogram | tuple[str, str]:
    try:
        h: Histogram = spark_backend().histogram(
            path, qis, sensitive, spark=spark, missing_as=missing_as
        )
    except InputError as exc:
        return ("error", str(exc))
    return h


def same_bucketization(a: Bucketization, b: Bucketization) -> None:
    assert (a.group_columns, a.sensitive) == (b.group_columns, b.sensitive)
    assert a.groups == b.groups
    assert a.values == b.values
    assert a.counts.tolist() == b.counts.tolist()


# ------------------------------------------------------------------ generated tables
qi_text = st.one_of(st.lists(st.sampled_from(TOKENS[:9]), min_size=1, max_size=2).map("".join))
sensitive_text = st.one_of(st.lists(st.sampled_from(TOKENS), max_size=2).map("".join), st.none())


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.integers(-3, 3), st.none()),
            qi_text,
            sensitive_text,
        ),
        min_size=1,
        max_size=30,
    ),
    null_qi=st.booleans(),
    missing_as=st.sampled_from([None, "?", "1"]),
)
def test_histogram_parity_on_generated_parquet(
    spark: Any,
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[int | None, str, str | None]],
    null_qi: bool,
    missing_as: str | None,
) -> None:
    if not null_qi:
        rows = [(0 if a is None else a, b, s) for a, b, s in rows]
    path = tmp_path_factory.mktemp("hist") / "r.parquet"
    table = pa.table(
        {
            "age": pa.array([r[0] for r in rows], pa.int64()),
            "zip": pa.array([r[1] for r in rows], pa.string()),
            "s": pa.array([r[2] for r in rows], pa.string()),
        }
    )
    pq.write_table(table, path)
    qis = ["age", "zip"]
    arrow = arrow_histogram(path, qis, "s", missing_as)
    got = spark_histogram(spark, path, qis, "s", missing_as)
    expected = reference(rows, missing_as)
    if expected is None:
        assert isinstance(arrow, tuple)
        assert got == arrow  # the same message
        return
    assert isinstance(got, Histogram)
    assert labelled(got) == arrow == expected
    assert got.records == len(rows)
    assert got.qis == ("age", "zip") and got.sensitive == "s"
    # typed keys: the file's types (the sensitive column stays text)
    assert got.keys.schema.types == [pa.int64(), pa.string(), pa.string()]
    # one row per distinct tuple, listed in the order of the label tuples
    enc = got.encoded()
    keys = [
        tuple(c.values[int(c.codes[r])] for c in [*enc.qis, enc.sensitive]) for r in range(enc.rows)
    ]
    assert keys == sorted(set(keys))
    # the check step's counts: equal to the Arrow and DuckDB backends' (or the same error)
    spec = ReleaseSpec("s", ("zip", "age"))
    outcomes: list[Any] = []
    for name in ("arrow", "duckdb", "spark"):
        try:
            if name == "spark":
                b = spark_backend().count(path, spec, spark=spark, missing_as=missing_as)
            else:
                b, _ = count_release(path, spec, requested=name, missing_as=missing_as)
            outcomes.append(cells(b))
            outcomes.append((b.groups, b.values, b.counts.tolist()))
        except InputError as exc:
            outcomes.append(("error", str(exc)))
            outcomes.append(None)
    assert outcomes[0] == outcomes[2] == outcomes[4]
    assert outcomes[1] == outcomes[3] == outcomes[5]


def test_typed_keys_and_labels_of_other_types(spark: Any, tmp_path: Path) -> None:
    """Floats keep ``-0.0`` apart from ``0.0`` (Spark groups them), unsigned and narrow
    integers, booleans and dates are labelled as the Arrow path labels them, and keys keep
    the file's types."""
    import datetime

    table = pa.table(
        {
            "f": pa.array([0.0, -0.0, 1.0, 2.5, 1.0, -0.0], pa.float64()),
            "u": pa.array([1, 2, 3, 4_000_000_000, 1, 2], pa.uint32()),
            "i": pa.array([1, -1, 1, 7, 1, -1], pa.int8()),
            "b": pa.array([True, False, True, True, True, False]),
            "d": pa.array([datetime.date(2020, 1, d) for d in (1, 2, 1, 3, 1, 2)]),
            "s": pa.array([1.5, 2.0, 1.5, -0.0, 1.5, 2.0], pa.float64()),
        }
    )
    path = tmp_path / "typed.parquet"
    pq.write_table(table, path)
    qis = ["f", "u", "i", "b", "d"]
    got = spark_backend().histogram(path, qis, "s", spark=spark)
    assert got.keys.schema.types == [table.schema.field(c).type for c in [*qis, "s"]]
    assert labelled(got) == arrow_histogram(path, qis, "s", None)
    labels = labelled(got)
    assert sum(1 for k in labels if k[0] == "-0") == 1
    assert sum(1 for k in labels if k[0] == "0") == 1
    assert got.records == 6
    spec = ReleaseSpec("s", ("f", "u", "b"))
    arrow, _ = count_release(path, spec, requested="arrow")
    same_bucketization(spark_backend().count(path, spec, spark=spark), arrow)


def test_decimals_timestamps_and_narrow_floats(spark: Any, tmp_path: Path) -> None:
    """Decimals, timestamps (UTC, another zone, none) and 32-bit floats: the file's types
    and the Arrow path's labels (a zone shown as the file declares it, not in Spark's
    session zone); a recoding keyed on them writes each record once."""
    import datetime
    import decimal

    utc = datetime.UTC
    moments = [
        datetime.datetime(2020, 1, 1, 12, tzinfo=utc),
        datetime.datetime(2021, 6, 1, tzinfo=utc),
    ]
    pick = [0, 1, 0, 0]
    table = pa.table(
        {
            "dec": pa.array(
                [decimal.Decimal(x) for x in ("1.50", "2.00", "1.50", "1.50")], pa.decimal128(5, 2)
            ),
            "tsu": pa.array([moments[i] for i in pick], pa.timestamp("us", tz="UTC")),
            "tsp": pa.array([moments[i] for i in pick], pa.timestamp("ms", tz="Europe/Paris")),
            "ntz": pa.array([datetime.datetime(2020, 1, 1 + i) for i in pick], pa.timestamp("us")),
            "f32": pa.array([0.1, 0.2, 0.1, 0.1], pa.float32()),
            "s": ["a", "b", "a", "c"],
        }
    )
    path = tmp_path / "types.parquet"
    pq.write_table(table, path)
    qis = ["dec", "tsu", "tsp", "ntz", "f32"]
    backend = spark_backend()
    h = backend.histogram(path, qis, "s", spark=spark)
    assert h.keys.schema.types == [table.schema.field(c).type for c in [*qis, "s"]]
    labels = labelled(h)
    assert labels == arrow_histogram(path, qis, "s", None)
    assert sorted(labels.values()) == [1, 1, 2]
    assert any("+0100" in k[2] for k in labels)  # Paris time, as the file declares it
    spec = ReleaseSpec("s", ("tsp", "f32", "dec"))
    arrow, _ = count_release(path, spec, requested="arrow")
    same_bucketization(backend.count(path, spec, spark=spark), arrow)
    rows = h.keys.num_rows
    rec = Recoding(
        ("key",),
        tuple((str(r),) for r in range(rows)),
        np.arange(rows, dtype=np.int64),
        np.arange(rows, dtype=np.int64),
        np.asarray(h.counts, dtype=np.int64),
    )
    target = str(tmp_path / "types-out")
    assert backend.write_release(path, h, rec, target, spark=spark) == 4
    out = backend.count(spark.read.parquet(target), ReleaseSpec("s", ("key",)), spark=spark)
    assert cells(out) == expected_release(h, rec)


def test_adult_counts_equal_the_arrow_and_duckdb_backends(spark: Any, tmp_path: Path) -> None:
    path = tmp_path / "adult.parquet"
    pq.write_table(read_release(ADULT), path)
    spec = ReleaseSpec("occupation", ("age", "sex", "race"))
    arrow, _ = count_release(path, spec, requested="arrow")
    duck, _ = count_release(path, spec, requested="duckdb")
    got = spark_backend().count(path, spec, spark=spark)
    same_bucketization(got, arrow)
    same_bucketization(got, duck)
    assert int(got.counts.sum()) == read_release(ADULT).num_rows
    h = spark_backend().histogram(path, ["age", "sex", "race"], "occupation", spark=spark)
    assert labelled(h) == arrow_histogram(path, ["age", "sex", "race"], "occupation", None)


# ------------------------------------------------------------------ write_release
def decade(label: str) -> str:
    a = int(label)
    low = a // 10 * 10
    return f"{low}-{low + 9}"


def generalize_age(h: Histogram) -> Recoding:
    """A fixed generalization: age to its decade, zip suppressed to ``*`` (one group per
    histogram row)."""
    enc = h.encoded()
    age = enc.qis[0]
    groups: dict[tuple[str, ...], int] = {}
    group = []
    for r in range(enc.rows):
        lab = (decade(age.values[int(age.codes[r])]), "*")
        group.append(groups.setdefault(lab, len(groups)))
    return Recoding(
        ("age", "zip"),
        tuple(groups),
        np.arange(enc.rows, dtype=np.int64),
        np.asarray(group, dtype=np.int64),
        np.asarray(h.counts, dtype=np.int64),
    )


def expected_release(h: Histogram, rec: Recoding) -> dict[tuple[str, ...], int]:
    """Per (group labels, sensitive text) the records the recoding publishes."""
    enc = h.encoded()
    out: Counter[tuple[str, ...]] = Counter()
    for r, g, c in zip(rec.row, rec.group, rec.count, strict=True):
        s = enc.sensitive.values[int(enc.sensitive.codes[int(r)])]
        out[(*rec.labels[int(g)], s)] += int(c)
    return dict(out)


def write_source(path: Path, rows: list[tuple[Any, ...]]) -> None:
    pq.write_table(
        pa.table(
            {
                "age": pa.array([r[0] for r in rows], pa.int64()),
                "zip": pa.array([r[1] for r in rows], pa.string()),
                "s": pa.array([r[2] for r in rows], pa.string()),
                "name": pa.array([f"person {i}" for i in range(len(rows))], pa.string()),
            }
        ),
        path,
    )


ROWS: list[tuple[Any, ...]] = [
    (31, "a", "flu"), (35, "a", "flu"), (35, "a", "flu"), (39, "b", "cold"),
    (42, "b", None), (44, "c", " "), (44, "c", "hiv"), (47, "c", "flu"),
    (51, "a", "cold"), (51, "a", "cold"), (51, "a", "cold"), (58, "b", "hiv"),
]  # fmt: skip


@pytest.mark.parametrize("mode", ["parquet", "table"])
def test_write_release_applies_a_generalization(spark: Any, tmp_path: Path, mode: str) -> None:
    src = tmp_path / "src.parquet"
    write_source(src, ROWS)
    backend = spark_backend()
    h = backend.histogram(src, ["age", "zip"], "s", spark=spark, missing_as="?")
    assert h.dropped == ("name",)
    rec = generalize_age(h)
    target = str(tmp_path / "out") if mode == "parquet" else f"release_{tmp_path.name[-8:]}"
    target = target.replace("-", "_") if mode == "table" else target
    written = backend.write_release(src, h, rec, target, mode=mode, spark=spark, missing_as="?")
    assert written == rec.records == len(ROWS)
    out = spark.read.parquet(target) if mode == "parquet" else spark.table(target)
    assert out.columns == ["age", "zip", "s"]  # no other column is written
    spec = ReleaseSpec("s", ("age", "zip"))
    got = backend.count(out, spec, spark=spark)
    # by definition: each row's decade and its sensitive value (blank -> "?")
    by_rows: Counter[tuple[str, ...]] = Counter()
    for a, _, s in ROWS:
        by_rows[(decade(str(a)), "*", "?" if blank(s) else s)] += 1
    assert cells(got) == expected_release(h, rec) == dict(by_rows)
    if mode == "parquet":
        # the folder read by the Arrow path counts the same
        part = next(Path(target).glob("*.parquet"))
        assert part.exists()
        files = sorted(Path(target).glob("*.parquet"))
        table = pa.concat_tables([pq.read_table(f) for f in files])
        assert Bucketization.from_arrow(table, spec).normalized().counts.tolist() == (
            got.counts.tolist()
        )


def test_write_release_splits_rows_over_groups_and_suppresses(spark: Any, tmp_path: Path) -> None:
    """A bucketization-like recoding: the 3 records of (51, a, cold) go 2 to bucket 1 and
    1 to bucket 2; one of the 2 records of (35, a, flu) to bucket 2, the other suppressed;
    rows not listed are suppressed."""
    src = tmp_path / "src.parquet"
    write_source(src, ROWS)
    backend = spark_backend()
    h = backend.histogram(src, ["age", "zip"], "s", spark=spark, missing_as="?")
    enc = h.encoded()
    index = {
        tuple(c.values[int(c.codes[r])] for c in [*enc.qis, enc.sensitive]): r
        for r in range(enc.rows)
    }
    r51 = index[("51", "a", "cold")]
    r35 = index[("35", "a", "flu")]
    r58 = index[("58", "b", "hiv")]
    assert h.counts[r51] == 3 and h.counts[r35] == 2
    entries = sorted([(r51, 0, 2), (r51, 1, 1), (r35, 1, 1), (r58, 0, 1)])
    rec = Recoding(
        ("bucket",),
        (("1",), ("2",)),
        np.asarray([e[0] for e in entries], dtype=np.int64),
        np.asarray([e[1] for e in entries], dtype=np.int64),
        np.asarray([e[2] for e in entries], dtype=np.int64),
    )
    assert not rec.one_group_per_row
    target = str(tmp_path / "split")
    assert backend.write_release(src, h, rec, target, spark=spark, missing_as="?") == 5
    got = backend.count(spark.read.parquet(target), ReleaseSpec("s", ("bucket",)), spark=spark)
    assert (
        cells(got)
        == expected_release(h, rec)
        == {
            ("1", "cold"): 2,
            ("1", "hiv"): 1,
            ("2", "cold"): 1,
            ("2", "flu"): 1,
        }
    )


def test_write_release_suppresses_part_of_a_row(spark: Any, tmp_path: Path) -> None:
    """One group per histogram row, but fewer records than the row has: only that many
    are written (the range join, not the plain join)."""
    src = tmp_path / "src.parquet"
    write_source(src, ROWS)
    backend = spark_backend()
    h = backend.histogram(src, ["age", "zip"], "s", spark=spark, missing_as="?")
    whole = generalize_age(h)
    r51 = int(np.flatnonzero(h.counts == 3)[0])
    count = whole.count.copy()
    count[r51] = 1
    rec = Recoding(whole.columns, whole.labels, whole.row, whole.group, count)
    assert rec.one_group_per_row and rec.records == len(ROWS) - 2
    target = str(tmp_path / "partial")
    assert backend.write_release(src, h, rec, target, spark=spark, missing_as="?") == 10
    got = backend.count(spark.read.parquet(target), ReleaseSpec("s", ("age", "zip")), spark=spark)
    assert cells(got) == expected_release(h, rec)
    assert cells(got)[("50-59", "*", "cold")] == 1


def test_write_release_of_a_dataframe_with_float_keys(spark: Any, tmp_path: Path) -> None:
    """A DataFrame source; -0.0 and 0.0 are separate histogram rows and each record is
    written once (the join keeps them apart too)."""
    df = spark.createDataFrame(pa.table({"w": [0.0, -0.0, -0.0, 1.0], "s": ["a", "a", "b", "a"]}))
    backend = spark_backend()
    h = backend.histogram(df, ["w"], "s", spark=spark)
    assert labelled(h) == {("0", "a"): 1, ("-0", "a"): 1, ("-0", "b"): 1, ("1", "a"): 1}
    w = pc.cast(h.keys.column("w"), pa.string()).to_pylist()
    rec = Recoding(
        ("w",),
        tuple((v,) for v in w),
        np.arange(len(w), dtype=np.int64),
        np.arange(len(w), dtype=np.int64),
        np.asarray(h.counts, dtype=np.int64),
    )
    target = str(tmp_path / "floats")
    assert backend.write_release(df, h, rec, target, spark=spark) == 4
    out = backend.count(spark.read.parquet(target), ReleaseSpec("s", ("w",)), spark=spark)
    assert cells(out) == labelled(h)


# ------------------------------------------------------------------ bad input
def test_bad_input(spark: Any, tmp_path: Path) -> None:
    src = tmp_path / "src.parquet"
    write_source(src, ROWS)
    backend = spark_backend()
    with pytest.raises(InputError, match="quasi-identifier 'nope' does not exist"):
        backend.histogram(src, ["nope"], "s", spark=spark)
    with pytest.raises(InputError, match="cannot be both"):
        backend.histogram(src, ["s"], "s", spark=spark)
    with pytest.raises(InputError, match="group column 'nope' does not exist"):
        backend.count(src, ReleaseSpec("s", ("nope",)), spark=spark)
    with pytest.raises(InputError, match="does not exist in the Spark catalog"):
        backend.histogram("no_such_table", ["age"], "s", spark=spark)
    with pytest.raises(InputError, match=r"2 blank cells \(the first in data row 5\)"):
        backend.histogram(src, ["age"], "s", spark=spark)
    with pytest.raises(InputError, match="--missing-as must not be blank"):
        backend.histogram(src, ["age"], "s", spark=spark, missing_as=" ")
    with pytest.raises(InputError, match="reads as a pattern"):
        backend.histogram(tmp_path / "r*.parquet", ["age"], "s", spark=spark)
    with pytest.raises(InputError, match="does not exist"):
        backend.histogram(tmp_path / "gone.parquet", ["age"], "s", spark=spark)
    not_utf8 = tmp_path / "not_utf8.parquet"
    text = pa.array([b"ok", b"\xff\xfe"], pa.binary()).view(pa.string())
    pq.write_table(pa.table({"g": text, "s": ["a", "b"]}), not_utf8)
    with pytest.raises(InputError, match=r"column 'g' of .* not valid UTF-8"):
        backend.count(not_utf8, ReleaseSpec("s", ("g",)), spark=spark)
    nested = tmp_path / "nested.parquet"
    pq.write_table(pa.table({"l": [[1], [2]], "s": ["a", "b"]}), nested)
    with pytest.raises(InputError, match="nested type"):
        backend.histogram(nested, ["l"], "s", spark=spark)
    h = backend.histogram(src, ["age", "zip"], "s", spark=spark, missing_as="?")
    rec = generalize_age(h)
    with pytest.raises(InputError, match="mode must be one of"):
        backend.write_release(src, h, rec, str(tmp_path / "x"), mode="csv", spark=spark)
    with pytest.raises(InputError, match="the target must be a table name"):
        backend.write_release(src, h, rec, "t; DROP TABLE x", mode="table", spark=spark)
    (tmp_path / "taken").mkdir()
    with pytest.raises(InputError, match=r"the target .*taken' already exists"):
        backend.write_release(src, h, rec, str(tmp_path / "taken"), spark=spark, missing_as="?")
    spark.createDataFrame(pa.table({"x": [1]})).write.saveAsTable("taken_table")
    with pytest.raises(InputError, match="the target 'taken_table' already exists"):
        backend.write_release(src, h, rec, "taken_table", mode="table", spark=spark, missing_as="?")
    assert spark.table("taken_table").count() == 1
    too_many = Recoding(rec.columns, rec.labels, rec.row, rec.group, rec.count + 1)
    with pytest.raises(InputError, match="more records than a histogram row has"):
        backend.write_release(src, h, too_many, str(tmp_path / "y"), spark=spark, missing_as="?")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
    # the source changed since its histogram: refused, nothing left behind
    changed = tmp_path / "changed.parquet"
    write_source(changed, [*ROWS, (31, "a", "flu")])
    with pytest.raises(InputError, match=r"no longer matches its histogram.*output was removed"):
        backend.write_release(changed, h, rec, str(tmp_path / "z"), spark=spark, missing_as="?")
    assert not (tmp_path / "z").exists()


def test_no_value_leaks_in_errors(spark: Any, tmp_path: Path) -> None:
    """A blank or null error names the column and a row number, never a cell's value."""
    path = tmp_path / "secret.parquet"
    pq.write_table(pa.table({"q": ["SECRET-QI", None], "s": ["SECRET-S", "cancer"]}), path)
    with pytest.raises(InputError) as err:
        spark_backend().histogram(path, ["q"], "s", spark=spark)
    assert "SECRET" not in str(err.value) and "cancer" not in str(err.value)
    assert "column 'q' has 1 missing value(s)" in str(err.value)


# ------------------------------------------------------------------------ DP counts
@pytest.mark.parametrize("seed", range(3))
def test_dp_counts_by_spark_equal_duckdbs(spark: Any, tmp_path: Path, seed: int) -> None:
    """A DP release's bounded counts (each person's first records, in the order of their
    values) by Spark and by DuckDB over one Parquet file: the same marginal vectors; a float
    zero keeps its sign."""
    import random

    from airflow_privacy.core.backends.duck import bounded_counts
    from airflow_privacy.core.dp.marginals import Marginal, Summed, count_vectors, sum_vectors

    rng = random.Random(seed)
    n = rng.randrange(5, 60)
    t = pa.table({
        "a": pa.array([rng.choice(["x", "y", "z", None]) for _ in range(n)], pa.string()),
        "f": pa.array([rng.choice([1.5, 0.0, -0.0, None]) for _ in range(n)], pa.float64()),
        "k": pa.array([rng.choice([3, 17, 100]) for _ in range(n)], pa.int64()),
        "who": pa.array([f"p{rng.randrange(8)}" for _ in range(n)], pa.string()),
        "v": pa.array([rng.choice([None, -7.5, -0.5, 0.5, 2.5, 9.5, 1e9, float("nan"),
                                   float("inf")]) for _ in range(n)], pa.float64()),
    })  # fmt: skip
    path = tmp_path / "t.parquet"
    pq.write_table(t, path)
    keys = {"a": ["x", "y", "z"], "f": ["1.5", "0.0", "-0.0"], "k": ["3", "17", "100"]}
    ms = [Marginal(("a",)), Marginal(("f", "a")), Marginal(("k", "f"))]
    # the sums of a float column with nulls, NaN and infinities, and of a grouped column
    sums = [Summed("v", -3, 10), Summed("k", 0, 20)]
    for entity, bound in ((None, 1), ("who", 1), ("who", 2)):
        columns = ["a", "f", "k"]
        table, counts = spark_backend().bounded_counts(
            path, columns, entity=entity, bound=bound, spark=spark, sums=sums
        )
        ours = count_vectors(table, counts, ms, keys)
        d_table, d_counts = bounded_counts(path, columns, entity=entity, bound=bound, sums=sums)
        duck = count_vectors(d_table, d_counts, ms, keys)
        for m, a, b in zip(ms, ours, duck, strict=True):
            assert a.tolist() == b.tolist(), (seed, entity, bound, m)
        assert [[v.tolist() for v in x] for x in sum_vectors(table, ms, keys, 2)] == [
            [v.tolist() for v in x] for x in sum_vectors(d_table, ms, keys, 2)
        ], (seed, entity, bound)
