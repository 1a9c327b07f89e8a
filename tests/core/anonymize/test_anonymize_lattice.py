"""Full-domain lattice search: minimality against exhaustive evaluation of every node,
pruning only with monotone criteria, roll-up against counting rows, utility choice, errors."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize import anonymize, monotone
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.encoding import encode
from airflow_privacy.core.anonymize.lattice import LatticeProblem, qi_trees
from airflow_privacy.core.anonymize.search import Lattice, minimal_nodes, search
from airflow_privacy.core.criteria.base import Criterion
from airflow_privacy.core.criteria.registry import CRITERIA
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.datasets import adult_hierarchies, load_adult
from airflow_privacy.core.hierarchy import Hierarchy, generalize_table
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import (
    CRITERIA_LISTS,
    Criteria,
    Problem,
    all_nodes,
    exhaustive_minimal,
    generalize,
    problems,
    release_groups,
    utility,
)

TOL = 1e-9
METRICS = ("loss", "discernibility", "average-class-size", "precision", "non-uniform-entropy")


def _minimal(result: Any) -> list[tuple[int, ...]]:
    return sorted(tuple(m["levels"].values()) for m in result.manifest.details["minimal_nodes"])


def _qi_hierarchies(qis: list[str]) -> dict[str, Hierarchy]:
    """Adult's ARX hierarchies of the QIs only (a hierarchy for another column is refused)."""
    h = adult_hierarchies()
    return {q: h[q] for q in qis}


def _budget(p: Problem, fraction: float) -> int:
    return math.floor(fraction * len(p.rows))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    p=st.one_of(problems(), problems(min_qis=2, min_levels=2, min_values=2)),
    criteria=CRITERIA_LISTS,
    fraction=st.sampled_from([0.0, 0.0, 0.15, 0.3]),
    metric=st.sampled_from(METRICS),
)
def test_lattice_finds_exactly_the_minimal_nodes_and_the_best_one(
    p: Problem, criteria: Criteria, fraction: float, metric: str
) -> None:
    budget = _budget(p, fraction)
    expected = exhaustive_minimal(p, criteria, budget)
    try:
        result = anonymize(p.table, p.qis, "s", "lattice", criteria, p.hierarchies,
                           utility=metric, suppression_limit=fraction)  # fmt: skip
    except InputError as exc:
        assert expected == [], f"search found nothing but {expected} pass: {exc}"
        assert "no generalization passes" in str(exc)
        return
    assert _minimal(result) == expected
    details = result.manifest.details
    chosen = tuple(details["levels"].values())
    assert chosen in expected
    # every minimal node's utility as reported = the record-by-record definition
    truth = {n: utility(p, n, criteria, budget) for n in expected}
    for m in details["minimal_nodes"]:
        node = tuple(m["levels"].values())
        for name in METRICS:
            assert m["utility"][name] == pytest.approx(truth[node][name], rel=TOL, abs=TOL)
    best = (max if metric == "precision" else min)(truth[n][metric] for n in expected)
    assert truth[chosen][metric] == pytest.approx(best, rel=TOL, abs=TOL)
    # the release: every row is its source row generalized to the chosen node, suppressed
    # rows are exactly the ones the definition removes
    groups = release_groups(p, chosen, criteria, budget)
    assert groups is not None
    keys = generalize(p, chosen)
    kept = sorted(i for i, k in enumerate(keys) if k in groups)
    assert sorted(result.source_rows.tolist()) == kept
    assert result.manifest.suppressed == len(p.rows) - len(kept)
    rel = result.release.to_pylist()
    for row, src in zip(rel, result.source_rows.tolist(), strict=True):
        for q, lv in zip(p.qis, chosen, strict=True):
            assert row[q] == p.levels_of(q)[lv][p.rows[src][q]]  # each value -> its ancestor
        assert row["s"] == p.rows[src]["s"]


@settings(max_examples=40, deadline=None)
@given(p=problems(max_rows=16), nodes=st.data())
def test_rollup_equals_counting_the_rows(p: Problem, nodes: st.DataObject) -> None:
    enc = encode(p.table, p.qis, "s")
    problem = LatticeProblem(enc, CriteriaSet.parse([("k-anonymity", {"k": 1})]),
                             qi_trees(enc, p.hierarchies), 0)  # fmt: skip
    order = nodes.draw(st.permutations(all_nodes(p.heights())))
    for node in order[:6]:  # in random order: every roll-up source is exercised
        g = problem.groups(node)
        got: Counter[tuple[tuple[str, ...], str]] = Counter()
        for codes, row in zip(g.codes.tolist(), g.counts.tolist(), strict=True):
            key = tuple(problem.trees[i].labels[node[i]][c] for i, c in enumerate(codes))
            for v, n in enumerate(row):
                if n:
                    got[(key, enc.sensitive.values[v])] += n
        expected = Counter(zip(generalize(p, node), [r["s"] for r in p.rows], strict=True))
        assert got == expected
    assert problem.rollup.rollups >= 1 or all(all(x == 0 for x in n) for n in order[:6])


# ------------------------------------------------------------ only monotone criteria prune
class TwoGroups(Criterion):
    """A criterion that declares no monotonicity (and is not monotone): exactly two groups."""

    name = "test-two-groups"
    summary = "exactly two groups"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        ok = b.n_groups == 2
        return CriterionResult(self.name, ok, {}, float(b.n_groups), f"{b.n_groups} groups")


@pytest.fixture
def two_groups(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(CRITERIA, TwoGroups.name, TwoGroups)
    return TwoGroups.name


def _chain() -> tuple[pa.Table, dict[str, Hierarchy]]:
    """One QI whose levels give 4, 2, 1, 1, 1 groups."""
    t = pa.table({"a": ["1", "2", "3", "4"], "s": ["u", "v", "u", "v"]})
    rows = [[v, "1-2" if v in "12" else "3-4", "1-4", "x", "*"] for v in "1234"]
    return t, {"a": Hierarchy.from_rows("a", rows)}


def test_a_criterion_missing_from_the_table_is_checked_not_pruned(two_groups: str) -> None:
    table, hier = _chain()
    result = anonymize(table, ["a"], "s", "lattice", [(two_groups, {})], hier)
    assert _minimal(result) == [(1,)]
    assert result.manifest.details["search"]["pruning"] == {two_groups: False}
    assert result.manifest.details["search"]["inferred_pass"] == 0
    assert result.manifest.details["search"]["inferred_fail"] == 0


def test_pruning_a_non_monotone_criterion_would_miss_the_minimal_node(
    two_groups: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above has teeth: marked monotone, the binary search checks the middle of
    the chain (one group: fails), infers that every finer node fails, and misses level 1."""
    monkeypatch.setattr(TwoGroups, "monotonicity", monotone.Monotonicity(True, True, True, "wrong"))
    table, hier = _chain()
    with pytest.raises(InputError, match="no generalization passes"):
        anonymize(table, ["a"], "s", "lattice", [(two_groups, {})], hier)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_rows=14), criteria=CRITERIA_LISTS)
def test_mixed_monotone_and_unknown_criteria_match_exhaustive(
    p: Problem, criteria: Criteria
) -> None:
    saved = CRITERIA.get("test-two-groups")
    CRITERIA["test-two-groups"] = TwoGroups
    try:
        mixed = [*criteria, ("test-two-groups", {})]
        expected = exhaustive_minimal(p, mixed)
        try:
            result = anonymize(p.table, p.qis, "s", "lattice", mixed, p.hierarchies)
        except InputError:
            assert expected == []
            return
        assert _minimal(result) == expected
    finally:
        if saved is None:
            del CRITERIA["test-two-groups"]


def test_with_suppression_only_suppression_monotone_criteria_prune() -> None:
    t = load_adult().slice(0, 2000)
    h = _qi_hierarchies(["age", "sex", "race"])
    crit = [("k-anonymity", {"k": 3}), ("entropy-l-diversity", {"l": 2})]
    r0 = anonymize(t, ["age", "sex", "race"], "occupation", "lattice", crit, h)
    assert set(r0.manifest.details["search"]["pruning"].values()) == {True}
    r1 = anonymize(t, ["age", "sex", "race"], "occupation", "lattice", crit, h,
                   suppression_limit=0.05)  # fmt: skip
    assert r1.manifest.details["search"]["pruning"] == {
        "k-anonymity (k=3)": True,
        "entropy-l-diversity (l=2)": False,
    }


# ----------------------------------------------------------------------------- Adult
ADULT_QIS = ["age", "sex", "race", "marital-status"]


def _adult_exhaustive(criteria: Criteria) -> list[tuple[int, ...]]:
    """Every node of the 4-QI Adult lattice generalized from the rows and checked."""
    table = load_adult()
    h = adult_hierarchies()
    heights = [h[q].height for q in ADULT_QIS]
    lattice = Lattice(tuple(heights))
    passes = []
    for i in range(lattice.size):
        node = lattice.levels(i)
        rel = generalize_table(table, h, dict(zip(ADULT_QIS, node, strict=True)))
        b = Bucketization.from_arrow(rel, ReleaseSpec("occupation", tuple(ADULT_QIS)))
        cs = CriteriaSet.parse(criteria)
        passes.append(cs.passes(b))
    import numpy as np

    return sorted(minimal_nodes(lattice, np.asarray(passes)))


@pytest.mark.parametrize(
    "criteria",
    [[("ck-safety", {"c": 0.7, "k": 3})], [("k-anonymity", {"k": 5})]],
    ids=["ck-safety", "5-anonymity"],
)
def test_adult_minimal_nodes_match_checking_every_node_from_rows(criteria: Criteria) -> None:
    result = anonymize(load_adult(), ADULT_QIS, "occupation", "lattice", criteria,
                       _qi_hierarchies(ADULT_QIS))  # fmt: skip
    assert _minimal(result) == _adult_exhaustive(criteria)
    s = result.manifest.details["search"]
    # monotone criteria only: every node is either checked or inferred, never both
    assert s["nodes_checked"] + s["inferred_pass"] + s["inferred_fail"] == s["lattice_size"]
    assert s["nodes_checked"] < s["lattice_size"]
    assert len(s["path"]) == s["checks"]


def test_search_counts_on_the_full_adult_lattice() -> None:
    """8 QIs (4,320 nodes), (0.7, 3)-safety: a small fraction of the nodes is checked."""
    t = load_adult()
    qis = [c for c in t.column_names if c != "occupation"]
    result = anonymize(t, qis, "occupation", "lattice", [("ck-safety", {"c": 0.7, "k": 3})],
                       _qi_hierarchies(qis))  # fmt: skip
    s = result.manifest.details["search"]
    assert s["lattice_size"] == 4320
    assert s["nodes_checked"] <= 200
    assert result.manifest.criteria_results[0].max_disclosure is not None
    assert result.manifest.criteria_results[0].max_disclosure < 0.7


def test_search_without_any_monotone_criterion_checks_each_candidate() -> None:
    lat = Lattice((2, 3))
    calls: list[tuple[int, ...]] = []

    def rest(node: tuple[int, ...]) -> bool:
        calls.append(node)
        return node in {(1, 0), (0, 2)}

    found = search(lat, None, rest)
    assert sorted(found.minimal) == [(0, 2), (1, 0)]
    # nodes above a passing node are never needed: (1, 1), (1, 2) are skipped
    assert sorted(calls) == [(0, 0), (0, 1), (0, 2), (1, 0)]


# ----------------------------------------------------------------------------- errors
def _adult_small() -> pa.Table:
    return load_adult().slice(0, 300)


def test_value_missing_from_its_hierarchy_is_named() -> None:
    h = _qi_hierarchies(["education"])
    rows = [r for r in h["education"].levels[0] if r != "Masters"]
    h["education"] = Hierarchy.from_rows(
        "education", [[v, *[lv[v] for lv in h["education"].levels[1:]]] for v in rows]
    )
    with pytest.raises(InputError, match="value 'Masters' of column 'education' is not in its"):
        anonymize(_adult_small(), ["education"], "occupation", "lattice",
                  [("k-anonymity", {"k": 2})], h)  # fmt: skip


def test_a_label_with_two_parents_is_an_inconsistent_hierarchy() -> None:
    h = Hierarchy.from_rows("a", [["1", "low", "*"], ["2", "low", "A"], ["3", "high", "A"]])
    t = pa.table({"a": ["1", "2", "3"], "s": ["x", "y", "z"]})
    with pytest.raises(InputError, match="'low' at level 1 has two parents at level 2"):
        anonymize(t, ["a"], "s", "lattice", [("k-anonymity", {"k": 1})], {"a": h})


def test_ragged_levels_are_named() -> None:
    with pytest.raises(InputError, match="line 2: 2 levels, expected 3"):
        Hierarchy.from_rows("a", [["1", "low", "*"], ["2", "*"]])
    ragged = Hierarchy("a", ({"1": "1", "2": "2"}, {"1": "low", "2": "low"}, {"1": "*"}))
    t = pa.table({"a": ["1", "2"], "s": ["x", "y"]})
    with pytest.raises(InputError, match="ragged levels: value '2' has no label at level 2"):
        anonymize(t, ["a"], "s", "lattice", [("k-anonymity", {"k": 1})], {"a": ragged})


def test_an_impossible_criterion_names_itself() -> None:
    t = _adult_small()
    with pytest.raises(
        InputError, match=r"no generalization passes criterion ck-safety \(c=0.05, k=1\)"
    ):
        anonymize(t, ["age", "sex"], "occupation", "lattice",
                  [("k-anonymity", {"k": 2}), ("ck-safety", {"c": 0.05, "k": 1})],
                  _qi_hierarchies(["age", "sex"]))  # fmt: skip


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"suppression_limit": 1.0}, "suppression limit must be a fraction in"),
        ({"suppression_limit": -0.1}, "suppression limit must be a fraction in"),
        ({"utility": "beauty"}, "unknown utility metric 'beauty'"),
        ({"max_lattice_size": 10}, "the generalization lattice has 20 nodes"),
        ({"bucket_column": "b"}, "option 'bucket_column' does not apply to method lattice"),
    ],
)
def test_bad_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError, match=message):
        anonymize(_adult_small(), ["age", "sex", "race"], "occupation", "lattice",
                  [("k-anonymity", {"k": 2})], _qi_hierarchies(["age", "sex", "race"]),
                  **options)  # fmt: skip


@pytest.mark.parametrize(
    ("criteria", "message"),
    [
        ([], "at least one criterion is required"),
        ([("k-anon", {"k": 2})], "unknown criterion 'k-anon'"),
        ([("k-anonymity", {})], "criterion k-anonymity needs k"),
        ([("distinct-l-diversity", {"l": 2.5})], "l must be an integer"),
        ([("ck-safety", {"c": 1.5, "k": 1})], r"ck-safety: c must be in \(0, 1\], got 1.5"),
    ],
)
def test_bad_criteria_fail_before_the_data_is_read(criteria: Criteria, message: str) -> None:
    with pytest.raises(InputError, match=message):
        anonymize("not a table", ["a"], "s", "lattice", criteria)


def test_binary_search_on_a_chain_is_not_minimal_paper_errata() -> None:
    """Martin et al. 2007, section 3.4, suggest a binary search for a minimal safe release;
    on a chain it stops at a node that a safe node off the chain lies below
    (docs/paper-errata.md)."""
    t = load_adult()
    qis = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
           "salary-class"]  # fmt: skip
    enc = encode(t, qis, "occupation")
    problem = LatticeProblem(enc, CriteriaSet.parse([("ck-safety", {"c": 0.7, "k": 3})]),
                             qi_trees(enc, _qi_hierarchies(qis)), 0)  # fmt: skip
    heights = problem.lattice.heights
    order = ["education", "age", "native-country", "race", "sex", "marital-status",
             "salary-class", "workclass"]  # fmt: skip
    node = [0] * len(qis)
    chain = [tuple(node)]
    for name in order:
        i = qis.index(name)
        while node[i] < heights[i] - 1:
            node[i] += 1
            chain.append(tuple(node))
    low, high, found = 0, len(chain) - 1, None
    while low <= high:
        mid = (low + high) // 2
        if problem.check(chain[mid]):
            found, high = chain[mid], mid - 1
        else:
            low = mid + 1
    assert found == (1, 4, 1, 2, 3, 2, 2, 1)
    below = (1, 4, 1, 1, 3, 2, 2, 0)
    assert problem.check(below)
    assert all(a <= b for a, b in zip(below, found, strict=True)) and below != found
