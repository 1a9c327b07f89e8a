"""The MaxEnt gate's verdict at its threshold, and the public (redacted) form of a result.

The maximum posterior of Figure 1 without knowledge is computed here from the closed form
of Du et al. 2008, Theorem 5 (``P(q, s, b) = P(q, b) P(s, b) / P(b)``), with fractions; the
verdict rule is the one :func:`airflow_privacy.core.thresholds.maxent_safe` states.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from fractions import Fraction

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
from airflow_privacy.core.maxent.result import MaxEntResult
from airflow_privacy.core.thresholds import maxent_safe

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


def fig1_release() -> BucketRelease:
    return BucketRelease.from_records(
        ("gender", "degree"), [((g, d), str(b), s) for _, g, d, s, b in FIG1], sensitive="disease"
    )


def closed_form_max_posterior() -> Fraction:
    """``max_{q,s} sum_b n(q,b) n(s,b) / n(b) / n(q)`` over Figure 1, exactly."""
    n_qb = Counter(((g, d), b) for _, g, d, _, b in FIG1)
    n_sb = Counter((s, b) for *_, s, b in FIG1)
    n_b = Counter(b for *_, b in FIG1)
    n_q = Counter((g, d) for _, g, d, _, _ in FIG1)
    best = Fraction(0)
    for q in n_q:
        for s in {s for *_, s, _ in FIG1}:
            p = (
                sum((Fraction(n_qb[(q, b)] * n_sb[(s, b)], n_b[b]) for b in n_b), Fraction(0))
                / n_q[q]
            )
            best = max(best, p)
    return best


def test_posterior_exactly_c_is_unsafe() -> None:
    res = estimate(fig1_release())
    want = closed_form_max_posterior()
    assert abs(res.max_posterior - float(want)) < 1e-12
    assert res.posterior_error_bound < 1e-12
    assert not res.is_safe(float(want))  # mathematically equal: unsafe
    assert not res.is_safe(math.nextafter(float(want), 1.0))  # one ulp above: in the band
    assert not res.is_safe(float(want) + 0.5e-9)
    assert res.is_safe(float(want) + 2e-9)
    # a posterior that is c but computed one ulp below c (the old `max_posterior >= c`
    # test let it pass): the gate's rule, with this result's error allowance, blocks it
    c = float(want)
    assert not maxent_safe(math.nextafter(c, 0.0), c, res.posterior_error_bound)
    payload = res.to_dict()
    assert payload["tolerance"] == 1e-9
    assert payload["posterior_error_bound"] == res.posterior_error_bound


def test_posterior_error_bound_is_the_row_slack() -> None:
    res = estimate(fig1_release())
    stats = dataclasses.replace(res.solution.stats, residual=1e-7)
    worse = MaxEntResult(dataclasses.replace(res.solution, stats=stats))
    # residual 1e-7 of N = 10 records, smallest QI value (female junior) has 1 record
    assert worse.posterior_error_bound == 1e-7 * 10 / 1
    p = worse.max_posterior
    assert not worse.is_safe(p + 5e-7) and worse.is_safe(p + 2e-6)


# --------------------------------------------------------------------------- redaction
def pseudonym_result() -> MaxEntResult:
    """Figure 4's pseudonyms on Figure 1: Alice is a male college graduate, Bob a female
    college graduate, Charlie a female graduate (each a real QI value of the release)."""
    people = (
        Person("Alice", (("gender", "male"), ("degree", "college"))),
        Person("Bob", (("gender", "female"), ("degree", "college"))),
        Person("Charlie", (("gender", "female"), ("degree", "graduate"))),
    )
    facts = (
        IndividualFact(("Alice",), ("HIV",), Bound(0.9, 0.9), Source("alice-hiv", 3)),
        IndividualFact(("Bob", "Charlie"), ("Lung Cancer",), Bound(1, 1), Source("bc", 4)),
        DistributionFact((("gender", "male"),), ("Flu",), Bound(0.4, 0.6), Source("men-flu", 5)),
    )
    return estimate(fig1_release(), Knowledge(facts, people))


def test_public_form_has_no_names_or_values_of_people() -> None:
    res = pseudonym_result()
    full = json.dumps(res.to_dict())
    assert "Alice" in full and "Charlie" in full  # the confidential form names them
    public_dict = res.to_dict(redacted=True)
    public = json.dumps(public_dict)
    for name in ("Alice", "Bob", "Charlie", "alice-hiv", "men-flu", "HIV", "Lung", "Flu"):
        assert name not in public, name
    assert public_dict["redacted"] is True
    people = [a for a in public_dict["top_at_risk"] if a["kind"] == "person"]
    assert people, "the people must be listed, as pseudonyms"
    for a in people:
        assert a["label"].startswith("person #") and a["qi"] == {} and a["value"] is None
    # numbered by first mention in the statements: Alice, then Bob and Charlie
    assert sorted(p["name"] for p in public_dict["people"]) == [
        "person #1",
        "person #2",
        "person #3",
    ]
    assert res.pseudonym("Alice") == "person #1" and res.pseudonym("Charlie") == "person #3"
    assert all(set(p) == {"name", "max_posterior"} for p in public_dict["people"])
    statements = [k["statement"] for k in public_dict["knowledge"]]
    assert statements[0] == "knowledge about person #1"
    assert statements[1] == "knowledge about person #2, person #3"
    # a statement about the distribution keeps the QI values it is given, not its values
    assert statements[2] == "knowledge about the sensitive values given gender=male"
    # the people's values appear nowhere next to them: no per-value posterior per person
    assert "posterior" not in json.dumps(public_dict["people"]).replace("max_posterior", "")
    # QI-value rows stay (a QI combination of the release, its size and largest posterior),
    # but not which value that is: the estimate's release may never be published
    qi_rows = [a for a in public_dict["top_at_risk"] if a["kind"] == "qi"]
    assert qi_rows and all(a["value"] is None and a["qi"] for a in qi_rows)
    full_rows = [a for a in res.to_dict()["top_at_risk"] if a["kind"] == "qi"]
    assert all(a["value"] is not None for a in full_rows)  # the confidential form has them


def test_public_max_at_and_top_at_risk_for_a_person() -> None:
    res = pseudonym_result()
    assert res.max_at is not None and res.max_at.kind == "person"  # the knowledge makes it so
    top = res.top_at_risk(5, redacted=True)
    assert top[0].label == res.pseudonym(res.max_at.label)
    assert top[0].posterior == res.max_at.posterior
    assert top[0].value is None and top[0].qi == {}
    public = res.to_dict(redacted=True)
    assert public["max_at"]["label"].startswith("person #")
    assert public["max_at"]["value"] is None
    assert public["max_posterior"] == res.max_posterior


def test_public_reason_and_public_dict() -> None:
    res = pseudonym_result()
    assert res.public_dict(5) == res.to_dict(5, redacted=True)
    assert res.max_at is not None and res.max_at.value is not None
    for c in (None, 0.5, 0.99):
        text = res.public_reason(c)
        for secret in ("Alice", "Bob", "Charlie", res.max_at.value):
            assert secret not in text, (c, text)
        assert "person #" in text and f"{res.max_posterior:.4f}" in text
    assert res.public_reason(0.5).endswith("is not below c = 0.5 (tolerance 1.0e-09)")
    plain = estimate(fig1_release())
    want = closed_form_max_posterior()
    assert f"is not below c = {float(want):g}" in plain.public_reason(float(want))
    assert "is below c = 0.42" in plain.public_reason(0.42)
    at = plain.max_at
    assert at is not None and at.kind == "qi" and at.label in plain.public_reason()
    assert at.value is not None and repr(at.value) not in plain.public_reason()
    assert "one sensitive value with probability" in plain.public_reason()
