"""``core/counting.py`` against a plain count written from the definition: a multiset of
``str(value)`` tuples, one per row, listed in the order of their text. Covers the
mixed-radix key that would pass int64 (many high-cardinality columns), floats (-0.0 kept
apart from 0.0, NaNs as one value), small-range integers (whose codes do not follow their
text: 9 < 10 but "10" < "9") and dictionary columns."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from airflow_privacy.core.counting import count_groups, count_rows


def _label(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return str(value)


def _truth(table: pa.Table, columns: list[str]) -> Counter[tuple[str, ...]]:
    data = [table.column(c).to_pylist() for c in columns]
    return Counter(tuple(_label(col[r]) for col in data) for r in range(table.num_rows))


def _random_table(seed: int, n_cols: int, card: int, n_rows: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    cols: dict[str, Any] = {}
    for i in range(n_cols):
        kind = i % 5
        codes = rng.integers(0, card, n_rows)
        if kind == 0:
            cols[f"q{i}"] = pa.array(codes * 1_000_003)  # sparse integers: hashed, not offset
        elif kind == 1:
            cols[f"q{i}"] = pa.array([f"v{c}" for c in codes])
        elif kind == 2:
            values = np.where(codes % 5 == 0, -0.0, codes / 4.0)
            values = np.where(codes % 7 == 0, np.nan, values)
            cols[f"q{i}"] = pa.array(values)
        elif kind == 3:
            cols[f"q{i}"] = pa.array([f"d{c}" for c in codes]).dictionary_encode()
        else:
            cols[f"q{i}"] = pa.array(codes + 5)  # a small range: offset codes, 9 < 10
    cols["s"] = pa.array(rng.integers(-3, 13, n_rows))  # offset codes; "-1" < "-3" < "10"
    return pa.table(cols)


@pytest.mark.parametrize(
    ("n_cols", "card"),
    [(1, 5), (3, 40), (8, 300), (12, 100), (20, 1000)],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_groups_equals_the_definition(n_cols: int, card: int, seed: int) -> None:
    # 12 columns of 100 values need 10^24 keys: past int64, so the key is re-densified
    table = _random_table(seed, n_cols, card, 400)
    qis = [f"q{i}" for i in range(n_cols)]
    groups, labels, counts = count_groups(table, qis, "s")
    got = Counter(
        {
            (*g, lbl): int(counts[i, j])
            for i, g in enumerate(groups)
            for j, lbl in enumerate(labels)
            if counts[i, j]
        }
    )
    assert got == _truth(table, [*qis, "s"])
    assert len(set(groups)) == len(groups)
    assert all(counts.sum(axis=0) > 0)
    # in the order every backend normalizes to (Python's order of the label text)
    assert list(groups) == sorted(groups)
    assert list(labels) == sorted(labels)


@pytest.mark.parametrize(("n_cols", "card"), [(1, 3), (5, 50), (16, 1000)])
def test_count_rows_equals_the_definition(n_cols: int, card: int) -> None:
    table = _random_table(7, n_cols, card, 300)
    columns = [*(f"q{i}" for i in range(n_cols)), "s"]
    rows, counts = count_rows(table, columns)
    assert Counter(dict(zip(rows, counts.tolist(), strict=True))) == _truth(table, columns)
    assert len(set(rows)) == len(rows)


def test_count_rows_labels_as_count_groups() -> None:
    table = pa.table({"b": [1.0, 2.0, -0.0, 0.0, 1.0], "s": ["x", "y", "x", "x", "y"]})
    groups, _, _ = count_groups(table, ["b"], "s")
    rows, _ = count_rows(table, ["b"])
    assert sorted(groups) == sorted(rows) == [("-0.0",), ("0.0",), ("1.0",), ("2.0",)]
