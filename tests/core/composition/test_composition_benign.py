"""Benign values in the composition audit (Ganta et al. 2008, Definitions 8-9): a person the
intersection attack pins to a benign value is no breach. With Ganta's measure a person is in
``VP_C`` iff a non-benign value is left in ``S_i`` and ``1 / |S_i| >= C``; with the posterior
measure iff the largest posterior of a non-benign value is at least ``C``. Checked against
Algorithm 1 written from the definitions and the possible-worlds oracle
(tests/composition_oracle.py, exact fractions)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.composition import gate
from tests.cli.test_composition_cli import (  # noqa: F401  (fixtures)
    columns,
    files,
    no_default_ledger,
    run,
    write_csv,
)
from tests.composition_oracle import (
    OGroup,
    OScenario,
    algorithm1,
    harmful_posterior,
    located_groups,
    pinned_to_harmful,
)
from tests.core.composition.test_composition_attack import (
    QIS,
    _engine,
    model_scenarios,
    populations,
)


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


def test_audit_cli_takes_benign_values(
    files: dict[str, Path],  # noqa: F811  (the fixture)
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Table 1 (Ganta et al.): Carol is left with {Cancer, Viral Infection}; the posterior of
    Viral Infection is 4/7, of Cancer 3/7."""
    carol = write_csv(tmp_path / "carol.csv", ("name", *QIS), [("Carol", "13068", "45", "FR")])
    argv = ["audit", str(files["h1"]), *columns(), "--population", str(carol),
            "--prior", str(files["h2"]), "--no-ledger", "--quiet"]  # fmt: skip
    posterior = ["--confidence", "0.57", "--measure", "posterior"]
    assert run([*argv, *posterior], capsys)[0] == 1
    code, out, _ = run([*argv, *posterior, "--benign", "Viral Infection", "--format", "json"],
                       capsys)  # fmt: skip
    env = json.loads(out)
    assert code == 0 and env["results"][0]["parameters"]["benign"] == ["Viral Infection"]
    assert env["results"][0]["max_disclosure"] == pytest.approx(3 / 7, abs=1e-9)
    # Ganta's measure: Cancer is left beside the benign value, 1/|S| = 1/2
    assert run([*argv, "--confidence", "0.5", "--benign", "Viral Infection"], capsys)[0] == 1
    every = ["--benign", "Viral Infection", "--benign", "Cancer", "--benign", "Rare"]
    code, out, _ = run([*argv, "--confidence", "0.5", *every, "--format", "json"], capsys)
    env = json.loads(out)
    assert code == 0 and env["results"][0]["value"] == 0.0
    assert env["details"]["benign_absent"] == ["Rare"]  # noted, not an error
