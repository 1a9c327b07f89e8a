"""Benign values in the composition audit (Ganta et al. 2008, Definitions 8-9): a person the
intersection attack pins to a benign value is no breach. With Ganta's measure a person is in
``VP_C`` iff a non-benign value is left in ``S_i`` and ``1 / |S_i| >= C``; with the posterior
measure iff the largest posterior of a non-benign value is at least ``C``. Checked against
Algorithm 1 written from the definitions and the possible-worlds oracle
(tests/composition_oracle.py, exact fractions)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.composition import gate
from tests.composition_oracle import (
    OGroup,
    OScenario,
    algorithm1,
    harmful_posterior,
    located_groups,
    pinned_to_harmful,
)
from tests.core.composition.scenarios import engine_on as _engine
from tests.core.composition.scenarios import model_scenarios, populations


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populations(), st.data())
def test_vp_c_counts_only_people_pinned_to_a_non_benign_value(
    case: tuple[OScenario, list[list[str]], str], data: st.DataObject
) -> None:
    s, labels, overlap = case
    benign = frozenset(data.draw(st.sets(st.sampled_from(sorted(set(s.values))))))
    res, people = _engine(s, labels, overlap, sorted(benign))
    plain, _ = _engine(s, labels, overlap)
    n_rel = len(s.releases)
    defs = []
    for p in people:
        locatable = [bool(located_groups(s, j, s.qis[p])) for j in range(n_rel)]
        present = (
            [p in s.people(j) and locatable[j] for j in range(n_rel)]
            if overlap == "known"
            else locatable
        )
        defs.append(algorithm1(s, s.qis[p], present))
    for c in (1.0, 0.5, 1 / 3, 0.25):
        want = sum(
            1
            for d in defs
            if d is not None and pinned_to_harmful(d, Fraction(c).limit_denominator(1000), benign)
        )
        assert res.vp_c(c) == want  # type: ignore[attr-defined]
        assert res.vp_c(c) <= plain.vp_c(c)  # type: ignore[attr-defined]
        assert res.vp_c(c, "posterior") <= plain.vp_c(c, "posterior")  # type: ignore[attr-defined]
    assert res.overlap_size == plain.overlap_size  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_scenarios(), st.data())
def test_posterior_is_the_largest_over_non_benign_values(
    case: tuple[OScenario, list[list[str]]], data: st.DataObject
) -> None:
    s, labels = case
    benign = frozenset(data.draw(st.sets(st.sampled_from(sorted(set(s.values))))))
    res, people = _engine(s, labels, benign=sorted(benign))
    row = people.index(0)
    want = harmful_posterior(s, 0, benign)
    assert res.posterior[row] == pytest.approx(float(want), abs=1e-9)  # type: ignore[attr-defined]
    if want > 0:
        assert res.values[int(res.posterior_value[row])] not in benign  # type: ignore[attr-defined]


def test_people_pinned_to_a_benign_value_do_not_count() -> None:
    """Two releases that leave the first two people one value, 'none': no breach; the flu
    patient, pinned too, still counts."""
    s = OScenario(
        (("20",), ("30",), ("40",)),
        ("none", "none", "flu"),
        (
            (
                OGroup((0,), fits=lambda q: q == ("20",)),
                OGroup((1, 2), fits=lambda q: q != ("20",)),
            ),
            (
                OGroup((0, 1), fits=lambda q: q != ("40",)),
                OGroup((2,), fits=lambda q: q == ("40",)),
            ),
        ),
    )
    labels = [["20", "30-40"], ["20-30", "40"]]
    plain, _ = _engine(s, labels)
    res, _ = _engine(s, labels, benign=["none"])
    assert gate(plain).safe is False  # type: ignore[arg-type]
    verdict = gate(res)  # type: ignore[arg-type]
    assert plain.vp_c(1.0) == 3  # type: ignore[attr-defined]
    assert res.vp_c(1.0) == 1  # type: ignore[attr-defined]  # the flu patient stays pinned
    assert verdict.safe is False and verdict.witness is not None
    assert verdict.parameters["benign"] == ["none"]
