"""Privacy-MaxEnt (Du et al. 2008) on the paper's own examples, checked from the definitions
(tests/maxent_oracle.py) and with exact fractions where the answer is rational."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest

from airflow_privacy.core.maxent import (
    Bound,
    BucketRelease,
    DistributionFact,
    IndividualFact,
    Knowledge,
    Person,
    Source,
    estimate,
)
from airflow_privacy.core.maxent.constraints import QI_ROW, SA_ROW, ConstraintSystem, build_system
from airflow_privacy.core.maxent.solver import SolverOptions, solve
from tests import maxent_oracle as oracle
from tests.maxent_engine import joint_vector, pseudonym_vector

# Figure 1(a)/(b): name, gender, degree, disease, bucket
FIG1 = [
    ("Allen", "male", "college", "Flu", 1),
    ("Brian", "male", "college", "Pneumonia", 1),
    ("Cathy", "female", "college", "Breast Cancer", 1),
    ("David", "male", "high school", "Flu", 1),
    ("Ethan", "male", "college", "HIV", 2),
    ("Frank", "male", "high school", "Pneumonia", 2),
    ("Grace", "female", "junior", "Breast Cancer", 2),
    ("Helen", "female", "college", "HIV", 3),
    ("Iris", "female", "graduate", "Lung Cancer", 3),
    ("James", "male", "graduate", "Flu", 3),
]
# Figure 1(c): q1 = male college, q2 = female college, q3 = male high school,
# q4 = female junior, q5 = female graduate, q6 = male graduate;
# s1 = Breast Cancer, s2 = Flu, s3 = Pneumonia, s4 = HIV, s5 = Lung Cancer
Q = {
    ("male", "college"): "q1",
    ("female", "college"): "q2",
    ("male", "high school"): "q3",
    ("female", "junior"): "q4",
    ("female", "graduate"): "q5",
    ("male", "graduate"): "q6",
}
S = {"Breast Cancer": "s1", "Flu": "s2", "Pneumonia": "s3", "HIV": "s4", "Lung Cancer": "s5"}
ABSTRACT: oracle.Buckets = [
    [((Q[(g, d)],), S[s]) for _, g, d, s, b in FIG1 if b == bucket] for bucket in (1, 2, 3)
]


def fig1_release() -> BucketRelease:
    return BucketRelease.from_records(
        ("gender", "degree"), [((g, d), str(b), s) for _, g, d, s, b in FIG1], sensitive="disease"
    )


def abstract_release() -> BucketRelease:
    return BucketRelease.from_records(
        ("qi",), [(q, str(b + 1), s) for b, recs in enumerate(ABSTRACT) for q, s in recs]
    )


def fact(given: dict[str, str], values: list[str], p: float, name: str = "k") -> DistributionFact:
    return DistributionFact(tuple(given.items()), tuple(values), Bound(p, p), Source(name))


def cell_values(
    release: BucketRelease, solution_x: npt.NDArray[np.float64], sys_: ConstraintSystem
) -> dict[tuple[str, str, str], float]:
    out: dict[tuple[str, str, str], float] = {}
    for q, s, b, x in zip(sys_.cell_q, sys_.cell_s, sys_.cell_b, solution_x, strict=True):
        out[(release.qi_values[q][0], release.values[s], release.buckets[b])] = float(x)
    return out


# ------------------------------------------------------------------ section 5 invariants


def test_invariant_examples_of_section_5() -> None:
    """``P(q1, 1) = 2/10`` (QI-invariant) and ``P(s4, 2) = 1/10`` (SA-invariant); q1 is absent
    from bucket 3 and s1 from bucket 3 (zero-invariants: no unknown is created)."""
    rel = abstract_release()
    sys_ = build_system(rel)
    n = rel.n_records
    q1 = rel.qi_index[("q1",)]
    b = {lbl: i for i, lbl in enumerate(rel.buckets)}
    qb_rows = [
        i
        for i in range(sys_.invariants.shape[0])
        if sys_.invariant_kind[i] == QI_ROW
        and tuple(rel.qb[sys_.invariant_id[i], :2]) == (q1, b["1"])
    ]
    assert len(qb_rows) == 1
    assert Fraction(int(sys_.invariant_rhs[qb_rows[0]]), n) == Fraction(2, 10)
    cells = sys_.invariants[qb_rows[0]].indices
    assert {(rel.values[sys_.cell_s[c]]) for c in cells} == {"s1", "s2", "s3"}
    nv = len(rel.values)
    s4 = rel.values.index("s4")
    sa_rows = [
        i
        for i in range(sys_.invariants.shape[0])
        if sys_.invariant_kind[i] == SA_ROW and sys_.invariant_id[i] == b["2"] * nv + s4
    ]
    assert len(sa_rows) == 1
    assert Fraction(int(sys_.invariant_rhs[sa_rows[0]]), n) == Fraction(1, 10)
    assert {rel.qi_values[sys_.cell_q[c]][0] for c in sys_.invariants[sa_rows[0]].indices} == {
        "q1",
        "q3",
        "q4",
    }
    in3 = sys_.cell_b == b["3"]
    assert q1 not in set(sys_.cell_q[in3].tolist())
    assert rel.values.index("s1") not in set(sys_.cell_s[in3].tolist())


def test_knowledge_constraint_example_of_section_4_1() -> None:
    """``P(Flu | male) = 0.3`` becomes a sum over the male QI values and every bucket equal to
    ``0.3 * P(male) = 0.3 * 6/10 = 0.18``. The paper lists ``P({male, college}, Flu, 3)``
    among the terms; bucket 3 has no male college record, so that term is a zero-invariant
    (docs/paper-errata.md)."""
    rel = fig1_release()
    sys_ = build_system(rel, Knowledge((fact({"gender": "male"}, ["Flu"], 0.3),)))
    assert sys_.knowledge_low[0] / rel.n_records == pytest.approx(0.18, abs=1e-15)
    assert sys_.knowledge_high[0] == sys_.knowledge_low[0]
    terms = {
        (rel.qi_values[sys_.cell_q[c]], rel.values[sys_.cell_s[c]], rel.buckets[sys_.cell_b[c]])
        for c in sys_.knowledge[0].indices
    }
    assert terms == {
        (("male", "college"), "Flu", "1"),
        (("male", "high school"), "Flu", "1"),
        (("male", "graduate"), "Flu", "3"),
    }


def test_example_of_section_5_5_couples_buckets_1_and_2() -> None:
    """``P(s3 | q3) = 0.5`` gives ``P(q3, s3, 1) + P(q3, s3, 2) = 0.1``; bucket 3 is irrelevant
    (Definition 5.6) and keeps the closed form."""
    rel = abstract_release()
    sys_ = build_system(rel, Knowledge((fact({"qi": "q3"}, ["s3"], 0.5),)))
    cells = sys_.knowledge[0].indices
    assert {rel.buckets[b] for b in sys_.cell_b[cells]} == {"1", "2"}
    assert sys_.knowledge_low[0] / rel.n_records == pytest.approx(0.1, abs=1e-15)
    assert sys_.touched_buckets().tolist() == [True, True, False]
    sol = solve(sys_)
    assert sol.stats.buckets_solved == 2
    got = cell_values(rel, sol.x, sys_)
    assert got[("q3", "s3", "1")] + got[("q3", "s3", "2")] == pytest.approx(1.0, abs=1e-12)


# ------------------------------------------------------------------ section 3.1 example


def test_figure1_knowledge_forces_the_assignment_of_bucket_1() -> None:
    """With ``P(s1 | q2) = 0`` and ``P(s1 or s2 | q3) = 0``: in bucket 1, q3 -> s3, q2 -> s2 and
    the two q1 share s1 and s2 (section 3.1). In bucket 2, q3 cannot hold s1 and the maximum
    entropy spreads the rest evenly; bucket 3 keeps the closed form. Every number is exact."""
    rel = abstract_release()
    know = Knowledge((fact({"qi": "q2"}, ["s1"], 0.0), fact({"qi": "q3"}, ["s1", "s2"], 0.0)))
    for opts in (SolverOptions(), SolverOptions(split=False), SolverOptions(linear="schur")):
        sys_ = build_system(rel, know)
        sol = solve(sys_, opts)
        got = cell_values(rel, sol.x, sys_)
        third = Fraction(1, 3)
        expected: dict[tuple[str, str, str], Fraction | int] = {
            ("q1", "s1", "1"): 1,
            ("q1", "s2", "1"): 1,
            ("q1", "s3", "1"): 0,
            ("q2", "s1", "1"): 0,
            ("q2", "s2", "1"): 1,
            ("q2", "s3", "1"): 0,
            ("q3", "s1", "1"): 0,
            ("q3", "s2", "1"): 0,
            ("q3", "s3", "1"): 1,
            ("q1", "s1", "2"): Fraction(1, 2),
            ("q1", "s3", "2"): Fraction(1, 4),
            ("q1", "s4", "2"): Fraction(1, 4),
            ("q3", "s1", "2"): 0,
            ("q3", "s3", "2"): Fraction(1, 2),
            ("q3", "s4", "2"): Fraction(1, 2),
            ("q4", "s1", "2"): Fraction(1, 2),
            ("q4", "s3", "2"): Fraction(1, 4),
            ("q4", "s4", "2"): Fraction(1, 4),
            **{(q, s, "3"): third for q in ("q2", "q5", "q6") for s in ("s2", "s4", "s5")},
        }
        assert set(got) == set(expected)
        for key, value in expected.items():
            assert got[key] == pytest.approx(float(value), abs=1e-12), key
        assert sol.stats.residual <= 1e-12
    # P*(s | q1): q1 has 3 records (2 in bucket 1, 1 in bucket 2)
    res = estimate(rel, know)
    row = res.posterior[rel.qi_index[("q1",)]]
    exact = {
        "s1": Fraction(1, 2),
        "s2": Fraction(1, 3),
        "s3": Fraction(1, 12),
        "s4": Fraction(1, 12),
        "s5": Fraction(0),
    }
    for v, p in exact.items():
        assert row[rel.values.index(v)] == pytest.approx(float(p), abs=1e-12)
    # the largest posterior: q3 holds s3 w.p. (1 + 1/2) / 2 = 3/4 (q2 -> s2: (1 + 1/3) / 2)
    assert res.max_posterior == pytest.approx(0.75, abs=1e-12)
    assert res.max_at is not None
    assert (res.max_at.label, res.max_at.value) == ("qi=q3", "s3")
    # the oracle agrees: the same vector is the maximum-entropy point of the full joint
    model = oracle.full_joint(
        ABSTRACT,
        [
            oracle.Dist(((0, "q2"),), ("s1",), Fraction(0), Fraction(0)),
            oracle.Dist(((0, "q3"),), ("s1", "s2"), Fraction(0), Fraction(0)),
        ],
    )
    x = joint_vector(solve(build_system(rel, know)), model, offset=1)
    viol = oracle.kkt_violation(model, x)
    assert viol["feasibility"] <= 1e-12 and viol["support"] <= 1e-10
    assert viol["stationarity"] <= 1e-8
    np.testing.assert_allclose(x, oracle.solve_dense(model), atol=1e-10)


def test_without_knowledge_the_estimate_is_the_closed_form_exactly() -> None:
    """Theorem 5 on Figure 1: ``P(q, s, b) = P(q, b) P(s, b) / P(b)`` (eq. 9), as fractions."""
    rel = abstract_release()
    model = oracle.full_joint(ABSTRACT)
    exact = np.array([float(v) for v in oracle.closed_form(ABSTRACT, model)])
    for opts in (SolverOptions(), SolverOptions(split=False)):
        sol = solve(build_system(rel), opts)
        np.testing.assert_allclose(joint_vector(sol, model, offset=1), exact, atol=1e-13)
    # and the closed form is optimal (KKT certificate from the definitions)
    assert max(oracle.kkt_violation(model, exact).values()) <= 1e-9


# ------------------------------------------------------------------ section 6 (Figure 4)


def test_knowledge_about_individuals_of_section_6() -> None:
    """Figure 4's pseudonyms: Alice has q1, Bob q2, Charlie q5. (1) P(Alice has s1) = 0.2;
    (2) Alice has s1 or s4; (3) two of Alice, Bob and Charlie have s4. Each constraint is
    the paper's sum over buckets, and the estimate is the maximum-entropy point of the full
    pseudonym model (every person a variable), checked by KKT."""
    rel = abstract_release()
    persons = oracle.people(ABSTRACT)
    names = {
        "Alice": persons.index(("q1",)),
        "Bob": persons.index(("q2",)),
        "Charlie": persons.index(("q5",)),
    }
    people_ = tuple(Person(n, (("qi", persons[i][0]),)) for n, i in names.items())
    a, b, c = names["Alice"], names["Bob"], names["Charlie"]
    one, two = Fraction(1), Fraction(2)
    cases = [
        (
            IndividualFact(("Alice",), ("s1",), Bound(0.2, 0.2), Source("1")),
            oracle.Indiv((a,), ("s1",), Fraction(1, 5), Fraction(1, 5)),
            {("s1", "1"), ("s1", "2")},
        ),
        (
            IndividualFact(("Alice",), ("s1", "s4"), Bound(1, 1), Source("2")),
            oracle.Indiv((a,), ("s1", "s4"), one, one),
            {("s1", "1"), ("s1", "2"), ("s4", "2")},
        ),
        (
            IndividualFact(("Alice", "Bob", "Charlie"), ("s4",), Bound(2, 2), Source("3")),
            oracle.Indiv((a, b, c), ("s4",), two, two),
            {("s4", "2"), ("s4", "3")},
        ),
    ]
    for engine_fact, oracle_fact, terms in cases:
        sys_ = build_system(rel, Knowledge((engine_fact,), people_))
        row = sys_.knowledge[0].indices
        assert {sys_.groups[g].name for g in sys_.cell_group[row]} <= set(names)
        assert {
            (rel.values[s], rel.buckets[bb])
            for s, bb in zip(sys_.cell_s[row], sys_.cell_b[row], strict=True)
        } == terms
        sol = solve(sys_)
        assert sol.stats.residual <= 1e-12
        model = oracle.pseudonym_model(ABSTRACT, indiv=[oracle_fact])
        x = pseudonym_vector(sol, model, ABSTRACT, names, offset=1)
        viol = oracle.kkt_violation(model, x)
        assert viol["feasibility"] <= 1e-12, viol
        assert viol["support"] <= 1e-10, viol
        assert viol["stationarity"] <= 1e-8, viol
