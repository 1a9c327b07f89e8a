"""SUDA2 (airflow_privacy.core.risk.suda) against an independent brute force: every attribute
subset of every record is counted with a dict, the minimal ones kept, and the scores of
sdcMicro's suda2 recomputed from those MSUs with exact fractions (docs/suda.md)."""

from __future__ import annotations

import json
import math
from collections import Counter
from fractions import Fraction
from itertools import combinations
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.risk.suda import suda2, suda_weight
from airflow_privacy.errors import InputError

Row = tuple[object, ...]


def brute_msus(rows: list[Row], k_max: int) -> dict[int, set[tuple[int, ...]]]:
    m = len(rows[0])
    unique: dict[int, set[tuple[int, ...]]] = {i: set() for i in range(len(rows))}
    for size in range(1, m + 1):
        for subset in combinations(range(m), size):
            counts = Counter(tuple(row[a] for a in subset) for row in rows)
            for i, row in enumerate(rows):
                if counts[tuple(row[a] for a in subset)] == 1:
                    unique[i].add(subset)
    out: dict[int, set[tuple[int, ...]]] = {}
    for i, subsets in unique.items():
        minimal = {
            s
            for s in subsets
            if len(s) <= k_max
            and not any(set(t) < set(s) for t in subsets)  # no unique proper subset
        }
        if minimal:
            out[i] = minimal
    return out


def brute_weight(m: int, s: int, weighting: str) -> Fraction:
    if weighting == "elliot":
        return Fraction(math.factorial(m - s))
    return (
        Fraction(2 ** (m - s) - 1) * math.factorial(s) * math.factorial(m - s) / math.factorial(m)
    )


def brute_dis(rows: list[Row], scores: dict[int, Fraction], f: float) -> dict[int, float]:
    m = len(rows[0])
    counts = Counter(rows)
    u = sum(1 for c in counts.values() if c == 1)
    p = 2 * sum(1 for c in counts.values() if c == 2)
    if u == 0:
        return {i: 0.0 for i in scores}
    dis = u * f / (u * f + p * (1 - f))
    q = 1 + (8 - m) / 20
    adj = sum(float(s) ** -q for s in scores.values() if s)
    return {
        i: (1 / (1 + (u / dis - u) / (float(s) ** q * adj)) if s else 0.0)
        for i, s in scores.items()
    }


def tables(max_cols: int = 5, max_rows: int = 14) -> st.SearchStrategy[list[Row]]:
    return st.integers(1, max_cols).flatmap(
        lambda m: st.lists(
            st.tuples(*[st.integers(0, 2) for _ in range(m)]), min_size=1, max_size=max_rows
        )
    )


def check(rows: list[Row], k_max: int, weighting: str, f: float) -> None:
    m = len(rows[0])
    names = [f"q{j}" for j in range(m)]
    result = suda2(rows, names, k_max=k_max, weighting=weighting, dis_fraction=f)  # type: ignore[arg-type]
    expected = brute_msus(rows, k_max)
    got = {r.row: {tuple(names.index(a) for a in msu) for msu in r.msus} for r in result.records}
    assert got == expected
    scores = {
        i: sum((brute_weight(m, len(s), weighting) for s in ss), Fraction(0))
        for i, ss in expected.items()
    }
    assert {r.row: r.score for r in result.records} == scores
    dis = brute_dis(rows, scores, f)
    for r in result.records:
        assert r.dis_score == pytest.approx(dis[r.row], rel=1e-9, abs=1e-12)
        for j, a in enumerate(names):
            part = sum(
                (brute_weight(m, len(s), weighting) for s in expected[r.row] if j in s),
                Fraction(0),
            )
            assert r.contributions[a] == (part / scores[r.row] if scores[r.row] else 0)
    total = sum(scores.values(), Fraction(0))
    for j, a in enumerate(names):
        part = sum(
            (brute_weight(m, len(s), weighting) for ss in expected.values() for s in ss if j in s),
            Fraction(0),
        )
        want = float(100 * part / total) if total else 0.0
        assert result.attribute_contributions[a] == pytest.approx(want)
    assert sum(result.msu_count_by_size.values()) == sum(len(v) for v in expected.values())


@settings(max_examples=300, deadline=None)
@given(rows=tables(), weighting=st.sampled_from(["elliot", "ihsn"]), data=st.data())
def test_matches_brute_force(rows: list[Row], weighting: str, data: st.DataObject) -> None:
    k_max = data.draw(st.integers(1, len(rows[0])))
    f = data.draw(st.sampled_from([0.01, 0.1, 0.5, 1.0]))
    check(rows, k_max, weighting, f)


@settings(max_examples=60, deadline=None)
@given(rows=tables(max_cols=7, max_rows=40))
def test_matches_brute_force_wider(rows: list[Row]) -> None:
    check(rows, len(rows[0]), "elliot", 0.01)


def test_weights_are_sdcmicros() -> None:
    # original_scores=TRUE: (M - s)!; FALSE: (2^(M-s) - 1) s! (M-s)! / M!
    assert [suda_weight(4, s) for s in range(1, 5)] == [6, 2, 1, 1]
    assert [suda_weight(3, s, "ihsn") for s in range(1, 4)] == [
        Fraction(3 * 1 * 2, 6),
        Fraction(1 * 2 * 1, 6),
        Fraction(0),
    ]


HAND = [
    ("a", "x", 1),  # 0
    ("a", "x", 2),  # 1
    ("b", "x", 1),  # 2
    ("b", "y", 1),  # 3: unique on q1 alone
    ("c", "x", 2),  # 4: unique on q0 alone
    ("a", "x", 1),  # 5: duplicate of row 0
]


def test_hand_example() -> None:
    r = suda2(HAND, ["q0", "q1", "q2"])
    msus = {x.row: x.msus for x in r.records}
    assert msus == {
        1: (("q0", "q2"),),  # (a, 2): a, 2, (a, x) and (x, 2) are all shared
        2: (("q0", "q1"),),  # (b, x): (b, 1) is shared with row 3, (x, 1) with rows 0, 5
        3: (("q1",),),  # y
        4: (("q0",),),  # c
    }
    # M = 3: 1-MSU weighs 2! = 2, 2-MSU weighs 1! = 1
    assert {x.row: x.score for x in r.records} == {1: 1, 2: 1, 3: 2, 4: 2}
    assert r.records[0].contributions == {"q0": 1, "q1": 0, "q2": 1}
    assert r.sample_uniques == 4 and r.pair_records == 2
    assert r.msu_count_by_size == {1: 2, 2: 2}
    # 100 * (q0 in rows 1, 2, 4 = 1 + 1 + 2) / total 6
    assert r.attribute_contributions["q0"] == pytest.approx(100 * 4 / 6)
    assert r.score(0) == 0 and r.score(3) == 2


def test_k_max_bounds_the_msus() -> None:
    r = suda2(HAND, ["q0", "q1", "q2"], k_max=1)
    assert {x.row for x in r.records} == {3, 4}
    assert r.msu_count_by_size == {1: 2}


def test_pyarrow_table_same_as_rows_and_nulls_are_a_value() -> None:
    rows = [("a", 1, None), ("a", 2, None), ("b", 1, "z"), ("b", 1, None), ("a", 1, None)]
    table = pa.table(
        {
            "x": [r[0] for r in rows],
            "y": [r[1] for r in rows],
            "z": pa.array([r[2] for r in rows]).dictionary_encode(),
            "other": list(range(len(rows))),
        }
    )
    from_rows = suda2(rows, ["x", "y", "z"])
    from_table = suda2(table, ["x", "y", "z"])
    assert from_rows.to_dict() == from_table.to_dict()
    assert from_rows.records


def test_to_dict_holds_no_values() -> None:
    rows = [("SECRET-A", "v1"), ("SECRET-B", "v1"), ("SECRET-B", "v2")]
    d = suda2(rows, ["name", "kind"]).to_dict()
    text = json.dumps(d)
    assert "SECRET" not in text and "v1" not in text and "v2" not in text
    assert d["records"][0]["row"] == 0 and d["records"][0]["msus"] == [["name"]]


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"data": [], "qis": ["a"]}, "INPUT"),
        ({"data": pa.table({"a": pa.array([], pa.string())}), "qis": ["a"]}, "INPUT"),
        ({"data": [("x",)], "qis": ["a"], "k_max": 0}, "--k-max"),
        ({"data": [("x",)], "qis": ["a"], "k_max": 2}, "--k-max"),
        ({"data": [("x",)], "qis": ["a"], "k_max": True}, "--k-max"),
        ({"data": [("x",)], "qis": []}, "--qi"),
        ({"data": [("x",)], "qis": ["a", "a"]}, "--qi"),
        ({"data": [("x", "y")], "qis": ["a"]}, "--qi"),
        ({"data": pa.table({"a": ["x"]}), "qis": ["b"]}, "--qi"),
        ({"data": [("x",)], "qis": ["a"], "weighting": "w"}, "--weighting"),
        ({"data": [("x",)], "qis": ["a"], "dis_fraction": 0}, "--dis-fraction"),
        ({"data": [("x",)], "qis": ["a"], "dis_fraction": 1.5}, "--dis-fraction"),
    ],
)
def test_bad_input(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(InputError) as err:
        suda2(**kwargs)  # type: ignore[arg-type]
    message = str(err.value)
    assert needle in message and "\n" not in message


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 3)), min_size=1,
             max_size=25),
    st.lists(st.integers(1, 3), min_size=25, max_size=25),
)  # fmt: skip
def test_find_msus_on_counted_combinations_equals_the_rows(
    rows: list[tuple[int, int, int]], times: list[int]
) -> None:
    """The MSUs found on the distinct combinations with their counts are those found row by
    row on the expanded table (each combination written out as many times as it is held)."""
    import numpy as np

    from airflow_privacy.core.risk.suda import find_msus

    expanded = [r for r, t in zip(rows, times, strict=False) for _ in range(t)]
    codes = np.asarray(expanded, dtype=np.int64)
    by_rows = find_msus(codes, 3)
    distinct, first, counts = np.unique(codes, axis=0, return_index=True, return_counts=True)
    by_counts = {s: np.sort(first[r]).tolist() for s, r in find_msus(distinct, 3, counts).items()}
    assert by_counts == {s: r.tolist() for s, r in by_rows.items()}


def test_replicated_table_has_no_special_uniques() -> None:
    rows = [("a", "x", "1"), ("a", "y", "2"), ("b", "x", "2")]
    assert suda2(rows, ["p", "q", "r"]).records  # every record is unique somewhere
    assert not suda2(rows * 3, ["p", "q", "r"]).records


@settings(max_examples=100, deadline=None)
@given(rows=tables(max_cols=5, max_rows=30), weighting=st.sampled_from(["elliot", "ihsn"]))
def test_from_class_counts_against_brute_force(rows: list[Row], weighting: str) -> None:
    """suda2_counts (only the classes and their sizes, as a database's GROUP BY gives them)
    against the brute force on the rows: the same special uniques, scores, DIS and
    contributions, each reported under its class's number."""
    from airflow_privacy.core.risk.suda import suda2_counts

    m = len(rows[0])
    names = [f"q{j}" for j in range(m)]
    sizes = Counter(rows)
    classes = list(sizes)
    got = suda2_counts(classes, [sizes[c] for c in classes], names, weighting=weighting)  # type: ignore[arg-type]
    expected = brute_msus(rows, m)
    row_of_class = {c: rows.index(c) for c in classes}
    by_row = {row_of_class[classes[r.row]]: r for r in got.records}
    assert {
        i: {tuple(names.index(a) for a in msu) for msu in r.msus} for i, r in by_row.items()
    } == expected
    scores = {
        i: sum((brute_weight(m, len(s), weighting) for s in ss), Fraction(0))
        for i, ss in expected.items()
    }
    assert {i: r.score for i, r in by_row.items()} == scores
    dis = brute_dis(rows, scores, 0.01)
    for i, r in by_row.items():
        assert r.dis_score == pytest.approx(dis[i], rel=1e-9, abs=1e-12)
    assert got.n_records == len(rows)
    assert got.sample_uniques == sum(1 for c in classes if sizes[c] == 1)


def test_from_class_counts_refuses_bad_classes() -> None:
    from airflow_privacy.core.risk.suda import suda2_counts

    with pytest.raises(InputError, match="two classes"):
        suda2_counts([("a",), ("a",)], [1, 2], ["q"])
    with pytest.raises(InputError, match="at least 1"):
        suda2_counts([("a",)], [0], ["q"])


def test_the_search_is_bounded_and_names_what_shrinks_it() -> None:
    """Binary values over 16 QIs on 2,000 combinations (nothing becomes unique before
    subsets of about 11): the search stops at its step budget, names the largest MSU size
    that fits, and that size then finishes within the same budget."""
    import re

    from airflow_privacy.core.risk.suda import find_msus as search

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 2, size=(2000, 16)).astype(np.int64)
    with pytest.raises(InputError, match=r"more than 3,000,000 steps") as err:
        search(codes, 16, max_steps=3_000_000)
    size = int(re.search(r"suda-max-size (\d+) or less", str(err.value)).group(1))  # type: ignore[union-attr]
    search(codes, size, max_steps=3_000_000)  # completes
    assert size < 16


def test_the_risk_command_refuses_a_search_past_its_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the command line: exit 2, one line naming --suda-max-size, no output file
    (a budget of 10^6 steps here, to keep the test short)."""
    import io

    from airflow_privacy.core.risk import suda

    monkeypatch.setattr(suda, "MAX_STEPS", 1_000_000)
    import pyarrow.csv as pacsv

    from airflow_privacy.cli import main

    rng = np.random.default_rng(1)
    codes = rng.integers(0, 2, size=(2500, 18))
    path = tmp_path / "wide.csv"
    pacsv.write_csv(pa.table({f"q{i}": codes[:, i] for i in range(18)}), path)
    qis = [a for i in range(18) for a in ("--qi", f"q{i}")]
    out = tmp_path / "scores.csv"
    code = main(["risk", str(path), *qis, "--records", str(out), "--quiet"], io.StringIO())
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--suda-max-size" in err[0], err
    assert not out.exists()


@settings(max_examples=60, deadline=None)
@given(rows=tables(), weighting=st.sampled_from(["elliot", "ihsn"]))
def test_scores_added_in_pythons_integers_match_brute_force(
    rows: list[Row], weighting: str
) -> None:
    """The scores are added in int64 while their largest possible total fits, else in
    Python's integers: the second way (forced here) gives the same exact scores."""
    import airflow_privacy.core.risk.suda as suda_module

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(suda_module, "_INT64_TOTAL", 0)
        check(rows, len(rows[0]), weighting, 0.1)


@settings(max_examples=200, deadline=None)
@given(
    keys=st.one_of(
        st.lists(st.integers(0, 6), min_size=1, max_size=40),  # a small range: bincount
        st.lists(st.integers(0, 10**12), min_size=1, max_size=40),  # spread out: np.unique
    ),
)
def test_group_sizes_equal_the_definition(keys: list[int]) -> None:
    """``_group_sizes`` (by ``np.bincount`` over a small range of keys, by ``np.unique``
    otherwise) against a count by hand: group ids dense in the order of the keys, each
    group's size its number of rows."""
    from airflow_privacy.core.risk.suda import _group_sizes

    ids, sizes = _group_sizes(np.asarray(keys, dtype=np.int64))
    distinct = sorted(set(keys))
    assert ids.tolist() == [distinct.index(k) for k in keys]
    assert sizes.tolist() == [keys.count(d) for d in distinct]
