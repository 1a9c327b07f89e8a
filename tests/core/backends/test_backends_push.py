"""DuckDB's push-down pieces of an anonymization: the histogram and the write-back.

* :meth:`DuckDBBackend.histogram`: one ``GROUP BY qis..., sensitive`` over the file. Its
  encoded labels and weights (:meth:`Histogram.encoded`) must equal the in-process path's
  (the rows read by :mod:`airflow_privacy.core.io` and encoded row by row), and the counts
  the definition's: the number of records of each distinct ``(QI..., sensitive)`` tuple,
  counted here from the rows with a plain dictionary.
* :meth:`DuckDBBackend.write_release`: a recoding applied by DuckDB and written to the
  target. The written file, read back by the project's own reader, must hold exactly the
  published records the recoding describes (``count[i]`` records of histogram row
  ``row[i]`` with group ``group[i]``'s labels and the row's sensitive text); the same
  recoding applied in process, record by record in Python (an independent implementation:
  each record looked up by its labels, the records of a tuple handed out in order), must
  give the same per-group counts; and ``count()`` of the written file must equal the
  bucketization the recoding implies.
"""

from __future__ import annotations

import csv
import io
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize.encoding import Encoded, encode
from airflow_privacy.core.anonymize.plan import Recoding
from airflow_privacy.core.backends import count_release
from airflow_privacy.core.backends.duck import DuckDBBackend
from airflow_privacy.core.backends.histogram import Histogram
from airflow_privacy.core.io import read_release
from airflow_privacy.core.model import ReleaseSpec
from airflow_privacy.errors import InputError

ADULT = Path(__file__).resolve().parents[3] / "airflow_privacy" / "data" / "adult" / "adult.csv.gz"
TOKENS = ["a", "b", "01", "1", " ", '"', ",", ";", "é", "x y", "'", "*"]

cell = st.lists(st.sampled_from(TOKENS), min_size=0, max_size=2).map("".join)
sensitive_cell = st.one_of(cell, st.none())
DUCK = DuckDBBackend()


def weighted_cells(enc: Encoded) -> Counter[tuple[str, ...]]:
    """The records of each distinct labelled tuple of an encoded input."""
    out: Counter[tuple[str, ...]] = Counter()
    w = enc.row_weights()
    for r in range(enc.rows):
        key = (
            *(c.values[c.codes[r]] for c in enc.qis),
            enc.sensitive.values[enc.sensitive.codes[r]],
        )
        out[key] += int(w[r])
    return out


def in_process(path: Path, qis: list[str], s: str, missing_as: str | None, **kw: Any) -> Encoded:
    table = read_release(path, [*qis, s], sensitive=s, missing_as=missing_as, **kw)
    return encode(table, qis, s)


def write_csv(path: Path, names: list[str], rows: list[tuple[Any, ...]]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    path.write_text(buf.getvalue(), encoding="utf-8")


def write(path: Path, rows: list[tuple[Any, ...]]) -> None:
    """Columns ``q`` (text), ``n`` (integers), ``s`` (text, maybe blank), ``other``."""
    if path.suffix == ".csv":
        write_csv(path, ["q", "n", "s", "other"], [(*r, i) for i, r in enumerate(rows)])
        return
    pq.write_table(
        pa.table(
            {
                "q": pa.array([r[0] for r in rows], pa.string()),
                "n": pa.array([r[1] for r in rows], pa.int64()),
                "s": pa.array([r[2] for r in rows], pa.string()),
                "other": pa.array(range(len(rows)), pa.int64()),
            }
        ),
        path,
    )


def by_definition(rows: list[tuple[Any, ...]], missing_as: str | None) -> Counter[tuple[str, ...]]:
    out: Counter[tuple[str, ...]] = Counter()
    for q, n, s in rows:
        if s is None or not s.strip():
            s = missing_as
        out[(q, str(n), s)] += 1
    return out


rows_strategy = st.lists(
    st.tuples(cell, st.integers(-3, 3), sensitive_cell), min_size=1, max_size=30
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows_strategy, fmt=st.sampled_from(["csv", "parquet"]),
       missing_as=st.sampled_from([None, "?", "a"]))  # fmt: skip
def test_histogram_parity(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, int, str | None]],
    fmt: str,
    missing_as: str | None,
) -> None:
    path = tmp_path_factory.mktemp("h") / f"r.{fmt}"
    write(path, rows)
    try:
        mine = in_process(path, ["q", "n"], "s", missing_as)
    except InputError as exc:
        with pytest.raises(InputError) as duck_exc:
            DUCK.histogram(path, ["q", "n"], "s", missing_as=missing_as)
        assert str(duck_exc.value) == str(exc)
        return
    hist = DUCK.histogram(path, ["q", "n"], "s", missing_as=missing_as)
    enc = hist.encoded()
    assert enc.weights is not None and enc.n == len(rows) == hist.records
    assert enc.dropped == ("other",)
    assert weighted_cells(enc) == weighted_cells(mine) == by_definition(rows, missing_as)
    assert enc.rows == len(set(weighted_cells(enc)))  # one row per distinct tuple
    again = DUCK.histogram(path, ["q", "n"], "s", missing_as=missing_as)
    assert again.keys.equals(hist.keys)  # the same row order on every run
    assert again.counts.tolist() == hist.counts.tolist()


@pytest.mark.parametrize("qis", [["age", "sex", "race"], ["education", "native-country"]])
def test_histogram_adult(qis: list[str]) -> None:
    hist = DUCK.histogram(ADULT, qis, "occupation")
    mine = in_process(ADULT, qis, "occupation", None)
    assert weighted_cells(hist.encoded()) == weighted_cells(mine)
    assert hist.records == mine.n == 30162


def test_histogram_typed_parquet(tmp_path: Path) -> None:
    """Dates, floats (a negative zero kept apart), decimals and dictionaries: the same
    labels as the in-process path."""
    import datetime
    import decimal

    path = tmp_path / "t.parquet"
    table = pa.table(
        {
            "d": pa.array([datetime.date(2020, 1, 2), datetime.date(2021, 3, 4)] * 3),
            "f": pa.array([0.0, -0.0, 1.5, 0.0, -0.0, 2.25]),
            "m": pa.array([decimal.Decimal("1.10"), decimal.Decimal("2.00")] * 3),
            "s": pa.array(["x", "y", "x", "x", "z", "y"]).dictionary_encode(),
        }
    )
    pq.write_table(table, path)
    hist = DUCK.histogram(path, ["d", "f", "m"], "s")
    mine = in_process(path, ["d", "f", "m"], "s", None)
    assert weighted_cells(hist.encoded()) == weighted_cells(mine)
    out = tmp_path / "out.parquet"
    everything = Recoding(
        ("f",),
        tuple((v,) for v in hist.encoded().qis[1].values),
        np.arange(hist.keys.num_rows, dtype=np.int64),
        hist.encoded().qis[1].codes,
        hist.counts.copy(),
    )
    assert DUCK.write_release(path, hist, everything, out) == 6
    back = read_release(out)
    assert Counter(
        zip(back.column("f").to_pylist(), back.column("s").to_pylist(), strict=True)
    ) == Counter(
        zip(
            mine.table.column("f").cast(pa.string()).to_pylist(),
            mine.table.column("s").cast(pa.string()).to_pylist(),
            strict=True,
        )
    )


# ------------------------------------------------------------------------- write-back
def random_recoding(hist: Histogram, rng: random.Random, split: bool) -> Recoding:
    """Groups by a coarse label of ``q`` (its length) and, with ``split``, records of a
    tuple spread over up to three buckets; some records suppressed."""
    enc = hist.encoded()
    q = enc.qis[0]
    rows: list[int] = []
    groups: list[int] = []
    counts: list[int] = []
    labels: dict[tuple[str, ...], int] = {}
    for r in range(enc.rows):
        total = int(hist.counts[r])
        if rng.random() < 0.2:
            total = rng.randrange(total)  # some (or all) of the row suppressed
        if total == 0:
            continue
        if split:
            parts = sorted(rng.sample(range(1, total), min(2, total - 1))) if total > 1 else []
            sizes = [b - a for a, b in zip([0, *parts], [*parts, total], strict=True)]
            for size in sizes:
                lab: tuple[str, ...] = (str(rng.randrange(3)),)
                rows.append(r)
                groups.append(labels.setdefault(lab, len(labels)))
                counts.append(size)
        else:
            lab = (f"len {len(q.values[q.codes[r]])}", "*")
            rows.append(r)
            groups.append(labels.setdefault(lab, len(labels)))
            counts.append(total)
    columns = ("bucket",) if split else ("q", "n")
    if not labels:
        labels[("0",) if split else ("-", "*")] = 0
    return Recoding(
        columns,
        tuple(labels),
        np.asarray(rows, np.int64),
        np.asarray(groups, np.int64),
        np.asarray(counts, np.int64),
    )


def published_by_definition(hist: Histogram, rec: Recoding) -> Counter[tuple[str, ...]]:
    enc = hist.encoded()
    s = enc.sensitive
    out: Counter[tuple[str, ...]] = Counter()
    for r, g, c in zip(rec.row.tolist(), rec.group.tolist(), rec.count.tolist(), strict=True):
        out[(*rec.labels[g], s.values[s.codes[r]])] += c
    return out


def applied_in_process(
    path: Path, hist: Histogram, rec: Recoding, missing_as: str | None
) -> Counter[tuple[str, ...]]:
    """The recoding applied record by record in Python to the rows the project's reader
    reads: each record's histogram row found by its labels, its tuple's records handed to
    the recoding's groups in order."""
    enc = hist.encoded()
    row_of = {}
    for r in range(enc.rows):
        key = (
            *(c.values[c.codes[r]] for c in enc.qis),
            enc.sensitive.values[enc.sensitive.codes[r]],
        )
        row_of[key] = r
    plan: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for r, g, c in zip(rec.row.tolist(), rec.group.tolist(), rec.count.tolist(), strict=True):
        plan[r].append((g, c))
    table = read_release(
        path, [*hist.qis, hist.sensitive], sensitive=hist.sensitive, missing_as=missing_as
    )
    text = {c: table.column(c).cast(pa.string()).to_pylist() for c in table.column_names}
    seen: Counter[int] = Counter()
    out: Counter[tuple[str, ...]] = Counter()
    for i in range(table.num_rows):
        r = row_of[(*(text[q][i] for q in hist.qis), text[hist.sensitive][i])]
        k = seen[r]
        seen[r] += 1
        for g, c in plan.get(r, []):
            if k < c:
                out[(*rec.labels[g], text[hist.sensitive][i])] += 1
                break
            k -= c
    return out


def read_back(out: Path, rec: Recoding, s: str) -> Counter[tuple[str, ...]]:
    table = read_release(out)
    assert table.column_names == [*rec.columns, s]
    cols = [table.column(c).to_pylist() for c in table.column_names]
    return Counter(zip(*cols, strict=True))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows_strategy, fmt=st.sampled_from(["csv", "parquet"]),
       out_fmt=st.sampled_from(["csv", "parquet"]), split=st.booleans(),
       missing_as=st.sampled_from([None, "?"]), seed=st.integers(0, 1000))  # fmt: skip
def test_write_release(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, int, str | None]],
    fmt: str,
    out_fmt: str,
    split: bool,
    missing_as: str | None,
    seed: int,
) -> None:
    if missing_as is None:
        rows = [(q, n, s if s is not None and s.strip() else "v") for q, n, s in rows]
    folder = tmp_path_factory.mktemp("w")
    path = folder / f"r.{fmt}"
    write(path, rows)
    hist = DUCK.histogram(path, ["q", "n"], "s", missing_as=missing_as)
    rec = random_recoding(hist, random.Random(seed), split)
    target = folder / f"release.{out_fmt}"
    n = DUCK.write_release(path, hist, rec, target, missing_as=missing_as, output_format=out_fmt)
    assert n == rec.records
    assert sorted(p.name for p in folder.iterdir()) == sorted([path.name, target.name])
    want = published_by_definition(hist, rec)
    if rec.records == 0:
        assert read_release(target).num_rows == 0
        return
    assert read_back(target, rec, "s") == want
    assert applied_in_process(path, hist, rec, missing_as) == want
    b, _ = count_release(target, ReleaseSpec("s", rec.columns), requested="duckdb")
    cells = {(*g, v): int(b.counts[i, j]) for i, g in enumerate(b.groups)
             for j, v in enumerate(b.values) if b.counts[i, j]}  # fmt: skip
    assert cells == dict(want)


def test_write_release_adult(tmp_path: Path) -> None:
    """Adult, generalized by hand (age to decades, education kept, sex suppressed for the
    rarest): DuckDB's file equals the in-process application."""
    hist = DUCK.histogram(ADULT, ["age", "education"], "occupation")
    enc = hist.encoded()
    age, edu = enc.qis
    labels: dict[tuple[str, ...], int] = {}
    rows, groups = [], []
    for r in range(enc.rows):
        a = int(age.values[age.codes[r]])
        if a > 85:
            continue  # suppressed
        rows.append(r)
        groups.append(
            labels.setdefault(
                (f"{a // 10 * 10}-{a // 10 * 10 + 9}", edu.values[edu.codes[r]]), len(labels)
            )
        )
    kept = np.asarray(rows, np.int64)
    rec = Recoding(
        ("age", "education"), tuple(labels), kept, np.asarray(groups, np.int64), hist.counts[kept]
    )
    target = tmp_path / "out.parquet"
    assert DUCK.write_release(ADULT, hist, rec, target) == rec.records < 30162
    want = published_by_definition(hist, rec)
    assert read_back(target, rec, "occupation") == want
    assert applied_in_process(ADULT, hist, rec, None) == want


def test_write_release_bad_input(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    write(path, [("a", 1, "x"), ("a", 1, "x"), ("b", 2, "y")])
    hist = DUCK.histogram(path, ["q", "n"], "s")
    one = np.zeros(1, np.int64)
    too_many = Recoding(("q",), (("*",),), one, one, np.asarray([3]))
    with pytest.raises(InputError, match="more records of a tuple than it has"):
        DUCK.write_release(path, hist, too_many, tmp_path / "o.parquet")
    ok = Recoding(("q",), (("*",),), one, one, np.asarray([2]))
    with pytest.raises(InputError, match="output_format must be one of parquet, csv"):
        DUCK.write_release(path, hist, ok, tmp_path / "o.parquet", output_format="json")
    assert not (tmp_path / "o.parquet").exists()
    # a target with quotes and glob characters is written exactly there
    odd = tmp_path / "it's [a]*.parquet"
    assert DUCK.write_release(path, hist, ok, odd) == 2
    assert read_release(odd, fmt="parquet").num_rows == 2


def test_lattice_from_duckdb_histogram(tmp_path: Path) -> None:
    """The lattice search from DuckDB's histogram picks the in-process node, and DuckDB's
    written release has the in-process release's per-group counts (needs the weighted
    lattice, ``anonymize_histogram``; skipped until it exists)."""
    from airflow_privacy.core import anonymize as anonymizers
    from airflow_privacy.core.datasets import adult_hierarchies

    search = getattr(anonymizers, "anonymize_histogram", None)
    if search is None:
        pytest.skip("airflow_privacy.core.anonymize.anonymize_histogram does not exist yet")
    qis = ["age", "sex", "race", "education"]
    hierarchies = {q: h for q, h in adult_hierarchies().items() if q in qis}
    criteria: list[tuple[str, dict[str, Any]]] = [("distinct-l-diversity", {"l": 3})]
    hist = DUCK.histogram(ADULT, qis, "occupation")
    ours = search(hist, "lattice", criteria, hierarchies)
    table = read_release(ADULT, [*qis, "occupation"])
    theirs = anonymizers.anonymize(table, qis, "occupation", "lattice", criteria, hierarchies)
    assert (
        ours.manifest.to_dict()["details"]["levels"]
        == theirs.manifest.to_dict()["details"]["levels"]
    )
    assert ours.recoding is not None
    target = tmp_path / "release.parquet"
    DUCK.write_release(ADULT, hist, ours.recoding, target)
    written = read_back(target, ours.recoding, "occupation")
    rel = theirs.release
    cols = [
        rel.column(c).cast(pa.string()).to_pylist() for c in [*ours.recoding.columns, "occupation"]
    ]
    assert written == Counter(zip(*cols, strict=True))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 9), st.integers(20, 30), st.sampled_from("pqrst")),
        min_size=8,
        max_size=60,
    ),
    method=st.sampled_from(["mondrian", "bucketize"]),
    fmt=st.sampled_from(["csv", "parquet"]),
)
def test_histogram_methods_parity(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[int, int, str]],
    method: str,
    fmt: str,
) -> None:
    """Mondrian and bucketization decided from DuckDB's histogram and written by DuckDB
    give the in-process decision: the same per-group counts and the same published
    records (bucketize splits a tuple's records over buckets: the numbered write-back).
    Needs ``anonymize_histogram``; skipped until it exists."""
    from airflow_privacy.core import anonymize as anonymizers

    search = getattr(anonymizers, "anonymize_histogram", None)
    if search is None:
        pytest.skip("airflow_privacy.core.anonymize.anonymize_histogram does not exist yet")
    folder = tmp_path_factory.mktemp("m")
    path = folder / f"r.{fmt}"
    if fmt == "csv":
        write_csv(path, ["a", "b", "s"], rows)
    else:
        pq.write_table(pa.table({k: [r[i] for r in rows] for i, k in enumerate("abs")}), path)
    criteria: list[tuple[str, dict[str, Any]]] = (
        [("k-anonymity", {"k": 3})]
        if method == "mondrian"
        else [("distinct-l-diversity", {"l": 2})]
    )
    table = read_release(path, ["a", "b", "s"])
    try:
        theirs = anonymizers.anonymize(table, ["a", "b"], "s", method, criteria)  # type: ignore[arg-type]
    except InputError as exc:
        with pytest.raises(InputError) as got:
            search(DUCK.histogram(path, ["a", "b"], "s"), method, criteria)
        assert str(got.value) == str(exc)
        return
    hist = DUCK.histogram(path, ["a", "b"], "s")
    ours = search(hist, method, criteria)
    assert ours.recoding is not None
    mine, other = ours.bucketization.normalized(), theirs.bucketization.normalized()
    assert (mine.groups, mine.values) == (other.groups, other.values)
    assert mine.counts.tolist() == other.counts.tolist()
    target = folder / "release.parquet"
    assert DUCK.write_release(path, hist, ours.recoding, target) == len(theirs.release)
    rel = theirs.release
    names = [*ours.recoding.columns, "s"]
    cols = [rel.column(c).cast(pa.string()).to_pylist() for c in names]
    assert read_back(target, ours.recoding, "s") == Counter(zip(*cols, strict=True))
