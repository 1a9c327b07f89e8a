"""The anonymizers target the risk criteria (prosecutor-risk, k-map) and the pyCANON-parity
criteria ((alpha,k), beta-likeness, delta-disclosure): the lattice search finds exactly the
minimal passing nodes of an exhaustive evaluation, and every release written (lattice,
Mondrian) passes when re-checked, by the registry and by a computation from the definitions
on the rows of the release."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.criteria.k_map import derived_k
from airflow_privacy.core.criteria.registry import evaluate
from airflow_privacy.core.datasets import adult_hierarchies, load_adult
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import (
    Criteria,
    Problem,
    exhaustive_minimal,
    problems,
)

Method = Literal["lattice", "mondrian"]

NEW = st.one_of(
    st.builds(lambda h: ("prosecutor-risk", {"highest": h}), st.sampled_from([0.2, 0.34, 0.5])),
    st.builds(
        lambda h, r: ("prosecutor-risk", {"highest": h, "records": r}),
        st.sampled_from([0.2, 0.5]),
        st.sampled_from([0.1, 0.3]),
    ),
    st.builds(lambda a: ("prosecutor-risk", {"average": a}), st.sampled_from([0.2, 0.3, 0.5])),
    st.builds(
        lambda k, f: ("k-map", {"k": k, "sampling_fraction": f}),
        st.integers(2, 6),
        st.sampled_from([0.3, 0.7]),
    ),
    st.builds(
        lambda a, k: ("alpha-k-anonymity", {"alpha": a, "k": k}),
        st.sampled_from([0.5, 0.75, 1.0]),
        st.integers(1, 3),
    ),
    st.builds(lambda b: ("basic-beta-likeness", {"beta": b}), st.sampled_from([0.5, 1.0, 3.0])),
    st.builds(lambda b: ("enhanced-beta-likeness", {"beta": b}), st.sampled_from([0.5, 3.0])),
    st.builds(lambda d: ("delta-disclosure", {"delta": d}), st.sampled_from([0.5, 1.0, 2.0])),
)


def _minimal(result: Any) -> list[tuple[int, ...]]:
    return sorted(tuple(m["levels"].values()) for m in result.manifest.details["minimal_nodes"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    p=st.one_of(problems(), problems(min_qis=2, min_levels=2, min_values=2)),
    criteria=st.lists(NEW, min_size=1, max_size=2),
)
def test_lattice_finds_exactly_the_minimal_nodes(p: Problem, criteria: Criteria) -> None:
    expected = exhaustive_minimal(p, criteria)
    try:
        result = anonymize(p.table, p.qis, "s", "lattice", criteria, p.hierarchies)
    except InputError as exc:
        assert expected == [], f"search found nothing but {expected} pass: {exc}"
        return
    assert _minimal(result) == expected


# ------------------------------------------------------------------ Adult, re-checked
QIS = ["age", "sex", "race", "marital-status", "education"]


def _sizes(result: Any, qis: Sequence[str]) -> list[int]:
    """Group sizes of the written release, counted from its rows."""
    rows = result.release.to_pylist()
    return list(Counter(tuple(r[q] for q in qis) for r in rows).values())


def _recheck(result: Any, criteria: Criteria) -> None:
    b = Bucketization.from_arrow(
        result.release, ReleaseSpec("occupation", tuple(result.group_columns))
    )
    for name, params in criteria:
        assert evaluate(b, name, params).safe, (name, params)


@pytest.mark.parametrize("method", ["lattice", "mondrian"])
def test_adult_highest_prosecutor_risk_at_most_5_percent(method: Method) -> None:
    table = load_adult()
    h = adult_hierarchies()
    criteria: Criteria = [("prosecutor-risk", {"highest": 0.05})]
    result = anonymize(table, QIS, "occupation", method, criteria, {q: h[q] for q in QIS})
    sizes = _sizes(result, result.group_columns)
    # from the definition: every record's risk 1/f is at most 1/20
    assert all(Fraction(1, f) <= Fraction(1, 20) for f in sizes)
    assert sum(sizes) == result.release.num_rows
    _recheck(result, criteria)


def test_adult_prosecutor_records_and_average_with_the_lattice() -> None:
    table = load_adult()
    h = adult_hierarchies()
    criteria: Criteria = [("prosecutor-risk", {"highest": 0.1, "records": 0.02, "average": 0.01})]
    result = anonymize(table, QIS, "occupation", "lattice", criteria, {q: h[q] for q in QIS})
    sizes = _sizes(result, result.group_columns)
    n = sum(sizes)
    at_risk = sum(f for f in sizes if Fraction(1, f) > Fraction(1, 10))
    assert Fraction(at_risk, n) <= Fraction(2, 100)
    assert Fraction(len(sizes), n) <= Fraction(1, 100)
    _recheck(result, criteria)


@pytest.mark.parametrize("method", ["lattice", "mondrian"])
def test_adult_k_map_with_a_sampling_fraction(method: Method) -> None:
    table = load_adult()
    h = adult_hierarchies()
    params = {"k": 50, "sampling_fraction": 0.1, "estimator": "zero-truncated-poisson"}
    criteria: Criteria = [("k-map", params)]
    result = anonymize(table, QIS, "occupation", method, criteria, {q: h[q] for q in QIS})
    need, _, _ = derived_k(result.release.num_rows, 50, sampling_fraction=0.1,
                           estimator="zero-truncated-poisson")  # fmt: skip
    assert 1 < need <= 50
    assert min(_sizes(result, result.group_columns)) >= need
    _recheck(result, criteria)


@pytest.mark.parametrize("method", ["lattice", "mondrian"])
@pytest.mark.parametrize(
    "criteria",
    [
        [("alpha-k-anonymity", {"alpha": 0.5, "k": 5})],
        [("basic-beta-likeness", {"beta": 3.0})],
    ],
    ids=["alpha-k", "basic-beta"],
)
def test_adult_distribution_criteria_releases_pass(method: Method, criteria: Criteria) -> None:
    table = load_adult()
    h = adult_hierarchies()
    result = anonymize(table, QIS, "occupation", method, criteria, {q: h[q] for q in QIS})
    _recheck(result, criteria)
