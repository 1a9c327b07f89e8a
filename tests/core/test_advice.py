"""The way forward is checked: for random blocked releases, applying each suggested change
(independently of the advice engine: the named groups removed from the original rows, the
release rebuilt; the suggested parameter put in the criterion) passes when re-checked, and
a suggested parameter is the strictest that passes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from airflow_privacy.core.advice import NAMED_GROUPS, parameter_advice, suppression_advice
from airflow_privacy.core.criteria.registry import create
from airflow_privacy.core.model import Bucketization

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
        if criterion.evaluate(b).safe is True:
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
        found = parameter_advice(b, name, params)
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
