"""Top-(K+, K-) association rules (Du et al. 2008, section 4.4) against a brute force written
from the definitions: every conjunction of QI values over every subset of the QI columns,
every sensitive value, support and confidence counted record by record."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.maxent.rules import mine_rules
from airflow_privacy.errors import InputError

QIS = ("g", "d", "z")

Row = tuple[str, str, str, str]


def brute_force(
    rows: list[Row], k_pos: int, k_neg: int, min_support: int, widths: list[int] | None
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    values = sorted({r[3] for r in rows})
    found: dict[bool, list[tuple[tuple[object, ...], tuple[object, ...]]]] = {True: [], False: []}
    use = widths or [1, 2, 3]
    rank = 0
    for w in sorted(set(use)):
        for cols in itertools.combinations(range(3), w):
            rank += 1
            combos = sorted({tuple(r[c] for c in cols) for r in rows})
            for combo in combos:
                match = [r for r in rows if tuple(r[c] for c in cols) == combo]
                for s in values:
                    with_s = sum(1 for r in match if r[3] == s)
                    for positive in (True, False):
                        sup = with_s if positive else len(match) - with_s
                        if sup < min_support:
                            continue
                        conf = Fraction(sup, len(match))
                        key = (-conf, -sup, w, rank, combo, s)
                        given_ = tuple((QIS[c], v) for c, v in zip(cols, combo, strict=True))
                        found[positive].append((key, (given_, s, len(match), with_s)))
    pos = [r for _, r in sorted(found[True], key=lambda t: t[0])[:k_pos]]
    neg = [r for _, r in sorted(found[False], key=lambda t: t[0])[:k_neg]]
    return pos, neg


def _table(rows: list[Row]) -> pa.Table:
    return pa.table({c: [r[i] for r in rows] for i, c in enumerate((*QIS, "s"))})


rows_strategy = st.lists(
    st.tuples(
        st.sampled_from("mf"),
        st.sampled_from("abc"),
        st.sampled_from(["1", "2"]),
        st.sampled_from(["flu", "hiv", "tb"]),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(
    rows_strategy,
    st.integers(0, 12),
    st.integers(0, 12),
    st.integers(1, 4),
    st.one_of(st.none(), st.lists(st.integers(1, 3), min_size=1, max_size=3)),
)
def test_mined_rules_match_brute_force(
    rows: list[Row], k_pos: int, k_neg: int, min_support: int, widths: list[int] | None
) -> None:
    pos, neg = mine_rules(_table(rows), QIS, "s", k_pos, k_neg, min_support, widths)
    want_pos, want_neg = brute_force(rows, k_pos, k_neg, min_support, widths)
    got_pos = [(r.given, r.value, r.count_given, r.count_value) for r in pos]
    got_neg = [(r.given, r.value, r.count_given, r.count_value) for r in neg]
    assert got_pos == want_pos
    assert got_neg == want_neg
    for r in pos + neg:
        match = [x for x in rows if all(x[QIS.index(c)] == v for c, v in r.given)]
        with_s = sum(1 for x in match if x[3] == r.value)
        assert r.probability == pytest.approx(with_s / len(match), abs=0)
        fact = r.to_fact()
        assert fact.bound.low == fact.bound.high == r.probability
        assert r.confidence == (with_s if r.positive else len(match) - with_s) / len(match)


def test_negative_rules_include_values_never_seen_with_the_condition() -> None:
    """``Q => not s`` with confidence 1 (the paper's "men rarely have breast cancer")."""
    rows = [("m", "a", "1", "flu")] * 4 + [("f", "a", "1", "bc")] * 2
    _, neg = mine_rules(_table(rows), QIS, "s", 0, 1, 3, [1])
    assert [(r.given, r.value, r.confidence, r.support) for r in neg] == [
        ((("g", "m"),), "bc", 1.0, 4)
    ]
    assert neg[0].to_fact().bound.low == 0.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"min_support": 0}, "minimum support"),
        ({"widths": [4]}, "rule width 4"),
        ({"top_positive": -1}, "must be >= 0"),
    ],
)
def test_bad_mining_parameters(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "top_positive": 1,
        "top_negative": 1,
        "min_support": 1,
        "widths": None,
    }
    args.update(kwargs)
    with pytest.raises(InputError, match=message):
        mine_rules(_table([("m", "a", "1", "flu")]), QIS, "s", **args)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="column 'nope'"):
        mine_rules(_table([("m", "a", "1", "flu")]), ("g", "nope"), "s", 1, 1)
