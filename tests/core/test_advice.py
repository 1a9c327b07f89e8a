"""The way forward is checked: for random blocked releases, applying each suggested change
(independently of the advice engine: the named groups removed from the original rows, the
release rebuilt; the suggested parameter put in the criterion) passes when re-checked, and
a suggested parameter is the strictest that passes."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.advice import NAMED_GROUPS, parameter_advice, suppression_advice
from airflow_privacy.core.composition.locate import Population
from airflow_privacy.core.criteria.registry import create
from airflow_privacy.core.model import Bucketization
from tests.core.composition.scenarios import populations

# (criterion, parameters): the criteria that decide group by group or read the whole
# table's distribution (t-closeness, beta-likeness: suppression moves it)
CRITERIA: list[tuple[str, dict[str, Any]]] = [
    ("k-anonymity", {"k": 4}),
    ("k-anonymity", {"k": 6}),
    ("distinct-l-diversity", {"l": 3}),
    ("entropy-l-diversity", {"l": 2.5}),
    ("recursive-cl-diversity", {"c": 2.0, "l": 2}),
    ("t-closeness", {"t": 0.25}),
    ("ck-safety", {"c": 0.7, "k": 1}),
    ("alpha-k-anonymity", {"alpha": 0.6, "k": 3}),
    ("delta-disclosure", {"delta": 1.0}),
    ("enhanced-beta-likeness", {"beta": 1.0}),
]


def _rows(rng: random.Random) -> list[tuple[str, str, int]]:
    rows = []
    for g in range(rng.randint(3, NAMED_GROUPS)):
        for v in rng.sample("abcdef", rng.randint(1, 5)):
            rows.append((f"g{g}", v, rng.randint(1, 6)))
    return rows


def _rebuilt(rows: list[tuple[str, str, int]], suppressed: set[str]) -> Bucketization:
    """The release without the suppressed groups, built from its rows afresh."""
    kept = [r for r in rows if f"q={r[0]}" not in suppressed]
    return Bucketization.from_counts(kept, ["q"], "s")


def test_fifty_blocked_releases_pass_once_the_advice_is_applied() -> None:
    rng = random.Random(20261129)
    blocked = advised = suppressed_checked = parameter_checked = 0
    tries = 0
    while advised < 50:
        tries += 1
        assert tries < 5000, "too few blocked releases drawn"
        rows = _rows(rng)
        b = Bucketization.from_counts(rows, ["q"], "s")
        name, params = rng.choice(CRITERIA)
        criterion = create(name, params)
        result = criterion.evaluate(b)
        if result.safe is True:
            continue
        blocked += 1
        advice = suppression_advice(b, criterion)
        if advice is not None:
            assert advice.kind == "suppress-groups" and advice.rechecked
            assert advice.groups_suppressed == len(advice.groups) < b.n_groups
            rest = _rebuilt(rows, set(advice.groups))
            assert advice.records_suppressed == b.n_records - rest.n_records
            assert create(name, params).evaluate(rest).safe is True, (name, params, rows)
            suppressed_checked += 1
        # every other one starts from the measured level (two evaluations when it is the
        # answer), the rest searches: both must give the strictest passing value
        found = parameter_advice(b, name, params, result.value if blocked % 2 else None)
        if found is not None:
            assert found.parameter is not None and found.passes_at is not None
            looser = {**params, found.parameter: _typed(params[found.parameter], found.passes_at)}
            assert create(name, looser).evaluate(b).safe is True, (name, looser, rows)
            stricter = _stricter(name, found.parameter, params[found.parameter], found.passes_at)
            if stricter is not None:
                harder = {**params, found.parameter: stricter}
                assert create(name, harder).evaluate(b).safe is not True, (name, harder)
            parameter_checked += 1
        advised += advice is not None or found is not None
    # most blocked releases get a suggestion (the rest: nothing short of suppressing every
    # group passes, and no value of one parameter does), and both kinds were exercised
    assert advised >= 0.8 * blocked, (advised, blocked)
    assert suppressed_checked >= 35 and parameter_checked >= 25, (
        suppressed_checked,
        parameter_checked,
    )


def _typed(asked: Any, value: float) -> Any:
    return int(value) if isinstance(asked, int) and not isinstance(asked, bool) else value


def _stricter(name: str, key: str, asked: Any, value: float) -> Any:
    """A value just stricter than the suggested one (None: it is the asked one's side)."""
    from airflow_privacy.core.criteria.registry import known

    cls = known(name)
    assert cls is not None
    declared = cls.parameter(key)
    assert declared is not None
    if isinstance(asked, int) and not isinstance(asked, bool):
        return int(value) + (1 if declared.stricter == "higher" else -1)
    step = 1e-6 * max(1.0, abs(value))
    return value + step if declared.stricter == "higher" else value - step


def test_no_advice_where_nothing_short_of_everything_passes() -> None:
    # one group of two distinct values: 3-diversity fails, and suppressing it leaves nothing
    b = Bucketization.from_counts([("g", "a", 3), ("g", "b", 3)], ["q"], "s")
    assert suppression_advice(b, create("distinct-l-diversity", {"l": 3})) is None
    assert parameter_advice(b, "distinct-l-diversity", {"l": 3}) is not None  # l=2 passes


@pytest.mark.parametrize("k", [5, 7])
def test_the_advice_names_groups_largest_first_and_counts_the_rest(k: int) -> None:
    rows = [(f"g{i:02d}", "a", 1 + i % 4) for i in range(30)] + [("big", "a", 50)]
    b = Bucketization.from_counts(rows, ["q"], "s")
    advice = suppression_advice(b, create("k-anonymity", {"k": k}))
    assert advice is not None
    small = [r for r in rows if r[2] < k]
    assert advice.groups_suppressed == len(small)
    assert advice.records_suppressed == sum(r[2] for r in small)
    assert len(advice.groups) == NAMED_GROUPS
    assert f"and {len(small) - NAMED_GROUPS:,} more" in advice.text
    sizes = [b.sizes[b.groups.index((g.removeprefix("q="),))] for g in advice.groups]
    assert sizes == sorted(sizes, reverse=True)


# ------------------------------------------------------------------- composition audit
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populations(), st.sampled_from(["ganta", "posterior"]), st.sampled_from([1.0, 0.5, 1 / 3]))
def test_a_blocked_audit_lists_the_pinned_by_its_measure_and_the_parameters_that_pass(
    case: tuple[Any, list[list[str]], str], measure: str, confidence: float
) -> None:
    """The people pinned come worst first by the measure that gated; each suggested
    parameter passes the gate on the same audit, and one step stricter does not."""
    from airflow_privacy.core.advice import composition_advice
    from airflow_privacy.core.composition import composition_audit, gate
    from tests.core.composition.scenarios import interval_release as _interval_release

    s, labels, _overlap = case
    releases = [_interval_release(s, j, f"R{j}", labels[j]) for j in range(len(s.releases))]
    people = s.people(0)
    pop = Population({"age": tuple(s.qis[p][0] for p in people)}, len(people))
    res = composition_audit(pop, releases[0], releases[1:], rank=measure)  # type: ignore[arg-type]
    key = (
        [b.posterior for b in res.worst]
        if measure == "posterior"
        else [(1 / b.ea_hat if b.ea_hat and b.sensitive_left else 0.0) for b in res.worst]
    )
    assert key == sorted(key, reverse=True)  # worst first by the gating measure
    if gate(res, confidence, 0.0, measure).safe:  # type: ignore[arg-type]
        return
    found = {(a.kind, a.parameter): a for a in composition_advice(res, confidence, 0.0, measure)}  # type: ignore[arg-type]
    pinned = found.get(("people-pinned", None))
    assert pinned is not None and pinned.people == res.vp_c(confidence, measure)  # type: ignore[arg-type]
    for param, asked in (("max_pvp", 0.0), ("confidence", confidence)):
        a = found.get(("parameter", param))
        if a is None:
            continue
        assert a.passes_at is not None
        args = {"confidence": confidence, "max_pvp": 0.0, param: a.passes_at}
        assert gate(res, args["confidence"], args["max_pvp"], measure).safe is True  # type: ignore[arg-type]
        stricter = a.passes_at - 1e-6 * max(1.0, abs(a.passes_at))
        if stricter > asked:
            args[param] = stricter
            assert gate(res, args["confidence"], args["max_pvp"], measure).safe is not True  # type: ignore[arg-type]
    assert ("parameter", "max_pvp") in found  # 100% pinned always passes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(populations(), st.sampled_from(["ganta", "posterior"]), st.sampled_from([1.0, 0.5]))
def test_suppressing_the_suggested_groups_passes_the_audit_again(
    case: tuple[Any, list[list[str]], str], measure: str, confidence: float
) -> None:
    """The suggested groups removed from the candidate (rebuilt from the scenario without
    them, not by the advice code) and audited afresh against the same people and earlier
    releases: the audit passes, and the cost counts exactly the records removed."""
    from airflow_privacy.core.advice import composition_suppression
    from airflow_privacy.core.composition import composition_audit, gate
    from airflow_privacy.core.composition.release import PublishedRelease
    from tests.core.composition.scenarios import interval_release as _interval_release

    s, labels, _overlap = case
    releases = [_interval_release(s, j, f"R{j}", labels[j]) for j in range(len(s.releases))]
    people = s.people(0)
    pop = Population({"age": tuple(s.qis[p][0] for p in people)}, len(people))

    def audit(candidate: PublishedRelease) -> Any:
        return composition_audit(pop, candidate, releases[1:], rank=measure)  # type: ignore[arg-type]

    res = audit(releases[0])
    if gate(res, confidence, 0.0, measure).safe:  # type: ignore[arg-type]
        return
    advice = composition_suppression(pop, releases[0], res, audit, confidence, 0.0, measure)  # type: ignore[arg-type]
    if advice is None or advice.groups_suppressed > len(advice.groups):
        return  # nothing suggested, or more groups than are named
    cand = releases[0]
    keep = [g for g in range(len(cand.keys)) if cand.group_label(g) not in set(advice.groups)]
    assert len(keep) == len(cand.keys) - advice.groups_suppressed
    rebuilt = PublishedRelease(
        kind=cand.kind, qis=cand.qis, sensitive=cand.sensitive,
        keys=tuple(cand.keys[g] for g in keep), values=cand.values,
        counts=cand.counts[keep], name=cand.name,
    )  # fmt: skip
    assert advice.records_suppressed == int(cand.counts.sum()) - int(rebuilt.counts.sum())
    assert gate(audit(rebuilt), confidence, 0.0, measure).safe is True  # type: ignore[arg-type]


def test_the_parameter_search_spends_fewer_evaluations_on_large_releases() -> None:
    """Each evaluation reads every cell: above FULL_SEARCH_CELLS the budget shrinks in
    proportion, never below MIN_EVALUATIONS (a count, not a clock: the same on any machine)."""
    import numpy as np

    from airflow_privacy.core.advice import (
        FULL_SEARCH_CELLS,
        MAX_EVALUATIONS,
        MIN_EVALUATIONS,
        _budget,
    )

    def release(groups: int, values: int) -> Bucketization:
        return Bucketization.from_group_counts(np.ones((groups, values), dtype=np.int64))

    assert _budget(release(100, 10)) == MAX_EVALUATIONS
    assert _budget(release(FULL_SEARCH_CELLS // 10, 10)) == MAX_EVALUATIONS
    assert _budget(release(FULL_SEARCH_CELLS // 5, 10)) == MAX_EVALUATIONS // 2
    assert _budget(release(FULL_SEARCH_CELLS, 20)) == MIN_EVALUATIONS


def test_no_costly_per_group_test_on_a_large_release() -> None:
    """(c,k)-safety tests every group on its own, and one evaluation costs what the check
    did: above COSTLY_GROUPS groups no advice is computed for it (the check's value line
    says the level reached); k-anonymity's test is a vector comparison, advised at any
    size."""
    from airflow_privacy.core.advice import COSTLY_GROUPS

    rows = [(f"g{i}", v, 1) for i in range(COSTLY_GROUPS + 1) for v in "ab"]
    rows += [("solo", "a", 1)]
    b = Bucketization.from_counts(rows, ["q"], "s")
    assert suppression_advice(b, create("ck-safety", {"c": 0.9, "k": 0})) is None
    small = Bucketization.from_counts([("g", "a", 2), ("g", "b", 1)], ["q"], "s")
    assert parameter_advice(small, "ck-safety", {"c": 0.5, "k": 0}, 2 / 3) is not None
    assert parameter_advice(b, "ck-safety", {"c": 0.5, "k": 0}, 1.0) is None
    found = suppression_advice(b, create("k-anonymity", {"k": 2}))
    assert found is not None and found.groups == ["q=solo"]
