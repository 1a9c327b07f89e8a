"""Benign values in the privacy skyline: the breach is the posterior of the target's own
value (Chen, LeFevre, Ramakrishnan 2007, "3D Knowledge Expression"), maximised over target
values that are not benign; the knowledge (excluded values, known people) may name benign
values. Checked against the possible-worlds enumerators of
tests/core/criteria/test_skyline_oracle.py with
the same restriction (exact fractions), and the consequences of the definition: no benign
value = the numbers without the option, every value benign = breach 0, monotone in the set.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria.skyline import check_skyline, max_breach, max_breaches
from tests.core.criteria.skyline_oracle import Rows, breach_by_groups, breach_table
from tests.core.criteria.skyline_strategies import (
    LABELS,
    assert_witness,
    medium_releases,
    release,
    small_releases,
)

BOUNDS = (2, 2, 2)


def benign_labels(benign: frozenset[int]) -> list[str]:
    return [LABELS[v] for v in benign]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_releases(), st.data())
def test_max_breach_equals_the_enumerator(rows: Rows, data: st.DataObject) -> None:
    benign = frozenset(data.draw(st.sets(st.integers(0, len(rows[0]) - 1))))
    _, table = breach_table(rows, BOUNDS, benign)
    b = release(rows).with_benign(benign_labels(benign))
    points = sorted(table) or [(0, 0, 0)]
    for point, res in zip(points, max_breaches(b, points), strict=True):
        want = table[point][0] if point in table else 0
        assert res.exact == want, (point, benign, res.witness)
        if want:
            assert LABELS.index(res.witness.value) not in benign
            assert_witness(rows, res)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(medium_releases(max_groups=5, max_values=4), st.data())
def test_against_the_per_group_enumerator(rows: Rows, data: st.DataObject) -> None:
    small = frozenset(data.draw(st.sets(st.integers(0, len(rows[0]) - 1))))
    large = small | frozenset(data.draw(st.sets(st.integers(0, len(rows[0]) - 1))))
    plain = release(rows)
    for point in [(1, 1, 1), (0, 2, 2), (2, 1, 2)]:
        value, _ = breach_by_groups(rows, point, small)
        res = max_breach(plain.with_benign(benign_labels(small)), *point)
        assert res.exact == value, (point, small, res.witness)
        # monotone: more benign values never raise the breach of the others
        more = max_breach(plain.with_benign(benign_labels(large)), *point)
        assert more.exact <= res.exact <= max_breach(plain, *point).exact
        # an unknown label changes nothing
        assert max_breach(plain.with_benign(["not-a-value"]), *point) == max_breach(plain, *point)


def test_every_value_benign_is_safe() -> None:
    b = release(((2, 1), (1, 1))).with_benign(LABELS[:2])
    r = check_skyline(b, ["2,2,2,0.01"])
    assert r.safe and r.value == 0.0
    assert r.parameters["benign"] == sorted(LABELS[:2])
    assert "benign" in r.reason
