"""Anonymizers decide from the histogram of distinct (QI..., sensitive) tuples.

``anonymize(table)`` (histogram in process, decision, recoding applied with Arrow) and
``anonymize_histogram(histogram of the table)`` (what every push-down backend calls) must
give the same decision: same chosen node, buckets, criteria results and manifest, and the
applied release's per-group counts must be the histogram result's bucketization. The
histograms here are counted in the test (``collections.Counter`` over the rows) and listed
in a shuffled order, as a backend may list its groups in any order; the applied release is
checked against a per-row application written here from the definitions.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.algorithm_aware import anonymize as aware_anonymize
from airflow_privacy.core.algorithm_aware import anonymize_histogram as aware_anonymize_histogram
from airflow_privacy.core.algorithm_aware.lattice_mode import safe_lattice_choice
from airflow_privacy.core.anonymize import (
    AnonymizationResult,
    anonymize,
    anonymize_histogram,
)
from airflow_privacy.core.anonymize.apply import apply_recoding, record_groups
from airflow_privacy.core.anonymize.plan import Recoding, TableHistogram
from airflow_privacy.core.backends.histogram import Histogram
from airflow_privacy.core.datasets import adult_hierarchies, load_adult
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import CRITERIA_LISTS, Criteria, Problem, problems


def counted_histogram(table: pa.Table, qis: list[str], sensitive: str, seed: int) -> Histogram:
    """The histogram of ``table`` counted row by row, its groups in a shuffled order."""
    names = [*qis, sensitive]
    rows = table.select(names).to_pylist()
    counter = Counter(tuple(r[c] for c in names) for r in rows)
    keys = list(counter)
    random.Random(seed).shuffle(keys)
    cols = {c: pa.array([k[i] for k in keys], type=table.schema.field(c).type)
            for i, c in enumerate(names)}  # fmt: skip
    dropped = tuple(c for c in table.column_names if c not in names)
    counts = np.asarray([counter[k] for k in keys], dtype=np.int64)
    return Histogram(tuple(qis), sensitive, pa.table(cols), counts, dropped)


def _strip_times(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_times(v) for k, v in value.items() if k != "elapsed_seconds"}
    if isinstance(value, list):
        return [_strip_times(v) for v in value]
    return value


def _same_bucketization(a: Bucketization, b: Bucketization) -> None:
    assert a.group_columns == b.group_columns
    assert a.groups == b.groups
    assert a.values == b.values
    assert np.array_equal(a.counts, b.counts)


def _written(result: AnonymizationResult, sensitive: str) -> Bucketization:
    spec = ReleaseSpec(sensitive=sensitive, group_columns=result.group_columns)
    return Bucketization.from_arrow(result.release, spec).normalized()


def assert_parity(
    table: pa.Table,
    qis: list[str],
    sensitive: str,
    method: str,
    criteria: Criteria,
    hierarchies: Any,
    seed: int,
    shuffle: int = 0,
    **options: Any,
) -> tuple[AnonymizationResult, AnonymizationResult, Histogram] | None:
    """Both paths decide the same, or refuse with the same message."""
    hist = counted_histogram(table, qis, sensitive, shuffle)
    try:
        a = anonymize(table, qis, sensitive, method, criteria, hierarchies, seed, **options)  # type: ignore[arg-type]
    except InputError as exc:
        with pytest.raises(InputError) as caught:
            anonymize_histogram(hist, method, criteria, hierarchies, seed, **options)  # type: ignore[arg-type]
        assert str(caught.value) == str(exc)
        return None
    b = anonymize_histogram(hist, method, criteria, hierarchies, seed, **options)  # type: ignore[arg-type]
    assert _strip_times(a.manifest.to_dict()) == _strip_times(b.manifest.to_dict())
    assert a.group_columns == b.group_columns
    _same_bucketization(a.bucketization, b.bucketization)
    _same_bucketization(_written(a, sensitive), b.bucketization)
    assert a.release.schema == b.release.schema and b.release.num_rows == 0
    assert b.recoding is not None and a.recoding is not None
    assert b.recoding.records == a.release.num_rows == a.manifest.records_out
    # the histogram path's recoding numbers the backend's own rows: applied to the table
    # (rows found by a join on the values) it gives the same release, row for row
    release, rows = apply_recoding(
        table, hist, b.recoding, seed, within_groups=method == "bucketize",
        column_types={c: a.release.schema.field(c).type for c in b.recoding.columns},
    )  # fmt: skip
    assert release.equals(a.release)
    assert np.array_equal(rows, a.source_rows)
    # the table path's recoding numbers the table's own rows, one entry per published record
    assert a.recoding.one_group_per_row and set(a.recoding.count.tolist()) <= {1}
    again, rows = apply_recoding(
        table, hist, a.recoding, seed, row_of=np.arange(table.num_rows, dtype=np.int64),
        within_groups=method == "bucketize",
        column_types={c: a.release.schema.field(c).type for c in a.recoding.columns},
    )  # fmt: skip
    assert again.equals(a.release) and np.array_equal(rows, a.source_rows)
    return a, b, hist


def _check_lattice_rows(p: Problem, result: AnonymizationResult, seed: int) -> None:
    """The release is each kept input row with every QI replaced by its label at the
    published level (dict lookup), whole groups suppressed, rows in the seeded order."""
    levels = result.manifest.details["levels"]
    label = {q: p.levels_of(q)[levels[q]] for q in p.qis}
    key_of = [tuple(label[q][r[q]] for q in p.qis) for r in p.rows]
    published = {tuple(k) for k in result.bucketization.groups}
    kept = [i for i, k in enumerate(key_of) if k in published]
    expected_order = np.random.default_rng(seed).permutation(np.asarray(kept, dtype=np.int64))
    assert result.source_rows.tolist() == expected_order.tolist()
    expected = [{**dict(zip(p.qis, key_of[i], strict=True)), "s": p.rows[i]["s"]}
                for i in expected_order.tolist()]  # fmt: skip
    assert result.release.to_pylist() == expected


def _check_bucket_rows(
    p: Problem, result: AnonymizationResult, decided: AnonymizationResult, hist: Histogram
) -> None:
    """QIs exact, each bucket's sensitive multiset its members', and the recoding's counts
    are the number of records of each tuple in each bucket."""
    rel = result.release.to_pylist()
    col = result.group_columns[0]
    members: dict[int, list[int]] = {}
    for row, src in zip(rel, result.source_rows.tolist(), strict=True):
        assert all(row[q] == p.rows[src][q] for q in p.qis)
        members.setdefault(row[col], []).append(src)
    assert sorted(result.source_rows.tolist()) == list(range(len(p.rows)))
    for bucket, srcs in members.items():
        got = Counter(r["s"] for r in rel if r[col] == bucket)
        assert got == Counter(p.rows[i]["s"] for i in srcs)
    names = [*p.qis, "s"]
    index = {tuple(k[c] for c in names): i for i, k in enumerate(hist.keys.to_pylist())}
    placed: Counter[tuple[int, int]] = Counter()
    for bucket, srcs in members.items():
        for i in srcs:
            placed[(index[tuple(p.rows[i][c] for c in names)], bucket)] += 1
    assert decided.recoding is not None
    rec = decided.recoding  # the histogram path's: it numbers ``hist``'s rows
    listed = Counter({(int(r), int(rec.labels[int(g)][0])): int(c)
                      for r, g, c in zip(rec.row, rec.group, rec.count, strict=True)})  # fmt: skip
    assert placed == listed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_rows=24), criteria=CRITERIA_LISTS,
       fraction=st.sampled_from([0.0, 0.2]), seed=st.integers(0, 3),
       shuffle=st.integers(0, 5))  # fmt: skip
def test_lattice_from_the_table_and_from_its_histogram_decide_the_same(
    p: Problem, criteria: Criteria, fraction: float, seed: int, shuffle: int
) -> None:
    out = assert_parity(p.table, p.qis, "s", "lattice", criteria, p.hierarchies, seed, shuffle,
                        suppression_limit=fraction)  # fmt: skip
    if out is not None:
        _check_lattice_rows(p, out[0], seed)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_rows=24), criteria=CRITERIA_LISTS, seed=st.integers(0, 3),
       shuffle=st.integers(0, 5))  # fmt: skip
def test_bucketize_from_the_table_and_from_its_histogram_decide_the_same(
    p: Problem, criteria: Criteria, seed: int, shuffle: int
) -> None:
    out = assert_parity(p.table, p.qis, "s", "bucketize", criteria, p.hierarchies, seed, shuffle)
    if out is None:
        return
    a, b, hist = out
    _check_bucket_rows(p, a, b, hist)
    # the ST table is built from the plan alone, the QIT from the applied release
    assert b.tables["st"].equals(a.tables["st"])
    assert a.tables["qit"].equals(a.release.drop_columns(["s"]))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_rows=24), criteria=CRITERIA_LISTS, seed=st.integers(0, 3),
       shuffle=st.integers(0, 5))  # fmt: skip
def test_mondrian_from_the_table_and_from_its_histogram_decide_the_same(
    p: Problem, criteria: Criteria, seed: int, shuffle: int
) -> None:
    assert_parity(p.table, p.qis, "s", "mondrian", criteria, p.hierarchies, seed, shuffle)


def test_histogram_rows_in_any_order_give_one_decision() -> None:
    """A backend may list its groups in any order: the decision is the same (rows are put
    in the order of their text first)."""
    rows = [("a", "1", "x"), ("a", "1", "y"), ("b", "2", "x"), ("b", "1", "y"), ("a", "2", "x")]
    table = pa.table({c: [r[i] for r in rows * 3] for i, c in enumerate(["q0", "q1", "s"])})
    crit: Criteria = [("k-anonymity", {"k": 3}), ("distinct-l-diversity", {"l": 2})]
    seen = set()
    for shuffle in range(6):
        hist = counted_histogram(table, ["q0", "q1"], "s", shuffle)
        r = anonymize_histogram(hist, "lattice", crit)
        seen.add(repr(_strip_times(r.manifest.to_dict())))
    assert len(seen) == 1


def test_the_adult_sample_decides_the_same_from_its_histogram() -> None:
    t = load_adult().slice(0, 3000)
    h = adult_hierarchies()
    qis = ["age", "sex", "race", "marital-status"]
    hq = {q: h[q] for q in qis}
    crit: Criteria = [("k-anonymity", {"k": 5}), ("distinct-l-diversity", {"l": 2})]
    out = assert_parity(t, qis, "salary-class", "lattice", crit, hq, 3, 1, suppression_limit=0.02)
    assert out is not None
    a, b, hist = out
    assert hist.keys.num_rows < t.num_rows
    assert a.manifest.records_in == t.num_rows == b.manifest.records_in
    out = assert_parity(t, ["age", "sex", "race"], "occupation", "bucketize",
                        [("distinct-l-diversity", {"l": 3})], {"age": h["age"]}, 1, 2)  # fmt: skip
    assert out is not None


def test_the_safe_mode_decides_the_same_from_a_histogram() -> None:
    """The algorithm-aware safe mode expands a histogram's rows to records: same node."""
    rows = [("1", "x"), ("1", "y"), ("2", "x"), ("2", "x"), ("3", "y"), ("3", "z")]
    table = pa.table({"q": [r[0] for r in rows], "s": [r[1] for r in rows]})
    crit: Criteria = [("distinct-l-diversity", {"l": 2})]
    a = aware_anonymize(table, ["q"], "s", "lattice", crit, disclosure="safe")
    hist = counted_histogram(table, ["q"], "s", 4)
    b = anonymize_histogram(hist, "lattice", crit, chooser=safe_lattice_choice, disclosure="safe")
    assert _strip_times(a.manifest.to_dict()) == _strip_times(b.manifest.to_dict())
    c = aware_anonymize_histogram(hist, "lattice", crit, disclosure="safe")
    assert _strip_times(c.manifest.to_dict()) == _strip_times(b.manifest.to_dict())
    assert "disclosure" in a.manifest.details


def test_a_population_table_gives_the_same_decision() -> None:
    rows = [("a", "1", "x"), ("a", "2", "y"), ("b", "1", "x"), ("b", "2", "y")] * 2
    table = pa.table({c: [r[i] for r in rows] for i, c in enumerate(["q0", "q1", "s"])})
    population = pa.table({"q0": ["a", "b", "a", "b"] * 4, "q1": ["1", "1", "2", "2"] * 4})
    crit: Criteria = [("k-map", {"k": 6})]
    out = assert_parity(table, ["q0", "q1"], "s", "lattice", crit, None, 0, 3,
                        population=population)  # fmt: skip
    assert out is not None
    assert out[0].bucketization.population is not None
    # the population given by its counts (a GROUP BY of its QI columns) decides the same
    pop_counts = Counter(zip(population.column("q0").to_pylist(),
                             population.column("q1").to_pylist(), strict=True))  # fmt: skip
    keys = list(pop_counts)
    given = TableHistogram(
        ("q0", "q1"), "", pa.table({"q0": [k[0] for k in keys], "q1": [k[1] for k in keys]}),
        np.asarray([pop_counts[k] for k in keys], dtype=np.int64),
    )  # fmt: skip
    hist = counted_histogram(table, ["q0", "q1"], "s", 1)
    b = anonymize_histogram(hist, "lattice", crit, population=given)
    assert _strip_times(b.manifest.to_dict()) == _strip_times(out[0].manifest.to_dict())
    assert b.manifest.parameters["population_records"] == population.num_rows
    _same_bucketization(b.bucketization, out[0].bucketization)
    assert b.bucketization.population_rest == out[0].bucketization.population_rest
    with pytest.raises(InputError, match="population must be a pyarrow Table or its counts"):
        anonymize_histogram(hist, "lattice", crit, population="p")


def test_records_of_a_split_tuple_fill_its_entries_in_order() -> None:
    """``record_groups`` against a loop over the records, from the Recoding's definition."""
    rec = Recoding(
        ("bucket",), (("1",), ("2",), ("3",)),
        row=np.array([0, 0, 2, 3], dtype=np.int64),
        group=np.array([2, 0, 1, 0], dtype=np.int64),
        count=np.array([2, 1, 1, 2], dtype=np.int64),
    )  # fmt: skip
    row_of = np.array([3, 0, 2, 0, 1, 0, 0, 2, 3], dtype=np.int64)
    expected = []
    used: Counter[int] = Counter()
    for h in row_of.tolist():
        k = used[h]
        used[h] += 1
        group = -1
        for r, g, c in zip(rec.row.tolist(), rec.group.tolist(), rec.count.tolist(), strict=True):
            if r != h:
                continue
            if k < c:
                group = g
                break
            k -= c
        expected.append(group)
    assert record_groups(row_of, rec).tolist() == expected
    assert expected == [0, 2, 1, 2, -1, 0, -1, -1, 0]


def test_bad_histograms_are_refused() -> None:
    with pytest.raises(InputError, match="expected a Histogram"):
        anonymize_histogram("t", "lattice", [("k-anonymity", {"k": 2})])  # type: ignore[arg-type]
    keys = pa.table({"q": ["a", None], "s": ["x", "y"]})
    hist = Histogram(("q",), "s", keys, np.array([2, 3], dtype=np.int64))
    with pytest.raises(InputError, match="column 'q' has 1 missing value"):
        anonymize_histogram(hist, "lattice", [("k-anonymity", {"k": 2})])
    with pytest.raises(InputError, match="unknown method"):
        anonymize_histogram(hist, "nope", [("k-anonymity", {"k": 2})])  # type: ignore[arg-type]


def test_a_tuple_listed_twice_is_refused() -> None:
    """Two histogram rows with the same values (as text) would be decided as one tuple."""
    keys = pa.table({"q": ["a", "a", "b"], "s": ["x", "x", "y"]})
    hist = Histogram(("q",), "s", keys, np.array([2, 1, 3], dtype=np.int64))
    with pytest.raises(RuntimeError, match=r"lists one .* tuple twice"):
        anonymize_histogram(hist, "lattice", [("k-anonymity", {"k": 2})])
