"""El Emam's prosecutor, journalist and marketer risks (airflow_privacy.core.risk), checked
against an oracle written from the per-record definitions with exact rationals, by hand and
on Adult."""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.datasets import load_adult
from airflow_privacy.core.risk import (
    journalist_risk,
    marketer_risk,
    prosecutor_risk,
    reidentification_risk,
)
from airflow_privacy.errors import InputError

TOL = 1e-9


# ---------------------------------------------------------------- the oracle
def _records(sizes: list[int]) -> list[int]:
    """One entry per record: the index of its class."""
    return [j for j, f in enumerate(sizes) for _ in range(f)]


def oracle(
    sample: list[int], population: list[int] | None, tau: float | None
) -> dict[str, Fraction | int | None]:
    """The measures from their definitions, record by record, in exact rationals.

    A sample record of class j is re-identified with probability 1/f_j by a prosecutor and
    1/F_j by a journalist; a record is at risk when that probability is above tau (the decimal
    tau prints as). The journalist's average is ARX's larger of the population-side average
    (a population record of a matched class j is picked with probability 1/F_j, averaged over
    the population records of the matched classes) and the marketer rate (the mean over
    sample records of 1/F_j).
    """
    pop = sample if population is None else population
    recs = _records(sample)
    n = len(recs)
    limit = None if tau is None else Fraction(repr(tau))
    p_risk = [Fraction(1, sample[j]) for j in recs]
    j_risk = [Fraction(1, pop[j]) for j in recs]
    pop_recs = _records(pop)
    pop_side = sum((Fraction(1, pop[j]) for j in pop_recs), Fraction(0)) / len(pop_recs)
    marketer = sum(j_risk, Fraction(0)) / n
    out: dict[str, Fraction | int | None] = {
        "p_highest": max(p_risk),
        "p_average": sum(p_risk, Fraction(0)) / n,
        "j_highest": max(j_risk),
        "j_average": max(pop_side, marketer),
        "marketer": marketer,
        "p_at_risk": None,
        "j_at_risk": None,
    }
    if limit is not None:
        out["p_at_risk"] = sum(1 for r in p_risk if r > limit)
        out["j_at_risk"] = sum(1 for r in j_risk if r > limit)
    return out


def _close(a: float | None, b: Fraction | int | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - float(b)) <= TOL


def _check(sample: list[int], population: list[int] | None, tau: float | None) -> None:
    want = oracle(sample, population, tau)
    got = reidentification_risk(sample, population, tau)
    n = sum(sample)
    p, j, m = got.prosecutor, got.journalist, got.marketer
    assert p.n_records == j.n_records == m.n_records == n
    assert _close(p.highest_risk, want["p_highest"])
    assert _close(p.average_risk, want["p_average"])
    assert p.success_rate == p.average_risk
    assert _close(j.highest_risk, want["j_highest"])
    assert _close(j.average_risk, want["j_average"])
    assert _close(m.success_rate, want["marketer"])
    assert p.n_records_at_risk == want["p_at_risk"]
    assert j.n_records_at_risk == want["j_at_risk"]
    if tau is not None:
        assert p.records_at_risk is not None and j.records_at_risk is not None
        assert _close(p.records_at_risk, Fraction(p.n_records_at_risk or 0, n))
        assert _close(j.records_at_risk, Fraction(j.n_records_at_risk or 0, n))
    json.dumps(got.to_dict())


# ---------------------------------------------------------------- properties
TAUS = st.one_of(
    st.none(),
    st.sampled_from([1.0, 0.5, 0.2, 0.1, 0.05, 0.3, 1 / 3, 0.25]),
    st.floats(min_value=1e-6, max_value=1.0, allow_nan=False, exclude_min=False),
)


@st.composite
def sample_and_population(draw: st.DrawFn) -> tuple[list[int], list[int] | None, float | None]:
    sample = draw(st.lists(st.integers(1, 12), min_size=1, max_size=12))
    extra = draw(
        st.one_of(
            st.none(), st.lists(st.integers(0, 30), min_size=len(sample), max_size=len(sample))
        )
    )
    population = None if extra is None else [f + e for f, e in zip(sample, extra, strict=True)]
    return sample, population, draw(TAUS)


@settings(max_examples=300, deadline=None)
@given(sample_and_population())
def test_engine_matches_oracle(case: tuple[list[int], list[int] | None, float | None]) -> None:
    _check(*case)


@settings(max_examples=200, deadline=None)
@given(sample_and_population())
def test_orderings(case: tuple[list[int], list[int] | None, float | None]) -> None:
    sample, population, tau = case
    r = reidentification_risk(sample, population, tau)
    # a larger population can only lower the journalist's and marketer's risks
    assert r.journalist.highest_risk <= r.prosecutor.highest_risk + TOL
    assert r.marketer.success_rate <= r.prosecutor.average_risk + TOL
    assert r.marketer.success_rate <= r.journalist.average_risk + TOL
    assert r.prosecutor.average_risk <= r.prosecutor.highest_risk + TOL
    if tau is not None:
        assert (r.journalist.n_records_at_risk or 0) <= (r.prosecutor.n_records_at_risk or 0)
    if population is None:
        assert r.journalist.highest_risk == r.prosecutor.highest_risk
        assert r.journalist.average_risk == r.prosecutor.average_risk
        assert r.marketer.success_rate == r.prosecutor.average_risk


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 20), min_size=1, max_size=15))
def test_order_of_classes_does_not_matter(sample: list[int]) -> None:
    a = reidentification_risk(sample, [2 * f for f in sample], 0.2).to_dict()
    b = reidentification_risk(sample[::-1], [2 * f for f in sample[::-1]], 0.2).to_dict()
    assert a == b


# ---------------------------------------------------------------- by hand
def test_hand_example_prosecutor() -> None:
    # classes 1, 2, 3, 4 (n = 10, J = 4), tau = 0.3: 1, 1/2 and 1/3 exceed 0.3, 1/4 does not
    r = prosecutor_risk([1, 2, 3, 4], threshold=0.3)
    assert r.n_records_at_risk == 6 and r.records_at_risk == pytest.approx(0.6, abs=TOL)
    assert r.highest_risk == 1.0
    assert r.average_risk == pytest.approx(0.4, abs=TOL)


def test_hand_example_journalist_and_marketer() -> None:
    # F = 2, 2, 6, 8 (sum 18): at risk 1/2 > 0.3 for the first two classes (1 + 2 records);
    # rC1 = 4/18, rC2 = (1/2 + 2/2 + 3/6 + 4/8) / 10 = 1/4; average = max = 1/4
    r = journalist_risk([1, 2, 3, 4], [2, 2, 6, 8], threshold=0.3)
    assert r.n_records_at_risk == 3 and r.records_at_risk == pytest.approx(0.3, abs=TOL)
    assert r.highest_risk == 0.5
    assert r.n_population_records == 18
    assert r.average_risk == pytest.approx(0.25, abs=TOL)
    assert marketer_risk([1, 2, 3, 4], [2, 2, 6, 8]).success_rate == pytest.approx(0.25)


def test_journalist_average_is_the_larger_of_arx_two_averages() -> None:
    # f = (1, 10), F = (2, 11): rC1 = J / sum F = 2/13 = 0.1538...,
    # rC2 = (1/2 + 10/11) / 11 = 31/242 = 0.1281...; ARX reports max(rC1, rC2) = 2/13
    r = journalist_risk([1, 10], [2, 11])
    assert r.average_risk == pytest.approx(2 / 13, abs=TOL)
    assert marketer_risk([1, 10], [2, 11]).success_rate == pytest.approx(31 / 242, abs=TOL)
    # f = (5, 1), F = (5, 100): rC1 = 2/105, rC2 = (1 + 1/100) / 6 is the larger
    r = journalist_risk([5, 1], [5, 100])
    assert r.average_risk == pytest.approx((1 + 1 / 100) / 6, abs=TOL)


def test_threshold_equal_to_a_class_risk_is_not_at_risk() -> None:
    # ARX: 1d / groupSize > threshold, strict
    assert prosecutor_risk([5, 5], threshold=0.2).n_records_at_risk == 0
    assert prosecutor_risk([4, 5], threshold=0.2).n_records_at_risk == 4
    assert prosecutor_risk([10], threshold=0.1).n_records_at_risk == 0
    assert journalist_risk([1], [10], threshold=0.1).n_records_at_risk == 0
    assert prosecutor_risk([1], threshold=1.0).n_records_at_risk == 0


def test_threshold_read_as_its_decimal() -> None:
    # 0.3333333333333333 (the float nearest 1/3) is a decimal below 1/3: a class of 3 is at
    # risk (ARX, comparing doubles, would count it as exactly at the threshold)
    assert prosecutor_risk([3], threshold=1 / 3).n_records_at_risk == 3


def test_numpy_sizes_and_bucketization_sizes() -> None:
    from airflow_privacy.core.model import Bucketization

    b = Bucketization(
        group_columns=("q",),
        sensitive="s",
        groups=(("a",), ("b",)),
        values=("x", "y"),
        counts=np.array([[1, 1], [3, 0]]),
    )
    r = prosecutor_risk(b.sizes, threshold=0.4)
    assert r.n_records == 5 and r.n_classes == 2 and r.n_records_at_risk == 2


def test_to_dict_is_json() -> None:
    d = reidentification_risk([1, 3], [2, 9], 0.5).to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["prosecutor"]["model"] == "prosecutor"
    assert d["marketer"]["success_rate"] == pytest.approx((1 / 2 + 3 / 9) / 4)
    assert d["population_given"] is True


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"class_sizes": []}, "class-sizes"),
        ({"class_sizes": [1, 0]}, "class-sizes"),
        ({"class_sizes": [1, -2]}, "class-sizes"),
        ({"class_sizes": [1.5]}, "class-sizes"),
        ({"class_sizes": [True]}, "class-sizes"),
        ({"class_sizes": "12"}, "class-sizes"),
        ({"class_sizes": 3}, "class-sizes"),
        ({"class_sizes": [1], "threshold": 0.0}, "threshold"),
        ({"class_sizes": [1], "threshold": 1.5}, "threshold"),
        ({"class_sizes": [1], "threshold": -0.1}, "threshold"),
        ({"class_sizes": [1], "threshold": float("nan")}, "threshold"),
        ({"class_sizes": [1], "threshold": "0.1"}, "threshold"),
        ({"class_sizes": [1], "threshold": True}, "threshold"),
        ({"class_sizes": [2], "population_sizes": [1]}, "population-sizes"),
        ({"class_sizes": [2], "population_sizes": [2, 3]}, "population-sizes"),
        ({"class_sizes": [2], "population_sizes": [0]}, "population-sizes"),
        ({"class_sizes": [2], "population_sizes": []}, "population-sizes"),
    ],
)
def test_bad_input(kwargs: dict[str, Any], name: str) -> None:
    with pytest.raises(InputError, match=name) as err:
        reidentification_risk(**kwargs)
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------- Adult
ADULT_QIS = ["sex", "age", "race"]


def _class_sizes(table: pa.Table, qis: list[str]) -> pa.Table:
    return table.group_by(qis).aggregate([([], "count_all")])


def test_adult_matches_oracle() -> None:
    adult = load_adult()
    assert adult.num_rows > 30000
    # the population: all of Adult; the sample: every third record
    sample_table = adult.take(pa.array(np.arange(0, adult.num_rows, 3)))
    pop = _class_sizes(adult, ADULT_QIS).rename_columns([*ADULT_QIS, "F"])
    smp = _class_sizes(sample_table, ADULT_QIS).rename_columns([*ADULT_QIS, "f"])
    joined = smp.join(pop, keys=ADULT_QIS, join_type="left outer").sort_by(
        [(q, "ascending") for q in ADULT_QIS]
    )
    f = [int(x) for x in joined.column("f").to_pylist()]
    big_f = [int(x) for x in joined.column("F").to_pylist()]
    assert sum(f) == sample_table.num_rows and all(a <= b for a, b in zip(f, big_f, strict=True))
    assert min(f) == 1  # Adult by sex, age, race has unique records
    for tau in (None, 0.2, 0.05):
        _check(f, big_f, tau)
        _check(f, None, tau)
    r = reidentification_risk(f, big_f, 0.2)
    assert r.prosecutor.highest_risk == 1.0
    assert r.journalist.highest_risk < 1.0 or 1 in big_f
