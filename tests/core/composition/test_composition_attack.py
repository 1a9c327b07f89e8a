"""The intersection attack against the paper's Table 1, the definitions (Algorithm 1,
Definitions 6-9) and an exhaustive possible-worlds oracle (tests/composition_oracle.py)."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.composition import (
    CompositionResult,
    Population,
    PublishedRelease,
    composition_audit,
    gate,
    hash_identifiers,
)
from airflow_privacy.errors import InputError
from tests.composition_oracle import OGroup, OScenario, algorithm1, located_groups, posterior
from tests.core.composition.scenarios import (
    KEY,
    QIS,
    TABLE_1B,
    engine_on,
    fits,
    hospitals,
    model_scenarios,
    populations,
    release_cuts,
    table,
)


def test_table1_alice_has_aids() -> None:
    h1, h2 = hospitals()
    assert (h1.n_groups, h2.n_groups) == (3, 2)
    alice = Population.from_records([{"zip": "13012", "age": 28, "nationality": "any"}], QIS)
    res = composition_audit(alice, h1, [h2])
    # Alice matches 4 records of H1 and 6 of H2; only AIDS is in both
    assert [r.avg_group_size for r in res.releases] == [4.0, 6.0]
    assert res.ea.tolist() == [[3, 4]]  # {AIDS, Heart Disease, Viral Infection}, 4 diseases
    assert res.ea_hat.tolist() == [1]
    assert res.anon_drop.tolist() == [2]  # min(3, 4) - 1
    assert res.confidence.tolist() == [1.0]
    assert res.intersections[0].tolist() == [v == "AIDS" for v in res.values]
    assert res.posterior.tolist() == [1.0]
    assert res.values[int(res.posterior_value[0])] == "AIDS"
    assert (res.overlap_size, res.vp, res.vp_c(1.0), res.pvp_c(1.0)) == (1, 1, 1, 100.0)
    worst = res.worst[0]
    assert worst.intersection == ["AIDS"]
    assert [r["groups"] for r in worst.releases] == [
        ["zip=130**, age=<30, nationality=*"],
        ["zip=130**, age=<35, nationality=*"],
    ]
    verdict = gate(res)
    assert not verdict.safe and verdict.value == 100.0
    # the reason names the row, how many values are left and the published groups, and
    # never the value left nor Alice's QI values (13012, 28)
    assert "row 0: 1 value left (confidence 100%" in verdict.reason
    assert "H1 group 'zip=130**, age=<30, nationality=*'" in verdict.reason
    assert "H2 group 'zip=130**, age=<35, nationality=*'" in verdict.reason
    assert "AIDS" not in verdict.reason and "13012" not in verdict.reason


def test_table1_other_patients() -> None:
    h1, h2 = hospitals()
    people = [
        {"zip": "13012", "age": 28, "nationality": "x"},  # Alice: AIDS, drop 2
        {"zip": "13053", "age": 36, "nationality": "x"},  # 3* -> {Cancer} alone: drop 0, C=1
        {"zip": "13068", "age": 45, "nationality": "x"},  # >=40 and >=35: {Heart?} no
        {"zip": "13068", "age": 31, "nationality": "x"},  # 3* and <35: {Cancer}
        {"zip": "14850", "age": 28, "nationality": "x"},  # zip not 130**: unlocatable
    ]
    res = composition_audit(Population.from_records(people, QIS), h1, [h2])
    # person 2: {Cancer, Heart Disease, Viral Infection} ∩ {Cancer, Tuberculosis, Viral Infection}
    assert res.ea.tolist()[:4] == [[3, 4], [1, 3], [3, 3], [1, 4]]
    assert res.ea_hat.tolist()[:4] == [1, 1, 2, 1]
    assert res.anon_drop.tolist()[:4] == [2, 0, 1, 0]
    assert res.overlap_size == 4 and res.vp == 2
    assert res.vp_c(1.0) == 3 and res.pvp_c(1.0) == 75.0
    assert res.vp_c(0.5) == 4
    # from H1 alone, only the homogeneous '3*' group pins people down
    assert res.vp_c(1.0, alone=True) == 2 and res.vp_c(1.0, "posterior", alone=True) == 2
    assert res.unlocatable == [
        {"row": 4, "reason": "zip='14850' is covered by no published zip label"}
    ]
    assert res.releases[0].unlocatable == 1
    assert res.averages["anon_drop"] == pytest.approx(3 / 4)


def test_gate_threshold_and_measure() -> None:
    h1, h2 = hospitals()
    people = [{"zip": "13068", "age": 45, "nationality": "x"}]  # {Cancer, VI}: C = 1/2
    res = composition_audit(Population.from_records(people, QIS), h1, [h2])
    assert gate(res).safe  # no perfect breach
    assert not gate(res, confidence=0.5).safe
    assert gate(res, confidence=0.5, max_pvp=100).safe
    # posterior: H1 {Cancer 1, VI 2}, H2 {Cancer 3, VI 2} -> Cancer 3/7, VI 4/7
    assert res.posterior[0] == pytest.approx(4 / 7, abs=1e-12)
    assert gate(res, confidence=0.55, measure="posterior").safe is False
    assert gate(res, confidence=0.55).safe is True
    with pytest.raises(InputError, match="confidence"):
        gate(res, confidence=0)
    with pytest.raises(InputError, match="percentage"):
        gate(res, max_pvp=101)


def test_bad_input_different_sensitive_and_missing_qi() -> None:
    h1, h2 = hospitals()
    other = PublishedRelease.from_arrow(
        table(TABLE_1B).rename_columns([*QIS, "diagnosis"]), QIS, "diagnosis", name="H3"
    )
    alice = Population.from_records([{"zip": "13012", "age": 28, "nationality": "x"}], QIS)
    with pytest.raises(InputError, match=r"sensitive attribute 'diagnosis'.*'condition'"):
        composition_audit(alice, h1, [other])
    fewer = PublishedRelease.from_arrow(table(TABLE_1B), ("zip", "age"), "condition", name="H4")
    with pytest.raises(
        InputError, match="QI 'nationality' of the candidate is missing from release 'H4'"
    ):
        composition_audit(alice, h1, [fewer])
    res = composition_audit(alice, h1, [fewer], missing_qi="suppressed")
    assert res.ea_hat.tolist() == [1]
    nozip = Population.from_records([{"age": 28, "nationality": "x"}], ("age", "nationality"))
    with pytest.raises(
        InputError, match="QI 'zip' of release 'H1' is not a column of the population"
    ):
        composition_audit(nozip, h1, [h2])
    with pytest.raises(InputError, match="identifier hashes"):
        composition_audit(alice, h1, [h2], overlap="known")


# --------------------------------------------------------- scenarios -> engine inputs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_scenarios())
def test_engine_matches_possible_worlds_when_the_model_holds(
    case: tuple[OScenario, list[list[str]]],
) -> None:
    s, labels = case
    res, people = engine_on(s, labels)
    row = people.index(0)
    exact = posterior(s, 0)
    engine_set = {v for v, ok in zip(res.values, res.intersections[row], strict=True) if ok}  # type: ignore[attr-defined]
    assert engine_set == set(exact)  # S_i is exactly the set of possible values
    assert res.posterior[row] == pytest.approx(float(max(exact.values())), abs=1e-9)  # type: ignore[attr-defined]
    best = res.values[int(res.posterior_value[row])]  # type: ignore[attr-defined]
    assert exact[best] == max(exact.values())
    # Ganta's confidence never exceeds the posterior
    assert res.confidence[row] <= res.posterior[row] + 1e-12  # type: ignore[attr-defined]
    d = algorithm1(s, s.qis[0], [True] * len(s.releases))
    assert d is not None
    assert res.ea_hat[row] == d.ea_hat and res.anon_drop[row] == d.anon_drop  # type: ignore[attr-defined]
    assert res.confidence[row] == pytest.approx(float(d.confidence), abs=1e-12)  # type: ignore[attr-defined]
    assert [int(x) for x in res.ea[row]] == [d.ea[j] for j in range(len(s.releases))]  # type: ignore[attr-defined]


@st.composite
def shared_scenarios(draw: st.DrawFn) -> tuple[OScenario, list[list[str]]]:
    """Several people shared between releases (group-mates may meet again)."""
    n_people = draw(st.integers(3, 6))
    domain = ["a", "b", "c"][: draw(st.integers(2, 3))]
    ages = draw(st.lists(st.integers(20, 40), min_size=n_people, max_size=n_people, unique=True))
    values = [draw(st.sampled_from(domain)) for _ in range(n_people)]
    releases, labels = [], []
    for _ in range(draw(st.integers(2, 3))):
        present = draw(st.sets(st.integers(0, n_people - 1), min_size=2, max_size=n_people))
        groups, labs = draw(release_cuts([(p, ages[p]) for p in sorted(present)]))
        releases.append(tuple(groups))
        labels.append(labs)
    s = OScenario(tuple((str(a),) for a in ages), tuple(values), tuple(releases))
    return s, labels


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shared_scenarios())
def test_intersection_is_a_sound_superset_and_follows_algorithm1(
    case: tuple[OScenario, list[list[str]]],
) -> None:
    s, labels = case
    res, people = engine_on(s, labels)
    for row, p in enumerate(people):
        present = [p in s.people(j) for j in range(len(s.releases))]
        d = algorithm1(s, s.qis[p], present)
        assert bool(res.in_overlap[row]) == (d is not None)  # type: ignore[attr-defined]
        if d is None:
            continue
        engine_set = {v for v, ok in zip(res.values, res.intersections[row], strict=True) if ok}  # type: ignore[attr-defined]
        assert engine_set == set(d.intersection)
        assert res.ea_hat[row] == d.ea_hat and res.anon_drop[row] == d.anon_drop  # type: ignore[attr-defined]
        # everything still possible in some world survives the intersection
        assert set(posterior(s, p)) <= engine_set
        assert s.values[p] in engine_set


def test_co_membership_makes_the_posterior_an_approximation() -> None:
    """Two people share both groups: the enumerator knows more than the product formula.

    R0 = {p0, p1} with {a, b}; R1 = {p0, p1} with {a, b}. The product formula gives
    p0 = a with 1/2 (1/2 * 1/2 normalized), and so do the worlds (p0=a,p1=b or p0=b,p1=a):
    equal here. With a third value the sharing matters: R0 = {p0,p1,p2} {a,a,b},
    R1 = {p0,p1} {a,b}: the product says Pr(p0 = a) = (2/3 * 1/2) / (2/3 * 1/2 + 1/3 * 1/2)
    = 2/3; the worlds say 1/2 (p1 and p0 split {a, b}, p2 then has a).
    """
    g0 = OGroup((0, 1, 2), fits=fits(20, 40))
    g1 = OGroup((0, 1), fits=fits(20, 30))
    s = OScenario((("20",), ("30",), ("40",)), ("a", "b", "a"), ((g0,), (g1,)))
    assert posterior(s, 0) == {"a": Fraction(1, 2), "b": Fraction(1, 2)}
    res, people = engine_on(s, [["20-40"], ["20-30"]])
    assert res.posterior[people.index(0)] == pytest.approx(2 / 3)  # type: ignore[attr-defined]


def test_bucketized_duplicate_qis_posterior_is_exact() -> None:
    """Anatomy-style release where the target's exact QI tuple is in two buckets (with an
    indistinguishable person): the target is each of the three matching records with equal
    chance, as in the possible worlds."""
    # people: 0 = target (QI 'x'), 1 and 2 share 'x' in release 0 only; 3, 4 other QIs
    qis = (("x",), ("x",), ("x",), ("y",), ("z",), ("w",), ("v",))
    values = ("a", "b", "a", "b", "a", "b", "a")
    r0 = (OGroup((0, 1, 3), bucket=True), OGroup((2, 4), bucket=True))
    r1 = (OGroup((0, 5, 6), bucket=True),)
    s = OScenario(qis, values, (r0, r1))
    exact = posterior(s, 0)

    def bucketized(j: int, name: str) -> PublishedRelease:
        groups = s.releases[j]
        return PublishedRelease.from_groups(
            ("q",),
            "s",
            [((str(g),), dict(s.multiset(j, g))) for g in range(len(groups))],
            kind="bucketized",
            members=[
                sorted(
                    (s.qis[m], sum(1 for x in grp.members if s.qis[x] == s.qis[m]))
                    for m in {s.qis[m]: m for m in grp.members}.values()
                )
                for grp in groups
            ],
            name=name,
        )

    r0p, r1p = bucketized(0, "R0"), bucketized(1, "R1")
    pop = Population({"q": ("x",)}, 1)
    res = composition_audit(pop, r0p, [r1p])
    assert res.releases[0].ambiguous == 1
    assert res.posterior[0] == pytest.approx(float(max(exact.values())), abs=1e-9)
    assert res.values[int(res.posterior_value[0])] == max(exact, key=lambda v: exact[v])


# ----------------------------------------------- whole populations vs the definitions


@settings(max_examples=80, deadline=None)
@given(populations())
def test_totals_follow_the_definitions(case: tuple[OScenario, list[list[str]], str]) -> None:
    s, labels, overlap = case
    res, people = engine_on(s, labels, overlap)
    n_rel = len(s.releases)
    in_p, ea_hat, drops, confs = [], [], [], []
    for row, p in enumerate(people):
        locatable = [bool(located_groups(s, j, s.qis[p])) for j in range(n_rel)]
        if overlap == "known":  # in the release (identifier hashes) and locatable there
            present = [p in s.people(j) and locatable[j] for j in range(n_rel)]
        else:  # worst case: present wherever locatable
            present = locatable
        d = algorithm1(s, s.qis[p], present)
        in_p.append(d is not None)
        assert bool(res.in_overlap[row]) == (d is not None)  # type: ignore[attr-defined]
        if d is not None:
            assert int(res.ea_hat[row]) == d.ea_hat  # type: ignore[attr-defined]
            assert int(res.anon_drop[row]) == d.anon_drop  # type: ignore[attr-defined]
            assert [int(res.ea[row][j]) for j in d.used] == [d.ea[j] for j in d.used]  # type: ignore[attr-defined]
            ea_hat.append(d.ea_hat)
            drops.append(d.anon_drop)
            confs.append(d.confidence)
    size = sum(in_p)
    assert res.overlap_size == size  # type: ignore[attr-defined]
    assert res.vp == sum(1 for x in drops if x > 0)  # type: ignore[attr-defined]
    for c in (1.0, 0.5, 1 / 3, 0.25, 0.3):
        vp_c = sum(1 for x in confs if x >= Fraction(c).limit_denominator(1000))
        assert res.vp_c(c) == vp_c  # type: ignore[attr-defined]
        assert res.pvp_c(c) == pytest.approx(100 * vp_c / size if size else 0.0, abs=1e-9)  # type: ignore[attr-defined]
    if size:
        assert res.averages["anon_drop"] == pytest.approx(sum(drops) / size, abs=1e-9)  # type: ignore[attr-defined]
        assert res.averages["posterior_ea"] == pytest.approx(sum(ea_hat) / size, abs=1e-9)  # type: ignore[attr-defined]


def test_worst_case_assumes_locatable_people_present_and_resolves_contradictions() -> None:
    # candidate: one group {a, b}; prior 1: the person's group is {a}; prior 2: {b}
    cand = PublishedRelease.from_groups(("age",), "s", [(("20-29",), {"a": 1, "b": 1})], name="C")
    p1 = PublishedRelease.from_groups(("age",), "s", [(("20-24",), {"a": 2})], name="P1")
    p2 = PublishedRelease.from_groups(("age",), "s", [(("<30",), {"b": 3})], name="P2")
    pop = Population({"age": ("22", "27")}, 2)
    res = composition_audit(pop, cand, [p1, p2])
    # person 0 is locatable everywhere; {a,b} ∩ {a} ∩ {b} is empty: not in every release.
    # Worst case: the adversary picks a consistent subset; both {C,P1} and {C,P2} pin it.
    assert res.inconsistent == 1 and res.inconsistent_dropped == 0
    assert res.ea_hat.tolist() == [1, 1]
    assert res.used[0].tolist() in ([True, True, False], [True, False, True])
    # person 1 (27): not in P1's 20-24, only C and P2 -> {b}
    assert res.used[1].tolist() == [True, False, True]
    assert res.vp_c(1.0) == 2


def test_known_overlap_uses_hashes_and_reports_present_but_unlocatable() -> None:
    cand = PublishedRelease.from_groups(("age",), "s", [(("20-29",), {"a": 1, "b": 1})], name="C")
    prior = PublishedRelease.from_groups(("age",), "s", [(("20-24",), {"a": 2})], name="P")
    ids = hash_identifiers(["alice", "bob"], KEY)
    pop = Population({"age": ("22", "27")}, 2, id_hashes=tuple(ids))
    # alice is not in the prior (despite being locatable there); bob is, but unlocatable
    res = composition_audit(
        pop, cand, [prior], overlap="known", prior_members=[frozenset([ids[1]])]
    )
    assert res.overlap_size == 0 and res.candidate_only == 2
    assert res.releases[1].present == 1 and res.releases[1].present_unlocatable == 1
    assert gate(res).safe and "nothing to intersect" in gate(res).reason
    worst = composition_audit(pop, cand, [prior])
    assert worst.overlap_size == 1 and worst.vp_c(1.0) == 1
    with pytest.raises(InputError, match="release 'P' has no identifier hashes"):
        composition_audit(pop, cand, [prior], overlap="known", prior_members=[None])


def test_individuals_table_and_json() -> None:
    h1, h2 = hospitals()
    alice = Population.from_records([{"zip": "13012", "age": 28, "nationality": "x"}], QIS)
    res = composition_audit(alice, h1, [h2])
    t = res.individuals_table().to_pylist()
    assert t[0]["ea[H1]"] == 3 and t[0]["ea[H2]"] == 4 and t[0]["intersection"] == "AIDS"
    assert t[0]["most_likely"] == "AIDS" and t[0]["releases"] == "H1; H2"
    import json

    data = json.loads(json.dumps(res.to_dict()))
    assert data["pvp"][0] == {
        "confidence": 1.0,
        "vp": 1,
        "pvp": 100.0,
        "posterior_vp": 1,
        "posterior_pvp": 100.0,
        "alone_pvp": 0.0,  # H1 alone: {AIDS, Heart Disease, Viral Infection}
        "alone_posterior_pvp": 0.0,
    }


def test_random_large_population_is_consistent_and_fast() -> None:
    rng = random.Random(7)
    n = 3000
    ages = [rng.randint(17, 90) for _ in range(n)]
    sexes = [rng.choice("MF") for _ in range(n)]
    vals = [rng.choice("abcdefghij") for _ in range(n)]

    def release(offset: int, width: int, name: str) -> PublishedRelease:
        labels = []
        for a, sx in zip(ages, sexes, strict=True):
            lo = (a - offset) // width * width + offset
            labels.append((f"{lo}-{lo + width - 1}", sx if width < 8 else "*"))
        t = pa.table({"age": [x for x, _ in labels], "sex": [y for _, y in labels], "s": vals})
        return PublishedRelease.from_arrow(t, ("age", "sex"), "s", name=name)

    pop = Population({"age": tuple(map(str, ages)), "sex": tuple(sexes)}, n)
    res = composition_audit(pop, release(0, 5, "A"), [release(2, 7, "B"), release(3, 10, "C")])
    assert res.overlap_size == n and res.inconsistent == 0
    assert (res.ea_hat >= 1).all() and (res.anon_drop >= 0).all()
    assert ((res.confidence <= res.posterior + 1e-12) | ~res.in_overlap).all()


def test_table1_counts_matter_enumerated() -> None:
    """A 45-year-old in both hospitals of Table 1: S = {Cancer, Viral Infection}, C = 1/2, but
    the possible worlds (H1's >=40 group and H2's >=35 group, other patients distinct) give
    Viral Infection 4/7, as the engine's posterior does."""
    # person 0: the target (45, true value Viral Infection); 1-3 the rest of H1's group,
    # 4-8 the rest of H2's group
    values = ("Viral Infection", "Cancer", "Heart Disease", "Viral Infection",
              "Cancer", "Cancer", "Cancer", "Tuberculosis", "Viral Infection")  # fmt: skip
    ages = ("45", "41", "50", "60", "36", "38", "39", "52", "70")
    h1 = (OGroup((0, 1, 2, 3), fits=lambda q: int(q[0]) >= 40),)
    h2 = (OGroup((0, 4, 5, 6, 7, 8), fits=lambda q: int(q[0]) >= 35),)
    s = OScenario(tuple((a,) for a in ages), values, (h1, h2))
    assert posterior(s, 0) == {"Viral Infection": Fraction(4, 7), "Cancer": Fraction(3, 7)}
    h1r, h2r = hospitals()
    pop = Population.from_records([{"zip": "13068", "age": 45, "nationality": "x"}], QIS)
    res = composition_audit(pop, h1r, [h2r])
    assert res.confidence[0] == 0.5
    assert res.posterior[0] == pytest.approx(4 / 7, abs=1e-9)
    assert res.values[int(res.posterior_value[0])] == "Viral Infection"


# ------------------------------------------------------------ verdicts at the threshold
def other_patients() -> tuple[Population, list[dict[str, object]]]:
    people: list[dict[str, object]] = [
        {"zip": "13012", "age": 28, "nationality": "x"},  # {AIDS}: C = 1
        {"zip": "13053", "age": 36, "nationality": "x"},  # {Cancer}: C = 1
        {"zip": "13068", "age": 45, "nationality": "x"},  # {Cancer, VI}: C = 1/2
        {"zip": "13068", "age": 31, "nationality": "x"},  # {Cancer}: C = 1
        {"zip": "14850", "age": 28, "nationality": "x"},  # unlocatable
    ]
    return Population.from_records(people, QIS), people


def test_gate_pvp_exactly_at_the_limit() -> None:
    """PVP_C = 100 |VP_C| / |P| is an exact fraction compared with the decimal limit:
    equal passes (PVP <= limit), one ulp of the limit below fails."""
    h1, h2 = hospitals()
    pop, _ = other_patients()
    res = composition_audit(pop, h1, [h2])
    assert res.pvp_exact(1.0) == Fraction(100 * 3, 4)  # 3 of 4 pinned
    ok = gate(res, 1.0, max_pvp=75)
    assert ok.safe and ok.details["pvp_exact"] == "75/1"
    assert ok.details["tolerance"] == 1e-9 and ok.details["decision"] == "exact"
    assert not gate(res, 1.0, max_pvp=math.nextafter(75.0, 0.0)).safe
    # three people, one pinned: PVP = 100/3, not a float
    three = Population.from_records(
        [
            {"zip": "13012", "age": 28, "nationality": "x"},
            {"zip": "13068", "age": 45, "nationality": "x"},
            {"zip": "13068", "age": 46, "nationality": "x"},
        ],
        QIS,
    )
    res3 = composition_audit(three, h1, [h2])
    assert res3.pvp_exact(1.0) == Fraction(100, 3)
    assert Fraction(repr(33.33333333333333)) < Fraction(100, 3) < Fraction(repr(100 / 3))
    assert gate(res3, 1.0, max_pvp=100 / 3).safe  # typed 33.333333333333336 >= 100/3
    assert not gate(res3, 1.0, max_pvp=33.33333333333333).safe  # typed below 100/3


def test_confidence_exactly_c_counts_as_pinned() -> None:
    """C_i = 1 / EA-hat is compared exactly with the decimal confidence: C_i = c is in VP_C."""
    h1, h2 = hospitals()
    pop, _ = other_patients()
    res = composition_audit(pop, h1, [h2])
    assert res.ea_hat.tolist()[:4] == [1, 1, 2, 1]
    assert res.vp_c(0.5) == 4 and res.vp_c(math.nextafter(0.5, 1.0)) == 3
    # from H1 alone Alice has EA 3: C = 1/3; c = 1/3 is typed 0.3333333333333333 < 1/3
    assert int(res.ea[0, 0]) == 3
    with_three = sum(1 for i in range(pop.n) if res.in_overlap[i] and int(res.ea[i, 0]) == 3)
    alone_third = res.vp_c(1 / 3, alone=True)
    assert alone_third == res.vp_c(0.3333333333333333, alone=True)
    assert with_three >= 1
    assert alone_third == with_three + res.vp_c(0.33333333333333337, alone=True)


def test_posterior_measure_counts_the_tolerance_band_as_pinned() -> None:
    h1, h2 = hospitals()
    people = [{"zip": "13068", "age": 45, "nationality": "x"}]
    res = composition_audit(Population.from_records(people, QIS), h1, [h2])
    exact = Fraction(4, 7)  # H1 {Cancer 1, VI 2}, H2 {Cancer 3, VI 2}: VI 2*2 / (1*3 + 2*2)
    assert abs(res.posterior[0] - float(exact)) < 1e-15
    for c, pinned in [
        (float(exact), True),
        (math.nextafter(float(exact), 1.0), True),  # above the float, inside the band
        (float(exact) + 0.5e-9, True),
        (float(exact) + 2e-9, False),
    ]:
        assert res.vp_c(c, "posterior") == int(pinned), c
        assert gate(res, c, measure="posterior").safe is not pinned
    assert gate(res, 0.55, measure="posterior").details["decision"] == "float"


# ------------------------------------------------------------------- redaction
def test_gate_reason_and_witness_are_pseudonymous() -> None:
    h1, h2 = hospitals()
    pop, people = other_patients()
    res = composition_audit(pop, h1, [h2])
    verdict = gate(res)
    assert not verdict.safe
    text = json.dumps(verdict.to_dict())
    for v in res.values:  # no sensitive value at all: not the one left, not the groups'
        assert v not in text, v
    for p in people:
        assert f"'{p['zip']}'" not in text and f'"{p["zip"]}"' not in text
    w = verdict.witness
    assert w is not None
    assert set(w) == {"row", "confidence", "posterior", "ea_hat", "anon_drop", "releases"}
    assert w["row"] == 0 and w["ea_hat"] == 1 and w["confidence"] == 1.0
    assert w["releases"] == [
        {"release": "H1", "groups": ["zip=130**, age=<30, nationality=*"], "ea": 3},
        {"release": "H2", "groups": ["zip=130**, age=<35, nationality=*"], "ea": 4},
    ]
    assert "row 0: 1 value left (confidence 100%, posterior 100%)" in verdict.reason
    # the confidential forms still hold what the public ones leave out
    assert res.worst[0].intersection == ["AIDS"] and "AIDS" in res.worst[0].describe()


def test_public_audit_dict_has_no_values_nor_qi_values() -> None:
    h1, h2 = hospitals()
    pop, people = other_patients()
    res = composition_audit(pop, h1, [h2])
    full = json.dumps(res.to_dict())
    public = json.dumps(res.to_dict(redacted=True))
    assert "AIDS" in full and "14850" in full  # the confidential form has them ...
    for v in res.values:  # ... the public one has no sensitive value
        assert v not in public, v
    for p in people:
        assert str(p["zip"]) not in public
    for key in ('"qis"', '"intersection"', '"most_likely"', '"values"'):
        assert key not in public
    data = res.to_dict(redacted=True)
    assert data["redacted"] is True and data["unlocatable"] == [{"row": 4}]
    assert [w["row"] for w in data["worst"]] == [b.row for b in res.worst]
    assert all(set(w) == set(res.worst[0].public_dict()) for w in data["worst"])
    for b in res.worst:
        text = b.describe_public()
        assert all(v not in text for v in res.values) and f"row {b.row}:" in text


def test_public_dict_is_the_redacted_form() -> None:
    h1, h2 = hospitals()
    pop, _ = other_patients()
    res = composition_audit(pop, h1, [h2])
    assert res.public_dict() == res.to_dict(redacted=True)
    assert res.to_dict()["redacted"] is False


# --------------------------------------- one attack per group of identical people


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    overlap=st.sampled_from(["known", "worst-case"]),
    top=st.sampled_from([0, 1, 3, 10, 1000]),
    rank=st.sampled_from(["ganta", "posterior"]),
)
def test_grouping_identical_people_changes_nothing(
    seed: int, overlap: str, top: int, rank: str
) -> None:
    """The attack runs once per group of people with the same QI values (and releases, when
    the overlap is known), weighted by the group's size. Its result must equal the attack run
    person by person (the grouping replaced by one group per person): every per-person array,
    every total and average, the releases' summaries, the unlocatable examples and the
    ``top`` worst people with their ties broken by row."""
    import airflow_privacy.core.composition.attack as attack_mod

    rng = random.Random(seed)
    n = rng.randint(5, 80)
    ages = [rng.randint(20, 29) for _ in range(n)]  # few distinct values: many duplicates
    sexes = [rng.choice("MF") for _ in range(n)]
    ids = [f"id{i}" for i in range(n)]

    def release(
        offset: int, width: int, name: str, share: float
    ) -> tuple[PublishedRelease, list[int]]:
        rows = [i for i in range(n) if rng.random() < share] or [0]
        labels = []
        for i in rows:
            lo = (ages[i] - offset) // width * width + offset
            labels.append((f"{lo}-{lo + width - 1}", sexes[i] if width < 4 else "*"))
        vals = [rng.choice("abcd") for _ in rows]
        t = pa.table({"age": [x for x, _ in labels], "sex": [y for _, y in labels], "s": vals})
        return PublishedRelease.from_arrow(t, ("age", "sex"), "s", name=name), rows

    cand, _ = release(0, 2, "A", 1.0)
    priors = [release(1, 3, "B", 0.6), release(0, 5, "C", 0.5)]
    pop = Population({"age": tuple(map(str, ages)), "sex": tuple(sexes)}, n, id_hashes=tuple(ids))
    members = [frozenset(ids[i] for i in rows) for _, rows in priors]

    def run() -> CompositionResult:
        return composition_audit(
            pop, cand, [p for p, _ in priors], overlap=overlap,  # type: ignore[arg-type]
            prior_members=members, top=top, rank=rank,  # type: ignore[arg-type]
        )  # fmt: skip

    grouped = run()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            attack_mod, "_group_people",
            lambda population, columns, known: (np.arange(population.n), np.arange(population.n)),
        )  # fmt: skip
        alone = run()
    for name in ("in_overlap", "used", "ea", "ea_hat", "anon_drop", "confidence", "posterior",
                 "posterior_value", "posterior_alone", "intersections", "sensitive_left",
                 "sensitive_left_alone"):  # fmt: skip
        np.testing.assert_array_equal(getattr(grouped, name), getattr(alone, name), err_msg=name)
    for name in ("population", "overlap_size", "candidate_only", "inconsistent",
                 "inconsistent_dropped", "vp", "unlocatable", "worst", "values"):  # fmt: skip
        assert getattr(grouped, name) == getattr(alone, name), name
    import dataclasses

    for a, b in zip(grouped.releases, alone.releases, strict=True):
        da, db = dataclasses.asdict(a), dataclasses.asdict(b)
        for key, value in db.items():
            if isinstance(value, float):
                assert da[key] == pytest.approx(value, rel=1e-12), key
            else:
                assert da[key] == value, key
    for key, value in alone.averages.items():
        if isinstance(value, dict):
            assert grouped.averages[key].keys() == value.keys(), key
            for k, v in value.items():
                want = None if v is None else pytest.approx(v, rel=1e-12)
                assert grouped.averages[key][k] == want, (key, k)
        else:
            want = None if value is None else pytest.approx(value, rel=1e-12)
            assert grouped.averages[key] == want, key
