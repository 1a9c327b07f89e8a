"""Marginal count vectors and the bounded counting behind them, against brute force: every
record placed in its cell by hand (exhaustively, on small random tables), each person's
first ``bound`` records kept in the order of their values, a record with a value outside a
key set left out (of every marginal); and the sensitivity claim itself: removing any one
person changes each marginal's vector by non-negative integers summing to at most
``bound``."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from airflow_privacy.core.backends.duck import bounded_counts
from airflow_privacy.core.dp.marginals import (
    MAX_CELLS,
    SUM_PREFIX,
    Marginal,
    Summed,
    cells,
    check_marginals,
    count_vectors,
    sum_vectors,
)
from airflow_privacy.errors import InputError
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)

KEYS = {"a": ["x", "y", "z"], "b": ["1", "2"], "c": ["p", "q", "r", "s"]}


def brute(
    rows: list[dict[str, str | None]], marginal: Marginal, keys: dict[str, list[str]]
) -> list[int]:
    """Each cell's records by hand; a record with a value of any of ``keys``' columns outside
    its key set is counted in no marginal (the marginals count the same records)."""
    inside = [r for r in rows if all(r[c] in vs for c, vs in keys.items())]
    out = []
    for cell in itertools.product(*(keys[c] for c in marginal.columns)):
        out.append(sum(all(r[c] == v for c, v in zip(marginal.columns, cell, strict=True))
                       for r in inside))  # fmt: skip
    return out


def bounded(rows: list[dict[str, str | None]], columns: list[str], entity: str | None,
            bound: int) -> list[dict[str, str | None]]:  # fmt: skip
    if entity is None:
        return rows
    by: dict[str | None, list[dict[str, str | None]]] = {}
    for r in rows:
        by.setdefault(r[entity], []).append(r)
    kept = []
    for mine in by.values():
        mine.sort(key=lambda r: tuple((r[c] is None, r[c] or "") for c in columns))
        kept += mine[:bound]
    return kept


def table(rng: random.Random, n: int, people: int) -> list[dict[str, str | None]]:
    values = {"a": ["x", "y", "z", "w"], "b": ["1", "2", "3"], "c": ["p", "q", "r", "s"]}
    return [
        {c: rng.choice([*vs, None]) if rng.random() < 0.1 else rng.choice(vs)
         for c, vs in values.items()} | {"who": f"p{rng.randrange(people)}"}
        for _ in range(n)
    ]  # fmt: skip


MARGINALS = [Marginal(("a",)), Marginal(("a", "b")), Marginal(("c", "a")),
             Marginal(("a", "b", "c"))]  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_vectors_equal_brute_force(tmp_path: Path, seed: int, fmt: str) -> None:
    rng = random.Random(seed)
    rows = table(rng, rng.randrange(1, 60), rng.randrange(1, 12))
    path = tmp_path / f"t.{fmt}"
    t = pa.table({c: pa.array([r[c] for r in rows], pa.string()) for c in ("a", "b", "c", "who")})
    (pq.write_table if fmt == "parquet" else pacsv.write_csv)(t, path)
    columns = ["a", "b", "c"]
    for entity, bound in ((None, 1), ("who", 1), ("who", 2), ("who", 5)):
        got_t, got_n = bounded_counts(path, columns, entity=entity, bound=bound)
        vectors = count_vectors(got_t, got_n, MARGINALS, KEYS)
        kept = bounded(rows, columns, entity, bound)
        if fmt == "csv":  # a blank CSV cell is the empty text, read as null: in no key set
            kept = [{k: (v or None) for k, v in r.items()} for r in kept]
        for m, v in zip(MARGINALS, vectors, strict=True):
            assert v.tolist() == brute(kept, m, KEYS), (seed, entity, bound, m)
            assert len(v) == len(cells(m, KEYS))


@pytest.mark.parametrize("seed", range(20))
def test_one_person_moves_each_marginal_by_at_most_the_bound(tmp_path: Path, seed: int) -> None:
    rng = random.Random(100 + seed)
    rows = table(rng, rng.randrange(2, 50), rng.randrange(1, 8))
    bound = rng.choice([1, 2, 3])
    t = pa.table({c: pa.array([r[c] for r in rows], pa.string()) for c in ("a", "b", "c", "who")})
    full = tmp_path / "full.parquet"
    pq.write_table(t, full)
    whole = count_vectors(*bounded_counts(full, ["a", "b", "c"], entity="who", bound=bound),
                          MARGINALS, KEYS)  # fmt: skip
    for person in sorted({str(r["who"]) for r in rows}):
        rest = t.filter(pa.compute.not_equal(t.column("who"), person))
        path = tmp_path / f"without-{person}.parquet"
        pq.write_table(rest, path)
        if rest.num_rows:
            fewer = count_vectors(
                *bounded_counts(path, ["a", "b", "c"], entity="who", bound=bound), MARGINALS, KEYS
            )
        else:
            fewer = [np.zeros_like(v) for v in whole]
        for a, b in zip(whole, fewer, strict=True):
            diff = a - b
            assert (diff >= 0).all() and diff.sum() <= bound
            assert float(np.sqrt((diff.astype(float) ** 2).sum())) <= bound


def test_typed_parquet_values_are_matched_as_text(tmp_path: Path) -> None:
    path = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"age": [17, 17, 30, None], "x": [1.5, -0.0, 0.0, 2.0]}), path)
    t, n = bounded_counts(path, ["age"])
    (v,) = count_vectors(t, n, [Marginal(("age",))], {"age": ["17", "30", "99"]})
    assert v.tolist() == [2, 1, 0]
    t, n = bounded_counts(path, ["x"])
    (v,) = count_vectors(t, n, [Marginal(("x",))], {"x": ["0.0", "-0.0", "1.5"]})
    assert v.tolist() == [1, 1, 1]  # a float zero keeps its sign, as everywhere


def test_bad_marginals_are_refused() -> None:
    with pytest.raises(InputError, match="at least one"):
        check_marginals([], KEYS)
    with pytest.raises(InputError, match="no declared key set"):
        check_marginals([Marginal(("nope",))], KEYS)
    with pytest.raises(InputError, match="twice"):
        check_marginals([Marginal(("a", "b")), Marginal(("b", "a"))], KEYS)
    with pytest.raises(InputError, match="twice"):
        check_marginals([Marginal(("a", "a"))], KEYS)
    with pytest.raises(InputError, match="empty"):
        check_marginals([Marginal(("a",))], {"a": []})
    big = {c: [str(i) for i in range(1000)] for c in "abc"}
    with pytest.raises(InputError, match=f"{MAX_CELLS:,}"):
        check_marginals([Marginal(("a", "b", "c"))], big)
    assert check_marginals(MARGINALS, KEYS) == 3 + 6 + 12 + 24


def test_a_missing_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,b\nx,1\n")
    with pytest.raises(InputError, match=r"'zz' is not in t\.csv"):
        bounded_counts(path, ["a", "zz"])
    counted = Counter(bounded_counts(path, ["a", "b"])[1].tolist())
    assert counted == {1: 1}


@pytest.fixture(params=["sqlite", "postgresql"])
def sql_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'db.sqlite'}"
    return str(request.getfixturevalue("pg_url"))


@pytest.mark.parametrize("seed", range(4))
def test_a_sql_table_counts_as_the_file_does(tmp_path: Path, sql_url: str, seed: int) -> None:
    """The same records in a SQL table (text columns and an integer one) and in a Parquet
    file: the same vectors, bounded per person or not."""
    import sqlalchemy as sa

    from airflow_privacy.core.backends import sql

    rng = random.Random(300 + seed)
    rows = table(rng, rng.randrange(1, 80), rng.randrange(1, 10))
    for r in rows:
        r["n"] = str(rng.choice([3, 17, 100]))  # numbers: ordered as numbers in both
    columns = ["a", "b", "n"]
    keys = {**KEYS, "n": ["3", "17", "100"]}
    ms = [Marginal(("a",)), Marginal(("a", "n")), Marginal(("n", "b"))]
    t = pa.table({c: pa.array([r[c] for r in rows], pa.string()) for c in ("a", "b", "who")}
                 | {"n": pa.array([int(str(r["n"])) for r in rows], pa.int64())})  # fmt: skip
    path = tmp_path / "t.parquet"
    pq.write_table(t, path)
    engine = sa.create_engine(sql_url)
    meta = sa.MetaData()
    st = sa.Table("people", meta, sa.Column("a", sa.Text), sa.Column("b", sa.Text),
                  sa.Column("who", sa.Text), sa.Column("n", sa.Integer))  # fmt: skip
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(st.insert(), [{"a": r["a"], "b": r["b"], "who": r["who"],
                                    "n": int(str(r["n"]))} for r in rows])  # fmt: skip
    for entity, bound in ((None, 1), ("who", 1), ("who", 3)):
        from_file = count_vectors(*bounded_counts(path, columns, entity=entity, bound=bound),
                                  ms, keys)  # fmt: skip
        from_sql = count_vectors(
            *sql.bounded_counts(engine, "people", columns, entity=entity, bound=bound), ms, keys
        )
        for m, a, b in zip(ms, from_file, from_sql, strict=True):
            assert a.tolist() == b.tolist(), (seed, entity, bound, m)
    engine.dispose()


# ------------------------------------------------------------------------------ sums
SUMS = [Summed("v", -3, 10), Summed("a2", 0, 4)]


def clamped(value: Any, s: Summed) -> int:
    """One record's contribution by the definition: a null 0, NaN the largest, else
    clamped to the bounds and rounded half up."""
    if value is None or value == "":
        return 0
    v = float(value)
    if math.isnan(v):
        return s.high
    return math.floor(min(max(v, s.low), s.high) + 0.5)


def brute_sums(rows: list[dict[str, Any]], marginal: Marginal, s: Summed) -> list[int]:
    inside = [r for r in rows if all(r[c] in vs for c, vs in KEYS.items())]
    return [
        sum(clamped(r[s.column], s) for r in inside
            if all(r[c] == v for c, v in zip(marginal.columns, cell, strict=True)))
        for cell in itertools.product(*(KEYS[c] for c in marginal.columns))
    ]  # fmt: skip


def numeric_table(rng: random.Random, n: int, people: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = table(rng, n, people)
    for r in rows:
        r["v"] = rng.choice([None, -7.5, -3.5, -0.5, 0.0, 0.5, 2.49, 2.5, 9.5, 10.5, 1e9,
                             float("inf"), -float("inf"), float("nan"), 4.0])  # fmt: skip
        r["a2"] = rng.choice([None, 0, 1, 3, 5, 400])
    return rows


def numeric_arrow(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table(
        {c: pa.array([r[c] for r in rows], pa.string()) for c in ("a", "b", "c", "who")}
        | {"v": pa.array([r["v"] for r in rows], pa.float64()),
           "a2": pa.array([r["a2"] for r in rows], pa.int64())}
    )  # fmt: skip


@pytest.mark.parametrize("seed", range(10))
def test_sums_equal_brute_force(tmp_path: Path, seed: int) -> None:
    """Parquet (typed) and CSV (text) files: each cell's sum of the clamped, rounded values
    of the records counted, bounded per person as the counts are."""
    rng = random.Random(500 + seed)
    rows = numeric_table(rng, rng.randrange(1, 60), rng.randrange(1, 10))
    for fmt in ("parquet", "csv"):
        path = tmp_path / f"t.{fmt}"
        t = numeric_arrow(rows)
        if fmt == "csv":  # no NaN or infinity in a CSV written by hand: text of numbers
            finite = [r["v"] if r["v"] is not None and math.isfinite(r["v"]) else None
                      for r in rows]  # fmt: skip
            t = t.set_column(4, "v", pa.array(finite, pa.float64()))
        (pq.write_table if fmt == "parquet" else pacsv.write_csv)(t, path)
        seen = [dict(r, v=t.column("v")[i].as_py()) for i, r in enumerate(rows)]
        if fmt == "csv":
            seen = [{k: (v if v != "" else None) for k, v in r.items()} for r in seen]
        for entity, bound in ((None, 1), ("who", 2)):
            got_t, _ = bounded_counts(path, ["a", "b", "c"], entity=entity, bound=bound, sums=SUMS)
            kept = bounded(seen, ["a", "b", "c"], entity, bound)
            for s, per_marginal in zip(SUMS, sum_vectors(got_t, MARGINALS, KEYS, 2), strict=True):
                for m, v in zip(MARGINALS, per_marginal, strict=True):
                    assert v.tolist() == brute_sums(kept, m, s), (seed, fmt, entity, m, s)


@pytest.mark.parametrize("seed", range(3))
def test_sums_in_a_sql_table_equal_the_file(tmp_path: Path, sql_url: str, seed: int) -> None:
    import sqlalchemy as sa

    from airflow_privacy.core.backends import sql

    rng = random.Random(700 + seed)
    rows = numeric_table(rng, rng.randrange(1, 60), rng.randrange(1, 10))
    for r in rows:  # no NaN or infinity in SQLite
        if r["v"] is not None and not math.isfinite(r["v"]):
            r["v"] = None
    path = tmp_path / "t.parquet"
    pq.write_table(numeric_arrow(rows), path)
    engine = sa.create_engine(sql_url)
    meta = sa.MetaData()
    st = sa.Table("people", meta, *[sa.Column(c, sa.Text) for c in ("a", "b", "c", "who")],
                  sa.Column("v", sa.Float), sa.Column("a2", sa.Integer))  # fmt: skip
    meta.create_all(engine)
    with engine.begin() as conn:
        conn.execute(st.insert(), rows)
    for entity, bound in ((None, 1), ("who", 1), ("who", 3)):
        file_t, _ = bounded_counts(path, ["a", "b", "c"], entity=entity, bound=bound, sums=SUMS)
        sql_t, _ = sql.bounded_counts(engine, "people", ["a", "b", "c"], entity=entity,
                                      bound=bound, sums=SUMS)  # fmt: skip
        assert [[v.tolist() for v in x] for x in sum_vectors(file_t, MARGINALS, KEYS, 2)] == [
            [v.tolist() for v in x] for x in sum_vectors(sql_t, MARGINALS, KEYS, 2)
        ], (seed, entity, bound)
    with pytest.raises(InputError, match="'a' of table 'people' has type TEXT"):
        sql.bounded_counts(engine, "people", ["b"], sums=[Summed("a", 0, 1)])
    engine.dispose()


def test_a_text_value_in_a_summed_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("a,v\nx,1\nx,twelve\n")
    with pytest.raises(InputError, match=r"'v' of t\.csv holds a value that is not a number"):
        bounded_counts(path, ["a"], sums=[Summed("v", 0, 5)])
    path.write_text("a,v\nx,1\nx, 12 \ny,\n")
    t, _ = bounded_counts(path, ["a"], sums=[Summed("v", 0, 5)])
    assert t.column(f"{SUM_PREFIX}0").to_pylist() == [6, 0]


@pytest.mark.parametrize("seed", range(10))
def test_one_person_moves_a_sum_by_at_most_bound_times_reach(tmp_path: Path, seed: int) -> None:
    rng = random.Random(900 + seed)
    rows = numeric_table(rng, rng.randrange(2, 40), rng.randrange(1, 6))
    bound = rng.choice([1, 2, 3])
    t = numeric_arrow(rows)
    full = tmp_path / "full.parquet"
    pq.write_table(t, full)

    def vectors(path: Path) -> list[list[np.ndarray]]:
        got, _ = bounded_counts(path, ["a", "b", "c"], entity="who", bound=bound, sums=SUMS)
        return sum_vectors(got, MARGINALS, KEYS, 2)

    whole = vectors(full)
    for person in sorted({str(r["who"]) for r in rows}):
        rest = t.filter(pa.compute.not_equal(t.column("who"), person))
        if not rest.num_rows:
            continue
        path = tmp_path / f"without-{person}.parquet"
        pq.write_table(rest, path)
        for s, a_s, b_s in zip(SUMS, whole, vectors(path), strict=True):
            for a, b in zip(a_s, b_s, strict=True):
                assert int(np.abs(a - b).sum()) <= bound * s.reach
