"""The threshold rules of airflow_privacy.core.thresholds, and the criterion registry that
the CLI imports at start-up (cheap import, neutral messages, bounded k).

Expected verdicts are written from the rules the module states (exact comparison with the
decimal a float limit prints as; floats unsafe within TOLERANCE * max(1, |limit|) of the
limit), with exact fractions, never by calling the functions under test.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from airflow_privacy.core import thresholds as th
from airflow_privacy.core.criteria.registry import CRITERIA, MAX_K, validate
from airflow_privacy.errors import FrontEnd, InputError, speaking

HEAVY = ("numpy", "scipy", "pandas", "pyarrow")


# ------------------------------------------------------------------ the stated tolerance
def test_tolerance_is_stated_and_small() -> None:
    assert th.TOLERANCE == 1e-9
    assert th.band(0.5) == 1e-9 and th.band(1.0) == 1e-9
    assert th.band(40.0) == pytest.approx(40e-9, rel=1e-15)  # relative above 1
    assert th.decision_details(th.EXACT) == {"tolerance": 1e-9, "decision": "exact"}
    with pytest.raises(ValueError):
        th.decision_details("approximately")  # type: ignore[arg-type]


# ------------------------------------------------------------------ floats: err towards unsafe
@pytest.mark.parametrize("c", [0.1, 0.3, 0.5, 2 / 3, 0.7, 0.95, 1.0])
def test_float_at_the_limit_or_one_ulp_below_is_not_below(c: float) -> None:
    below_by_ulp = math.nextafter(c, 0.0)
    assert not th.below(c, c)
    assert not th.below(below_by_ulp, c)  # mathematically c, computed one ulp low
    assert not th.below(c - 0.9e-9, c)  # inside the band
    assert th.below(c - 1.1e-9, c)  # outside it
    # "at most": a float equal to the limit is inside the band, so not certainly at most
    assert not th.at_most(c, c) and not th.at_most(below_by_ulp, c)
    assert th.at_most(c - 1.1e-9, c)
    # "at least": a float one ulp above the limit is not certainly at least
    assert not th.at_least(math.nextafter(c, 2.0), c) and not th.at_least(c, c)
    assert th.at_least(c + 1.1e-9, c)


@settings(max_examples=300, deadline=None)
@given(
    st.floats(min_value=1e-6, max_value=1.0),
    st.floats(min_value=-5e-9, max_value=5e-9, allow_subnormal=False),
)
def test_float_rules_match_their_statement(c: float, delta: float) -> None:
    v = c + delta
    band = Fraction(1, 10**9)
    # Fraction arithmetic on the floats themselves: no rounding in the reference; the band's
    # edges themselves (where the float subtraction rounds) are not a statement
    half_width = band * max(Fraction(1), Fraction(c))
    assume(abs(abs(Fraction(v) - Fraction(c)) - half_width) > Fraction(1, 10**15))
    assert th.below(v, c) == (Fraction(v) < Fraction(c) - half_width)
    assert th.at_most(v, c) == (Fraction(v) <= Fraction(c) - half_width)
    assert th.at_least(v, c) == (Fraction(v) >= Fraction(c) + half_width)


def test_near_is_the_band() -> None:
    assert th.near(0.3, 0.3) and th.near(0.3 + 0.9e-9, 0.3) and th.near(0.3 - 0.9e-9, 0.3)
    assert not th.near(0.3 + 1.1e-9, 0.3) and not th.near(math.inf, 0.3)
    assert th.near(40.0 + 30e-9, 40.0) and not th.near(40.0 + 50e-9, 40.0)


# ------------------------------------------------------------------ exact values
def test_a_float_limit_stands_for_the_decimal_it_prints_as() -> None:
    assert Fraction(0.1) > Fraction(1, 10) and Fraction(0.3) < Fraction(3, 10)  # the problem
    assert th.exact_limit(0.1) == Fraction(1, 10)
    assert th.exact_limit(0.3) == Fraction(3, 10)
    assert th.exact_limit(2 / 3) == Fraction(6666666666666666, 10**16)
    assert th.exact_limit(7) == 7 and th.exact_limit(Fraction(2, 7)) == Fraction(2, 7)
    with pytest.raises(ValueError):
        th.exact_limit(math.inf)


def test_exact_values_follow_the_definition_at_equality() -> None:
    # 1/10 < 0.1 is false, although 1/10 < Fraction(0.1) is true
    assert Fraction(1, 10) < Fraction(0.1)
    assert not th.below(Fraction(1, 10), 0.1)
    assert th.below(Fraction(1, 10), 0.10000000000000002)
    # 3/10 <= 0.3 holds, although 3/10 > Fraction(0.3)
    assert Fraction(3, 10) > Fraction(0.3)
    assert th.at_most(Fraction(3, 10), 0.3)
    assert not th.at_most(Fraction(3, 10), math.nextafter(0.3, 0.0))
    # an exact value one part in 10^17 below the limit: exactly below (no band for exact values)
    assert th.below(Fraction(3, 10) - Fraction(1, 10**17), 0.3)
    # integers
    assert th.at_least(5, 5) and not th.at_least(4, 5) and th.at_least(5, 4.5)
    assert th.at_most(Fraction(100, 3), 33.333333333333336)  # typed 33.333333333333336
    assert not th.at_most(Fraction(100, 3), 33.33333333333333)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 50), st.integers(1, 50), st.integers(0, 60), st.integers(1, 60))
def test_exact_rules_match_the_typed_decimal(p: int, q: int, a: int, b: int) -> None:
    value = Fraction(p, q)
    limit = float(f"{a / b:.6g}")  # a limit as a user would type it
    typed = Fraction(f"{a / b:.6g}")
    assert th.below(value, limit) == (value < typed)
    assert th.at_most(value, limit) == (value <= typed)
    assert th.at_least(value, limit) == (value >= typed)


# ------------------------------------------------------------------ MaxEnt verdict
def test_maxent_safe_rule() -> None:
    c = 0.7
    assert not th.maxent_safe(0.7, c)  # equal
    assert not th.maxent_safe(math.nextafter(0.7, 0.0), c)  # exactly c computed one ulp low
    assert not th.maxent_safe(0.7 - 0.5e-9, c)
    assert th.maxent_safe(0.7 - 1.5e-9, c)
    # the solver's allowance widens the band when it is larger than the tolerance
    assert not th.maxent_safe(0.7 - 1.5e-9, c, residual=1e-6)
    assert th.maxent_safe(0.7 - 1.5e-6, c, residual=1e-6)
    with pytest.raises(ValueError):
        th.maxent_safe(math.nan, c)
    with pytest.raises(ValueError):
        th.maxent_safe(0.5, c, residual=-1.0)


# ------------------------------------------------------------------ registry
def test_registry_imports_without_numpy_scipy_pandas_pyarrow() -> None:
    code = (
        "import sys, json\n"
        "import airflow_privacy.core.criteria.registry as r\n"
        "import airflow_privacy.core.thresholds\n"
        "assert r.CRITERIA and r.validate('ck-safety', {'c': 0.5, 'k': 2}) == {'c': 0.5, 'k': 2}\n"
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(out.stdout) == []


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("ck-safety", {"c": 2, "k": 1}, "ck-safety: c must be in (0, 1], got 2"),
        ("ck-safety", {"c": 0, "k": 1}, "ck-safety: c must be in (0, 1], got 0"),
        ("ck-safety", {"c": "abc", "k": 1}, "ck-safety: c must be a number in (0, 1], got 'abc'"),
        ("ck-safety", {"c": 0.5, "k": -1}, "ck-safety: k must be a whole number >= 0, got -1"),
        ("ck-safety", {"c": 0.5, "k": 2.5}, "ck-safety: k must be a whole number >= 0, got 2.5"),
        ("negation-safety", {"c": 0.5, "k": "two"}, "negation-safety: k must be a whole number"),
        ("k-anonymity", {"k": 0}, "k-anonymity: k must be a whole number >= 1, got 0"),
        ("entropy-l-diversity", {"l": 0.5}, "entropy-l-diversity: l must be a number >= 1"),
        ("recursive-cl-diversity", {"c": -1, "l": 2}, "recursive-cl-diversity: c must be a"),
        ("recursive-cl-diversity", {"c": math.nan, "l": 2}, "c must be a number > 0, got nan"),
        ("t-closeness", {"t": 1.5}, "t-closeness: t must be in [0, 1], got 1.5"),
        ("ck-safety", {"c": 0.5}, "criterion ck-safety needs k"),
        ("recursive-cl-diversity", {}, "criterion recursive-cl-diversity needs c and l"),
        ("k-anonymity", {"k": 2, "t": 0.1}, "t does not apply to criterion k-anonymity"),
        ("k-anonymity", {"k": 2, "points": ["0,0,0,0.5"]}, "point does not apply to criterion"),
    ],
)  # fmt: skip
def test_registry_messages_are_neutral(name: str, params: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as info:
        validate(name, params)
    front_ends: tuple[FrontEnd, ...] = ("cli", "airflow")
    for front_end in front_ends:
        with speaking(front_end):
            text = str(info.value)
        assert message in text and "--" not in text, (front_end, text)
        assert len(text.splitlines()) == 1


def test_registry_bounds_k_before_anything_is_read() -> None:
    assert MAX_K == 10**9
    for name in ("ck-safety", "negation-safety"):
        assert validate(name, {"c": 0.5, "k": MAX_K}) == {"c": 0.5, "k": MAX_K}
        with pytest.raises(InputError, match=rf"^{name}: k must be at most 1,000,000,000"):
            validate(name, {"c": 0.5, "k": MAX_K + 1})
        with pytest.raises(InputError, match="at most"):
            validate(name, {"c": 0.5, "k": 1e300})
    assert set(CRITERIA) >= {"ck-safety", "negation-safety", "skyline"}


@pytest.mark.parametrize(
    "limit", [1.0, 0.5, 0.2, 0.05, 0.1, 0.3, 1 / 3, 0.3333, 0.142857, 1e-3, 0.0999, 7e-5]
)
def test_smallest_size_at_most_is_the_first_size_whose_inverse_is_at_most(limit: float) -> None:
    from fractions import Fraction

    from airflow_privacy.core.thresholds import at_most, smallest_size_at_most

    n = smallest_size_at_most(limit)
    assert at_most(Fraction(1, n), limit)
    assert n == 1 or not at_most(Fraction(1, n - 1), limit)
    # the limit as written: 1/3 is above 0.3333 and above 0.3333333333333333
    assert smallest_size_at_most(0.3333) == 4 and smallest_size_at_most(1 / 3) == 4
    assert smallest_size_at_most(1e-320) == 10**320
