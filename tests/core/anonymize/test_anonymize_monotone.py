"""The monotonicity each criterion class declares (``Criterion.monotonicity``) checked
against the definitions.

* ``merge``: a passing release still passes after two of its groups merge: random
  bucketizations through the registry, and for the two background-knowledge criteria also
  straight from the possible-worlds oracle (Theorem 14 of Martin et al. 2007; the negation
  adversary), exact fractions.
* ``suppression``: merging a passing group with *any* group gives a passing group (what
  keeps the suppressed records of a coarser node a subset of a finer node's): checked for
  the criteria marked ``True``; for every criterion marked ``False`` a concrete lattice
  where the finer node passes within the budget and the coarser one does not.
* ``local``: the release passes iff every group passes on its own.

The criteria decided against a population table (k-map without an estimator,
delta-presence) draw one more column per group: the population records of the group's class
that are not in the release. Merging adds it up like the counts (the classes merge); a
group with no release record is a population class without one (presence 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize import anonymize, monotone
from airflow_privacy.core.criteria.models import EntropyLDiversity
from airflow_privacy.core.criteria.registry import CRITERIA, evaluate
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import (
    Problem,
    emd_to_table,
    exhaustive_minimal,
    node_passes,
)
from tests.oracle import max_disclosure_basic, max_disclosure_negations

Rows = list[list[int]]

PARAMS: dict[str, list[dict[str, Any]]] = {
    "k-anonymity": [{"k": 2}, {"k": 3}, {"k": 5}],
    "distinct-l-diversity": [{"l": 2}, {"l": 3}],
    "entropy-l-diversity": [{"l": 1.5}, {"l": 2}, {"l": 3}],
    "recursive-cl-diversity": [{"c": 1, "l": 2}, {"c": 2, "l": 2}, {"c": 3, "l": 3}],
    "t-closeness": [{"t": 0.1}, {"t": 0.2}, {"t": 0.35}],
    "ck-safety": [{"c": 0.5, "k": 1}, {"c": 0.7, "k": 2}, {"c": 0.9, "k": 3}],
    "negation-safety": [{"c": 0.5, "k": 1}, {"c": 0.7, "k": 2}, {"c": 0.9, "k": 3}],
    "alpha-k-anonymity": [
        {"alpha": 0.5, "k": 2},
        {"alpha": 0.7, "k": 3},
        {"alpha": 0.5, "k": 1, "sensitive_value": "v1"},
    ],
    "basic-beta-likeness": [{"beta": 0.5}, {"beta": 1.0}, {"beta": 2.0}],
    "enhanced-beta-likeness": [{"beta": 0.5}, {"beta": 1.0}, {"beta": 2.0}],
    "delta-disclosure": [{"delta": 0.5}, {"delta": 1.0}, {"delta": 2.0}],
    "prosecutor-risk": [
        {"highest": 0.5},
        {"highest": 0.2, "records": 0.3},
        {"average": 0.4},
        {"highest": 0.34, "average": 0.5},
    ],
    "k-map": [
        {"k": 3, "sampling_fraction": 0.5},
        {"k": 5, "population_size": 1000, "estimator": "zero-truncated-poisson"},
        {"k": 4},  # against the population table
        {"k": 8},
    ],
    "delta-presence": [
        {"delta_max": 0.5},
        {"delta_max": 0.8, "delta_min": 0.2},
        {"delta_max": 1.0, "delta_min": 0.1},
        {"delta_max": 0.3, "delta_min": 0.3},
    ],
}
# judged group by group against the whole table (its distribution, its record count)
AGAINST_TABLE = {"basic-beta-likeness", "enhanced-beta-likeness", "delta-disclosure", "k-map"}
BUILT_IN = [name for name in PARAMS if name in CRITERIA]
# what each class declares (Criterion.monotonicity)
MONOTONICITY = {name: cls.monotonicity for name, cls in CRITERIA.items()}


@st.composite
def count_rows(draw: st.DrawFn, min_groups: int = 2, max_groups: int = 6) -> Rows:
    v = draw(st.integers(1, 5))
    g = draw(st.integers(min_groups, max_groups))
    rows = [[draw(st.integers(0, 6)) for _ in range(v)] for _ in range(g)]
    for row in rows:
        if sum(row) == 0:
            row[draw(st.integers(0, v - 1))] = 1
    return rows


def _merge(rows: Rows, i: int, j: int) -> Rows:
    merged = [a + b for a, b in zip(rows[i], rows[j], strict=True)]
    return [r for k, r in enumerate(rows) if k not in (i, j)] + [merged]


def _needs_population(name: str, params: dict[str, Any]) -> bool:
    return bool(CRITERIA[name](params).needs_population())


def _with_population(rows: Rows) -> Bucketization:
    """The last column of each row: population records of its class beyond the release's
    (module doc); rows without a release record are population classes without one."""
    released = [r for r in rows if sum(r[:-1]) > 0]
    rest = [r[-1] for r in rows if sum(r[:-1]) == 0 and r[-1] > 0]
    b = Bucketization.from_group_counts([r[:-1] for r in released])
    return b.with_population([sum(r) for r in released], rest)


def _safe(rows: Rows, name: str, params: dict[str, Any]) -> bool:
    if _needs_population(name, params):
        if not any(sum(r[:-1]) for r in rows):
            return True  # nothing released (only reached by the local test's singletons)
        return evaluate(_with_population(rows), name, params).safe
    return evaluate(Bucketization.from_group_counts(rows), name, params).safe


def test_every_built_in_criterion_declares_its_traits() -> None:
    # every built-in class's claims are checked here (skyline by its own test below)
    from airflow_privacy.core.criteria.models import BUILT_IN as CLASSES

    assert {cls.name for cls in CLASSES} - {"skyline"} <= set(PARAMS)
    assert set(BUILT_IN) <= set(MONOTONICITY)
    assert all(MONOTONICITY[n].reference for n in BUILT_IN)
    assert monotone.monotonicity("no-such-criterion") == monotone.UNKNOWN
    assert monotone.monotonicity("k-anonymity") == CRITERIA["k-anonymity"].monotonicity


@pytest.mark.parametrize("name", [n for n in BUILT_IN if MONOTONICITY[n].merge])
@settings(max_examples=150, deadline=None)
@given(rows=count_rows(), pick=st.data())
def test_merging_groups_keeps_a_passing_release_passing(
    name: str, rows: Rows, pick: st.DataObject
) -> None:
    params = pick.draw(st.sampled_from(PARAMS[name]))
    i, j = pick.draw(
        st.sampled_from([(a, b) for a in range(len(rows)) for b in range(a + 1, len(rows))])
    )
    if _safe(rows, name, params):
        assert _safe(_merge(rows, i, j), name, params)


# small tables only (the oracle enumerates every world): most draws are filtered out
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(rows=count_rows(max_groups=3).filter(lambda r: sum(map(sum, r)) <= 5), k=st.integers(0, 1))
def test_theorem_14_from_the_possible_worlds_oracle(rows: Rows, k: int) -> None:
    """Martin et al. 2007, Theorem 14: merging buckets never raises the maximum disclosure
    over k basic implications (exact, every basic implication enumerated)."""
    before = max_disclosure_basic(rows, k).value
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            assert max_disclosure_basic(_merge(rows, i, j), k).value <= before


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(rows=count_rows(max_groups=3).filter(lambda r: sum(map(sum, r)) <= 7), k=st.integers(0, 2))
def test_negation_disclosure_only_falls_under_merging_from_the_oracle(rows: Rows, k: int) -> None:
    before = max_disclosure_negations(rows, k).value
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            assert max_disclosure_negations(_merge(rows, i, j), k).value <= before


@pytest.mark.parametrize("name", [n for n in BUILT_IN if MONOTONICITY[n].suppression])
@settings(max_examples=150, deadline=None)
@given(rows=count_rows(min_groups=2, max_groups=2), pick=st.data())
def test_suppression_monotone_a_passing_group_absorbs_any_group(
    name: str, rows: Rows, pick: st.DataObject
) -> None:
    params = pick.draw(st.sampled_from(PARAMS[name]))
    if _safe([rows[0]], name, params):
        assert _safe(_merge(rows, 0, 1), name, params)


# parameters that make a criterion monotone with suppression where its class is not
# (``Criterion.traits``: k-map against a population table)
INSTANCE_SUPPRESSION = [
    (n, p)
    for n in BUILT_IN
    for p in PARAMS[n]
    if CRITERIA[n](p).traits().suppression and not MONOTONICITY[n].suppression
]


def test_instance_traits_are_declared_where_they_differ() -> None:
    assert [n for n, _ in INSTANCE_SUPPRESSION] == ["k-map", "k-map"]
    assert all(CRITERIA[n](p).traits().merge for n, p in INSTANCE_SUPPRESSION)


@pytest.mark.parametrize(("name", "params"), INSTANCE_SUPPRESSION)
@settings(max_examples=150, deadline=None)
@given(rows=count_rows(min_groups=2, max_groups=2))
def test_instance_suppression_monotone_a_passing_group_absorbs_any_group(
    name: str, params: dict[str, Any], rows: Rows
) -> None:
    if sum(rows[0][:-1]) > 0 and _safe([rows[0]], name, params):
        assert _safe(_merge(rows, 0, 1), name, params)


@pytest.mark.parametrize("name", [n for n in BUILT_IN if MONOTONICITY[n].local])
@settings(max_examples=100, deadline=None)
@given(rows=count_rows(), pick=st.data())
def test_local_criteria_pass_iff_every_group_passes(
    name: str, rows: Rows, pick: st.DataObject
) -> None:
    params = pick.draw(st.sampled_from(PARAMS[name]))
    if _needs_population(name, params):
        # released groups only: a population class without a release record is judged on
        # the whole release (presence 0; tests/core/anonymize/test_anonymize_population.py)
        rows = [r for r in rows if sum(r[:-1]) > 0]
        if not rows:
            return
    whole = _safe(rows, name, params)
    if _needs_population(name, params):  # the class's population test
        test = CRITERIA[name](params).population_test()
        assert test is not None and CRITERIA[name](params).group_test(["v0"]) is None
        sizes = np.asarray([sum(r[:-1]) for r in rows], dtype=np.int64)
        alone = [bool(x) for x in test(sizes, sizes + np.asarray([r[-1] for r in rows]))]
    elif name == "t-closeness":  # a group on its own is judged against the whole table
        table = [f"v{j}" for r in rows for j, c in enumerate(r) for _ in range(c)]
        alone = [
            float(emd_to_table([f"v{j}" for j, c in enumerate(r) for _ in range(c)], table, None))
            <= params["t"]
            for r in rows
        ]
    elif name in AGAINST_TABLE:  # the class's own group test, with the table's totals
        found = CRITERIA[name](params).group_test([f"v{j}" for j in range(len(rows[0]))])
        assert found is not None and found[1]
        counts = np.asarray(rows, dtype=np.int64)
        alone = [bool(x) for x in found[0](counts, counts.sum(axis=0))]
    else:
        alone = [_safe([r], name, params) for r in rows]
    assert whole == all(alone)


# ------------------------------------- suppression breaks monotonicity: concrete lattices
# One QI ``a`` generalized to one label ``*`` (or ``L``/``R``): the finer node passes within
# the budget (the failing group is suppressed), the coarser does not (the failing records
# are now merged into a group that fails and is too big to suppress).
SUPPRESSION_COUNTEREXAMPLES: dict[str, tuple[dict[str, Any], list[tuple[str, str]], int]] = {
    "entropy-l-diversity": (
        {"l": 2}, [("a1", "x"), ("a1", "y"), ("a2", "y"), ("a3", "x"), ("a3", "x"), ("a3", "x")], 4,
    ),
    "recursive-cl-diversity": ({"c": 2, "l": 2}, [("a1", "y"), ("a3", "x"), ("a3", "y")], 1),
    "t-closeness": (
        {"t": 0.25}, [("a1", "x"), ("a1", "y"), ("a2", "y"), ("a4", "x"), ("a4", "x")], 3,
    ),
    "ck-safety": (
        {"c": 0.7, "k": 1},
        [("a1", "x"), ("a1", "y"), ("a2", "x"), ("a2", "x"), ("a2", "y"), ("a2", "y"),
         ("a2", "z"), ("a3", "x"), ("a3", "x")],
        4,
    ),
    "negation-safety": (
        {"c": 0.7, "k": 1},
        [("a1", "y"), ("a2", "x"), ("a2", "y"), ("a2", "z"), ("a2", "z"), ("a3", "y")], 2,
    ),
}  # fmt: skip


def _counterexample(name: str) -> tuple[Problem, dict[str, Any], int]:
    params, rows, budget = SUPPRESSION_COUNTEREXAMPLES[name]
    top = "L" if name == "t-closeness" else "*"
    h = Hierarchy.from_rows("a", [[v, top if v in ("a1", "a2") or top == "*" else "R"]
                                  for v in ("a1", "a2", "a3", "a4")])  # fmt: skip
    return Problem([{"a": a, "s": s} for a, s in rows], ["a"], {"a": h}), params, budget


@pytest.mark.parametrize("name", sorted(SUPPRESSION_COUNTEREXAMPLES))
def test_not_monotone_with_suppression(name: str) -> None:
    assert not MONOTONICITY[name].suppression
    p, params, budget = _counterexample(name)
    assert node_passes(p, (0,), [(name, params)], budget)
    assert not node_passes(p, (1,), [(name, params)], budget)


def test_pruning_entropy_with_suppression_would_be_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain of three nodes (pass, fail, fail) for entropy 2-diversity with a budget of 4:
    searched correctly the finest node is found; wrongly marked suppression-monotone, the
    binary search checks the middle node first, infers that the finest fails, and finds
    nothing."""
    rows = [("a1", "x"), ("a1", "y"), ("a2", "y"), ("a3", "x"), ("a3", "x"), ("a3", "x")]
    table = pa.table({"a": [a for a, _ in rows], "s": [s for _, s in rows]})
    h = {"a": Hierarchy.from_rows("a", [[v, "A", "*"] for v in ("a1", "a2", "a3")])}
    crit = [("entropy-l-diversity", {"l": 2})]
    p = Problem([{"a": a, "s": s} for a, s in rows], ["a"], h)
    assert exhaustive_minimal(p, crit, budget=4) == [(0,)]
    result = anonymize(table, ["a"], "s", "lattice", crit, h, suppression_limit=4 / 6 + 1e-9)
    assert [tuple(m["levels"].values()) for m in result.manifest.details["minimal_nodes"]] == [(0,)]
    wrong = monotone.Monotonicity(True, True, True, "wrong")
    monkeypatch.setattr(EntropyLDiversity, "monotonicity", wrong)
    with pytest.raises(InputError, match="no generalization passes"):
        anonymize(table, ["a"], "s", "lattice", crit, h, suppression_limit=4 / 6 + 1e-9)


@pytest.mark.skipif("skyline" not in CRITERIA, reason="the skyline criterion is not registered")
@settings(max_examples=60, deadline=None)
@given(rows=count_rows(max_groups=4), pick=st.data())
def test_skyline_is_monotone_under_merging(rows: Rows, pick: st.DataObject) -> None:
    point = pick.draw(st.sampled_from(["0,1,0,0.7", "1,1,1,0.8", "1,0,2,0.9", "2,2,1,0.95"]))
    params = {"points": [point]}
    i, j = pick.draw(
        st.sampled_from([(a, b) for a in range(len(rows)) for b in range(a + 1, len(rows))])
    )
    if _safe(rows, "skyline", params):
        assert _safe(_merge(rows, i, j), "skyline", params)
