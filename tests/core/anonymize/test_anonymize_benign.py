"""The anonymizers honour benign values (docs/anonymizers.md, "Benign values").

* the lattice search with benign values finds exactly the minimal passing nodes of an
  exhaustive evaluation through the registry with the same benign values
  (tests/core/anonymize/test_anonymize_oracle.py, every release and every one-group release judged
  ``.with_benign(...)``), with and without a suppression budget;
* Mondrian and bucketization releases pass the re-check with the benign values;
* more benign values never need more generalization (every minimal node without them lies
  above a minimal node with them);
* on Fair's affairs survey (tests/data/fair/, ``none`` the benign answer of 68% of the
  records) a release anonymized with ``none`` benign is less generalized, passes the check
  with it and fails the check without it; criteria no release meets without the benign
  value (a share cap below 68%, (c,k)-safety at c = 0.8) become satisfiable;
* the manifest records the benign values, its results are computed with them.
"""

from __future__ import annotations

import csv
import math
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.criteria.registry import evaluate
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import (
    CRITERION,
    Criteria,
    Problem,
    exhaustive_minimal,
    problems,
)

FAIR = Path(__file__).resolve().parents[2] / "data" / "fair" / "fair.csv"
FAIR_QIS = ["age", "yrs_married", "children", "religious"]
SENSITIVE = ("s0", "s1", "s2", "s3")

DISTRIBUTION = st.one_of(
    st.builds(
        lambda a, k: ("alpha-k-anonymity", {"alpha": a, "k": k}),
        st.sampled_from([0.5, 0.75]),
        st.integers(1, 3),
    ),
    st.builds(lambda b: ("basic-beta-likeness", {"beta": b}), st.sampled_from([0.5, 1.0])),
    st.builds(lambda b: ("enhanced-beta-likeness", {"beta": b}), st.sampled_from([0.5, 3.0])),
    st.builds(lambda d: ("delta-disclosure", {"delta": d}), st.sampled_from([0.5, 1.0, 2.0])),
    st.builds(lambda p: ("skyline", {"points": [p]}), st.sampled_from(["1,0,0,0.8", "0,1,1,0.9"])),
)
TABLE_DISTRIBUTION = frozenset(
    {"basic-beta-likeness", "enhanced-beta-likeness", "delta-disclosure"}
)
CRITERIA = st.lists(st.one_of(CRITERION, DISTRIBUTION), min_size=1, max_size=2)
BENIGN = st.sets(st.sampled_from(SENSITIVE), min_size=1, max_size=3).map(frozenset)


def _minimal(result: Any) -> list[tuple[int, ...]]:
    return sorted(tuple(m["levels"].values()) for m in result.manifest.details["minimal_nodes"])


def _recheck(result: Any, sensitive: str, criteria: Criteria, benign: frozenset[str]) -> None:
    b = Bucketization.from_arrow(
        result.release, ReleaseSpec(sensitive, tuple(result.group_columns))
    ).with_benign(benign)
    for name, params in criteria:
        assert evaluate(b, name, params).safe, (name, params)


# ---------------------------------------------------------------- random problems
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    p=st.one_of(problems(), problems(min_qis=2, min_levels=2, min_values=2)),
    criteria=CRITERIA,
    benign=BENIGN,
    fraction=st.sampled_from([0.0, 0.0, 0.2]),
)
def test_lattice_with_benign_finds_exactly_the_minimal_nodes(
    p: Problem, criteria: Criteria, benign: frozenset[str], fraction: float
) -> None:
    if any(name in TABLE_DISTRIBUTION for name, _ in criteria):
        # the oracle judges a suppressed group on its own release, where beta-likeness and
        # delta-disclosure compare it with itself: the suppression oracle covers the others
        fraction = 0.0
    budget = math.floor(fraction * len(p.rows))
    expected = exhaustive_minimal(p, criteria, budget, benign)
    try:
        result = anonymize(p.table, p.qis, "s", "lattice", criteria, p.hierarchies,
                           benign=benign, suppression_limit=fraction)  # fmt: skip
    except InputError as exc:
        assert expected == [], f"search found nothing but {expected} pass: {exc}"
        return
    assert _minimal(result) == expected
    assert result.manifest.benign == tuple(sorted(benign))
    assert result.manifest.to_dict()["benign"] == sorted(benign)
    _recheck(result, "s", criteria, benign)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    p=st.one_of(problems(), problems(min_qis=2, min_levels=2, min_values=2)),
    criteria=CRITERIA,
    benign=BENIGN,
)
def test_more_benign_values_never_need_more_generalization(
    p: Problem, criteria: Criteria, benign: frozenset[str]
) -> None:
    without = exhaustive_minimal(p, criteria)
    with_benign = exhaustive_minimal(p, criteria, 0, benign)
    for node in without:
        assert any(all(a <= b for a, b in zip(m, node, strict=True)) for m in with_benign)


@pytest.mark.parametrize("method", ["mondrian", "bucketize"])
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_rows=24), criteria=CRITERIA, benign=BENIGN)
def test_mondrian_and_bucketize_releases_pass_the_recheck_with_benign(
    method: str, p: Problem, criteria: Criteria, benign: frozenset[str]
) -> None:
    try:
        result = anonymize(p.table, p.qis, "s", method, criteria, p.hierarchies,  # type: ignore[arg-type]
                           benign=benign)  # fmt: skip
    except InputError as exc:
        # only when even the whole table fails (as one group, or as one bucket)
        whole = Bucketization.from_counts(
            [("all", s, sum(1 for r in p.rows if r["s"] == s)) for s in {r["s"] for r in p.rows}],
            ["g"], "s",
        ).with_benign(benign)  # fmt: skip
        assert not all(evaluate(whole, n, q).safe for n, q in criteria), exc
        return
    _recheck(result, "s", criteria, benign)
    for r in result.manifest.criteria_results:
        assert r.safe
    assert result.bucketization.benign == benign


def test_benign_must_be_a_list() -> None:
    p = pa.table({"q": ["a", "b"], "s": ["x", "y"]})
    with pytest.raises(InputError, match="benign must be a list"):
        anonymize(p, ["q"], "s", "mondrian", [("k-anonymity", {"k": 1})], benign="none")


# ------------------------------------------------------------------- Fair (1978)
def _affairs(raw: str) -> str:
    x = float(raw)
    return "none" if x == 0 else ("low" if x <= 1 else "high")


def _kept(raw: str) -> str:
    x = float(raw)
    return str(int(x)) if x.is_integer() else str(x)


@cache
def fair() -> tuple[pa.Table, dict[str, Hierarchy]]:
    with FAIR.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    table = pa.table(
        {**{q: [_kept(r[q]) for r in rows] for q in FAIR_QIS},
         "affairs": [_affairs(r["affairs"]) for r in rows]}
    )  # fmt: skip
    widths = {"age": [10, 20], "yrs_married": [5, 10], "children": [2, 4], "religious": [2]}
    h = {
        q: Hierarchy.intervals(q, sorted(set(table.column(q).to_pylist()), key=float), w)
        for q, w in widths.items()
    }
    return table, h


def _loss(result: Any) -> float:
    return float(result.manifest.utility["loss"])


@pytest.mark.parametrize("method", ["lattice", "mondrian"])
def test_fair_negation_safety_with_none_benign_is_less_generalized(method: str) -> None:
    table, h = fair()
    criteria: Criteria = [("negation-safety", {"c": 0.85, "k": 1})]
    plain = anonymize(table, FAIR_QIS, "affairs", method, criteria, h)  # type: ignore[arg-type]
    light = anonymize(table, FAIR_QIS, "affairs", method, criteria, h,  # type: ignore[arg-type]
                      benign=["none"])  # fmt: skip
    assert _loss(light) < _loss(plain)
    assert light.manifest.groups > plain.manifest.groups
    if method == "lattice":
        before = plain.manifest.details["levels"]
        after = light.manifest.details["levels"]
        assert all(after[q] <= before[q] for q in FAIR_QIS)
    _recheck(light, "affairs", criteria, frozenset({"none"}))
    # the benign declaration is what makes it pass: without it the check refuses it
    b = Bucketization.from_arrow(light.release, ReleaseSpec("affairs", tuple(light.group_columns)))
    assert not evaluate(b, *criteria[0]).safe
    (result,) = light.manifest.to_dict()["criteria_results"]
    assert result["parameters"]["benign"] == ["none"] and result["safe"]


@pytest.mark.parametrize(
    "criteria",
    [[("alpha-k-anonymity", {"alpha": 0.6, "k": 5})], [("ck-safety", {"c": 0.8, "k": 1})]],
    ids=["alpha-k", "ck-safety"],
)
def test_fair_criteria_only_a_benign_none_makes_satisfiable(criteria: Criteria) -> None:
    table, h = fair()
    with pytest.raises(InputError, match="no generalization passes"):
        anonymize(table, FAIR_QIS, "affairs", "lattice", criteria, h)
    result = anonymize(table, FAIR_QIS, "affairs", "lattice", criteria, h, benign=["none"])
    _recheck(result, "affairs", criteria, frozenset({"none"}))
    assert result.manifest.benign == ("none",)
