"""Property tests: the worst-case engine against the exhaustive possible-worlds oracle.

The oracle (tests/oracle.py) is written from the definitions of Martin et al. 2007 only
(random worlds, atoms, basic implications, Definition 6), with exact arithmetic. On small
random bucketizations the engine's maximum disclosure, its witness and its exact evaluator
must agree with it; on inputs too large for the oracle the engine is checked against the
paper's structural theorems (monotonicity in k, Theorem 14) and against itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria.worst_case import (
    Atom,
    DisclosureResult,
    Knowledge,
    disclosure_curve,
    is_ck_safe,
    max_disclosure,
    posterior,
)
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from tests.core.criteria.worst_case_strategies import (
    Rows,
    bucketizations,
    build,
    diverse_bucketizations,
    large_bucketizations,
    to_oracle,
)
from tests.oracle import (
    OAtom,
    OracleResult,
    all_atoms,
    count_basic_implications,
    max_disclosure_basic,
    max_disclosure_negations,
    max_disclosure_simple,
    posterior_basic,
    posterior_implications,
    posterior_negations,
)

TOL = 1e-9
KINDS: tuple[Knowledge, ...] = ("implications", "negations")


# --------------------------------------------------------------------------- strategies


def small_bucketizations() -> st.SearchStrategy[Rows]:
    return st.one_of(bucketizations(), diverse_bucketizations())


# --------------------------------------------------------------------------- helpers


@lru_cache(maxsize=512)
def oracle_max(rows: Rows, k: int, knowledge: Knowledge) -> OracleResult:
    if knowledge == "implications":
        return max_disclosure_simple(rows, k)
    return max_disclosure_negations(rows, k)


def to_engine(b: Bucketization, a: OAtom) -> Atom:
    return Atom(a[0], a[1], b.values[a[2]])


def oracle_posterior(
    rows: Rows, b: Bucketization, target: Atom, atoms: Sequence[Atom], kind: Knowledge
) -> Fraction:
    t = to_oracle(b, target)
    xs = [to_oracle(b, a) for a in atoms]
    if kind == "implications":
        return posterior_implications(rows, t, xs)
    return posterior_negations(rows, t, xs)


def check_witness_shape(
    b: Bucketization, result: DisclosureResult, k: int, kind: Knowledge
) -> None:
    w = result.witness
    assert result.k == k
    assert result.knowledge == kind
    assert w.knowledge == kind
    assert len(w.atoms) <= k
    for a in (w.target, *w.atoms):
        assert 0 <= a.group < b.n_groups, a
        assert 0 <= a.person < int(b.sizes[a.group]), a
        assert a.value in b.values, a
    assert w.groups, w
    assert w.groups[0] == w.target.group
    assert len(set(w.groups)) == len(w.groups)
    assert set(w.groups) == {w.target.group} | {a.group for a in w.atoms}
    assert 0.0 < result.max_disclosure <= 1.0 + TOL


def describe(
    rows: Rows, k: int, kind: Knowledge, result: DisclosureResult, want: OracleResult
) -> str:
    return (
        f"counts={[list(r) for r in rows]} k={k} {kind}: engine {result.max_disclosure!r} "
        f"witness={result.witness}; oracle {want.value} ({float(want.value)!r}) "
        f"target={want.target} atoms={want.atoms}"
    )


EXAMPLES: list[Rows] = [
    ((1, 1, 1, 1),),  # one group, four values
    ((2, 0, 1, 0),),  # zero-count columns
    ((1, 0), (0, 1), (1, 1)),  # many tiny groups
    ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1)),
    ((2, 2, 1, 0), (1, 0, 1, 1)),
    ((3, 1, 1, 1), (0, 0, 1, 0)),
    ((1, 1, 1), (1, 1, 1)),  # identical groups
    ((2, 1, 1, 1, 0),),
    ((1,),),
    ((1, 1),),
]


# --------------------------------------------------------------------------- Theorem 9 (oracle)


@settings(max_examples=200, deadline=None)
@given(bucketizations(max_people=5, max_values=4, max_groups=5))
@example(((1, 1, 1, 1),))
@example(((2, 1, 1),))
@example(((1, 1, 1), (1, 1, 0)))
@example(((1, 1, 1, 0), (1, 0, 0, 1)))
def test_theorem9_simple_implications_suffice(rows: Rows) -> None:
    """Max over all conjunctions of k basic implications == max over k simple implications
    sharing the consequent (k = 0, 1, 2; k = 2 only where the enumeration is cheap)."""
    for k in (0, 1, 2):
        if k == 2 and count_basic_implications(rows) > 1500:
            continue
        basic = max_disclosure_basic(rows, k)
        simple = max_disclosure_simple(rows, k)
        assert basic.value == simple.value, (rows, k, basic, simple)
        assert len(basic.implications) <= k
        assert posterior_basic(rows, basic.target, basic.implications) == basic.value
        assert posterior_implications(rows, simple.target, simple.atoms) == simple.value


# --------------------------------------------------------------------------- engine vs oracle


def _engine_matches_oracle(rows: Rows, kind: Knowledge) -> None:
    b = build(rows)
    for k in range(4):
        result = max_disclosure(b, k, kind)
        want = oracle_max(rows, k, kind)
        msg = describe(rows, k, kind, result, want)
        assert math.isclose(result.max_disclosure, float(want.value), rel_tol=0, abs_tol=TOL), msg
        check_witness_shape(b, result, k, kind)
        got = oracle_posterior(rows, b, result.witness.target, result.witness.atoms, kind)
        assert math.isclose(float(got), result.max_disclosure, rel_tol=0, abs_tol=TOL), (
            f"witness attains {got}; " + msg
        )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_bucketizations())
def test_engine_implications_equal_oracle(rows: Rows) -> None:
    _engine_matches_oracle(rows, "implications")


@pytest.mark.parametrize("rows", EXAMPLES)
def test_engine_implications_equal_oracle_examples(rows: Rows) -> None:
    _engine_matches_oracle(rows, "implications")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_bucketizations())
def test_engine_negations_equal_oracle(rows: Rows) -> None:
    _engine_matches_oracle(rows, "negations")


@pytest.mark.parametrize("rows", EXAMPLES)
def test_engine_negations_equal_oracle_examples(rows: Rows) -> None:
    _engine_matches_oracle(rows, "negations")


@st.composite
def knowledge_cases(draw: st.DrawFn) -> tuple[Rows, OAtom, list[OAtom]]:
    rows = draw(bucketizations(max_people=6, max_values=4))
    atoms = all_atoms(rows)
    target = draw(st.sampled_from(atoms))
    same_person = [a for a in atoms if a[:2] == target[:2]]
    pool = st.one_of(st.sampled_from(atoms), st.sampled_from(same_person))
    known = draw(st.lists(pool, max_size=5))
    return rows, target, known


@settings(max_examples=400, deadline=None)
@given(knowledge_cases(), st.sampled_from(KINDS))
def test_engine_posterior_is_exact(case: tuple[Rows, OAtom, list[OAtom]], kind: Knowledge) -> None:
    """The engine's exact evaluator equals world counting, and both reject exactly the
    knowledge that no table consistent with the release satisfies (the engine's docstring:
    ``InputError`` for inconsistent knowledge)."""
    rows, target, known = case
    b = build(rows)
    t = to_engine(b, target)
    xs = [to_engine(b, a) for a in known]
    oracle_fn = posterior_implications if kind == "implications" else posterior_negations
    try:
        want: Fraction | None = oracle_fn(rows, target, known)
    except ValueError:
        want = None
    if want is None:
        with pytest.raises(InputError):
            posterior(b, t, xs, kind)
    else:
        got = posterior(b, t, xs, kind)
        assert isinstance(got, Fraction)
        assert got == want, (rows, target, known, kind, got, want)


# --------------------------------------------------------------------------- structure


@settings(max_examples=200, deadline=None)
@given(st.one_of(small_bucketizations(), large_bucketizations()))
def test_monotone_in_k_and_negations_below_implications(rows: Rows) -> None:
    b = build(rows)
    prev = {"implications": 0.0, "negations": 0.0}
    for k in range(5):
        imp = max_disclosure(b, k, "implications").max_disclosure
        neg = max_disclosure(b, k, "negations").max_disclosure
        assert imp >= prev["implications"] - TOL, (rows, k)
        assert neg >= prev["negations"] - TOL, (rows, k)
        assert neg <= imp + TOL, (rows, k, neg, imp)
        prev = {"implications": imp, "negations": neg}


def merge(rows: Rows, i: int, j: int) -> Rows:
    merged = tuple(x + y for x, y in zip(rows[i], rows[j], strict=True))
    rest = [r for g, r in enumerate(rows) if g not in (i, j)]
    return (*rest[:i], merged, *rest[i:])


@settings(max_examples=200, deadline=None)
@given(st.one_of(small_bucketizations(), large_bucketizations()), st.data())
def test_theorem14_merging_never_increases_disclosure(rows: Rows, data: st.DataObject) -> None:
    if len(rows) < 2:
        rows = (*rows, rows[0])
    i, j = data.draw(
        st.lists(st.integers(0, len(rows) - 1), min_size=2, max_size=2, unique=True).map(sorted)
    )
    merged = merge(rows, i, j)
    b, bm = build(rows), build(merged)
    for k in range(4):
        before = max_disclosure(b, k).max_disclosure
        after = max_disclosure(bm, k).max_disclosure
        assert after <= before + TOL, (rows, (i, j), k, before, after)


@settings(max_examples=150, deadline=None)
@given(st.one_of(small_bucketizations(), large_bucketizations()), st.integers(0, 5))
def test_disclosure_curve_equals_individual_calls(rows: Rows, k_max: int) -> None:
    """Every point of the curve is the single call's result (value bit for bit, same
    witness), and its witness attains the value (exact evaluation by the engine, which the
    oracle checks separately)."""
    b = build(rows)
    curve = disclosure_curve(b, k_max)
    assert [p.k for p in curve] == list(range(k_max + 1))
    for point in curve:
        pairs: tuple[tuple[Knowledge, DisclosureResult], ...] = (
            ("implications", point.implications),
            ("negations", point.negations),
        )
        for kind, got in pairs:
            single = max_disclosure(b, point.k, kind)
            assert got == single, (rows, point.k, kind, got, single)
            check_witness_shape(b, got, point.k, kind)
            exact = posterior(b, got.witness.target, got.witness.atoms, kind)
            assert math.isclose(float(exact), got.max_disclosure, rel_tol=0, abs_tol=TOL)


def test_disclosure_curve_witness_equals_individual_call_on_ties() -> None:
    """Groups 2 and 3 disclose equally; the curve and the single call name the same one
    (an earlier engine named group 3 for k = 0 alone and group 2 inside the curve)."""
    b = build(((1, 1), (1, 1), (0, 1), (0, 1)))
    for k_max in range(4):
        for point in disclosure_curve(b, k_max):
            assert point.implications == max_disclosure(b, point.k, "implications")
            assert point.negations == max_disclosure(b, point.k, "negations")


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(small_bucketizations(), large_bucketizations()),
    st.integers(0, 4),
    st.floats(min_value=0.0, max_value=1.0, exclude_min=True),
)
def test_is_ck_safe_is_strict_threshold(rows: Rows, k: int, c: float) -> None:
    """Definition 13 (disclosure < c), decided as docs/worst-case-engine.md states: exactly
    outside the tolerance band of 1e-9 around c, unsafe inside it."""
    b = build(rows)
    res = max_disclosure(b, k)
    v = posterior(b, res.witness.target, res.witness.atoms)  # the witness's exact value
    assert res.exact == v and float(v) == res.max_disclosure
    if abs(float(v) - c) > 1e-9:
        assert is_ck_safe(b, c, k) == (v < Fraction(c)), (rows, k, c, v)
    else:
        assert is_ck_safe(b, c, k) is False
    # At the boundary: c equal to the disclosure, as its float or one ulp below it, is unsafe;
    # safe only once c clears the band.
    md = res.max_disclosure
    assert is_ck_safe(b, md, k) is False
    if md > 0:
        assert is_ck_safe(b, math.nextafter(md, 0.0), k) is False
    assert is_ck_safe(b, min(1.0, math.nextafter(md, math.inf)), k) is False
    above = md + 2e-9
    if above <= 1.0:
        assert is_ck_safe(b, above, k) is True


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 9), min_size=3, max_size=3), min_size=1, max_size=40),
    st.sampled_from([1, 2**20, 2**40]),
)
def test_the_distinct_profiles_partition_the_groups(rows: list[list[int]], scale: int) -> None:
    """The engine's deduplication of group profiles (packed into one integer when the
    columns fit in 63 bits, compared as bytes otherwise: ``scale`` 2**40 forces the bytes)
    against the definition: two groups share a profile iff their rows are equal, and each
    profile's first row is equal to every row of it."""
    import numpy as np

    from airflow_privacy.core.criteria.worst_case import _distinct_rows

    keys = np.asarray(rows, dtype=np.int64) * scale
    first, inverse = _distinct_rows(keys)
    assert len(set(map(tuple, keys.tolist()))) == first.size
    for i, row in enumerate(keys.tolist()):
        assert keys[first[inverse[i]]].tolist() == row
        for j, other in enumerate(keys.tolist()):
            assert bool(inverse[i] == inverse[j]) is (row == other)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(0, 3), min_size=4, max_size=4).filter(any), min_size=1, max_size=30
    ),
    st.sets(st.sampled_from(["v0", "v1", "v2", "v3"]), max_size=4),
)
def test_each_groups_target_value_is_its_first_most_frequent_non_benign_value(
    rows: list[list[int]], benign: set[str]
) -> None:
    """The target of the worst case in each group (with and without benign values, where a
    shortcut skips sorting the groups' values) against the definition: the first non-benign
    present value in the group's order of decreasing frequency (ties: label order), its
    count, and how many values are strictly more frequent; -1 when there is none."""
    from airflow_privacy.core.criteria.worst_case import _compute_targets

    values = ["v0", "v1", "v2", "v3"]
    b = Bucketization.from_group_counts(rows, values, "s").with_benign(frozenset(benign))
    got = _compute_targets(b)
    for g, row in enumerate(rows):
        by_frequency = sorted(range(4), key=lambda v: (-row[v], v))
        found = [v for v in by_frequency if row[v] > 0 and values[v] not in benign]
        if not found:
            assert (got.index[g], got.count[g], got.rank[g]) == (-1, 0, 0)
            continue
        v = found[0]
        assert (got.index[g], got.count[g]) == (v, row[v])
        assert got.rank[g] == sum(c > row[v] for c in row)
