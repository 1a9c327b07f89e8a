"""Benign values in Privacy-MaxEnt (``--benign``, formerly ``--not-sensitive``).

A disclosure of a benign value is not a breach, so the gate's number is the largest
``P*(s | q)`` over non-benign ``s`` only. Without knowledge the maximum-entropy estimate is
``P*(q, s, b) = n_b(q) n_b(s) / (n_b N)`` (Du et al. 2008, section 5: the estimate of
a bucketized release without background knowledge); the test computes that posterior
exactly from the records (fractions), takes the maximum over non-benign values and compares
it with the engine's (tolerance 1e-9), and checks the definition's consequences: no benign
value = the number without the option, every value benign = 0, monotone in the set.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.maxent import estimate
from tests import maxent_oracle as oracle
from tests.core.maxent.strategies import releases
from tests.maxent_engine import release_of

TOL = 1e-9


def exact_max_posterior(buckets: oracle.Buckets, benign: frozenset[str]) -> Fraction:
    """``max_{q, s not benign} P*(s | q)`` from the closed form, exactly."""
    n_q: Counter[tuple[str, ...]] = Counter()
    mass: dict[tuple[tuple[str, ...], str], Fraction] = {}
    for recs in buckets:
        nb = len(recs)
        qs = Counter(q for q, _ in recs)
        ss = Counter(s for _, s in recs)
        for q, cq in qs.items():
            n_q[q] += cq
            for s, cs in ss.items():
                mass[(q, s)] = mass.get((q, s), Fraction(0)) + Fraction(cq * cs, nb)
    best = Fraction(0)
    for (q, s), m in mass.items():
        if s not in benign:
            best = max(best, m / n_q[q])
    return best


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(releases(), st.sets(st.sampled_from("abc")), st.sets(st.sampled_from("abc")))
def test_the_largest_posterior_ignores_benign_values(
    buckets: oracle.Buckets, small: set[str], extra: set[str]
) -> None:
    rel = release_of(buckets)
    plain = estimate(rel).max_posterior
    r1 = estimate(rel, benign=sorted(small))
    r2 = estimate(rel, benign=sorted(small | extra))
    assert abs(r1.max_posterior - float(exact_max_posterior(buckets, frozenset(small)))) <= TOL
    assert abs(plain - float(exact_max_posterior(buckets, frozenset()))) <= TOL
    assert r2.max_posterior <= r1.max_posterior + TOL <= plain + 2 * TOL
    # the place reported is a non-benign value
    if r1.max_at is not None:
        assert r1.max_at.value not in small
    # the former name is the same concept
    alias = estimate(rel, not_sensitive=sorted(small))
    assert alias.benign == r1.benign and alias.max_posterior == r1.max_posterior
    # a label not in the release changes nothing and is noted
    unseen = estimate(rel, benign=[*sorted(small), "zz"])
    assert unseen.max_posterior == r1.max_posterior
    assert unseen.benign_absent == tuple(v for v in sorted({*small, "zz"}) if v not in rel.values)


def test_every_value_benign_gives_zero() -> None:
    buckets = [[(("x", "u"), "a"), (("y", "v"), "b")], [(("x", "v"), "c")]]
    r = estimate(release_of(buckets), benign=["a", "b", "c"])
    assert r.max_posterior == 0.0
    assert "benign" in r.public_reason(0.5)
