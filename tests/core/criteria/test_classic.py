"""Classic criteria against reference computations written from the definitions.

The references below use plain Python (ints, Fractions, math.fsum) on lists of rows and never
call the vectorized code. Sources: Sweeney 2002 (k-anonymity); Machanavajjhala et al. 2007
(distinct / entropy / recursive (c,l)-diversity, section 4); Li, Li, Venkatasubramanian 2007
(t-closeness, EMD of section 4.2).
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria.classic import (
    distinct_l_diversity,
    entropy_l_diversity,
    k_anonymity,
    recursive_cl_diversity,
    t_closeness,
)
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError

Rows = list[list[int]]

# ------------------------------------------------------------------ references


def ref_k(rows: Rows) -> int:
    return min(sum(r) for r in rows)


def ref_distinct(rows: Rows) -> int:
    return min(sum(1 for c in r if c > 0) for r in rows)


def ref_exp_entropy(row: list[int]) -> float:
    n = sum(row)
    h = -math.fsum((c / n) * math.log(c / n) for c in row if c > 0)
    return math.exp(h)


def ref_entropy_passes_exactly(row: list[int], l: int) -> bool:  # noqa: E741
    """exp(H) >= l  <=>  n^n >= l^n * prod c^c (exact integer arithmetic, integer l)."""
    n = sum(row)
    prod = 1
    for c in row:
        if c > 0:
            prod *= c**c
    return bool(n**n >= l**n * prod)


def ref_recursive_ratio(row: list[int], l: int) -> Fraction | None:  # noqa: E741
    """r_1 / (r_l + ... + r_m) with r sorted decreasingly; None if fewer than l values."""
    r = sorted((c for c in row if c > 0), reverse=True)
    if len(r) < l:
        return None
    return Fraction(r[0], sum(r[l - 1 :]))


def ref_emd(row: list[int], total: list[int], order: list[int] | None) -> Fraction:
    """EMD between a group and the table, exact. ``order``: value indices in ground order
    (ordered distance) or None (equal distance). Only values present in the table count."""
    n, big_n = sum(row), sum(total)
    idx = [v for v in range(len(total)) if total[v] > 0]
    if order is not None:
        idx = [v for v in order if total[v] > 0]
    m = len(idx)
    if m <= 1:
        return Fraction(0)
    diffs = [Fraction(row[v], n) - Fraction(total[v], big_n) for v in idx]
    if order is None:
        return sum((abs(d) for d in diffs), Fraction(0)) / 2
    acc, out = Fraction(0), Fraction(0)
    for d in diffs:
        acc += d
        out += abs(acc)
    return out / (m - 1)


def typed(limit: float) -> Fraction:
    """The rational a float limit stands for: the decimal it prints as, i.e. what the user
    typed (docs/classic-criteria.md, "Verdicts at the threshold")."""
    return Fraction(repr(limit))


def totals_of(rows: Rows) -> list[int]:
    return [sum(col) for col in zip(*rows, strict=True)]


def bucket(rows: Rows, values: list[str] | None = None) -> Bucketization:
    return Bucketization.from_group_counts(rows, values=values)


# ------------------------------------------------------------------ strategies


@st.composite
def count_rows(draw: st.DrawFn, max_groups: int = 6, max_values: int = 5) -> Rows:
    n_values = draw(st.integers(1, max_values))
    n_groups = draw(st.integers(1, max_groups))
    rows = draw(
        st.lists(
            st.lists(st.integers(0, 7), min_size=n_values, max_size=n_values),
            min_size=n_groups,
            max_size=n_groups,
        )
    )
    for r in rows:
        if sum(r) == 0:
            r[draw(st.integers(0, n_values - 1))] = 1
    return rows


small_fractions = st.builds(Fraction, st.integers(0, 40), st.integers(1, 20))


# ------------------------------------------------------------- property tests


@settings(max_examples=300, deadline=None)
@given(count_rows(), st.integers(1, 12))
def test_k_anonymity_matches_definition(rows: Rows, k: int) -> None:
    res = k_anonymity(bucket(rows), k)
    assert res.value == ref_k(rows)
    assert res.safe == all(sum(r) >= k for r in rows)
    g = res.witness["group"]  # type: ignore[index]
    assert sum(rows[g]) == res.value
    assert res.details["failing_groups"] == sum(1 for r in rows if sum(r) < k)


@settings(max_examples=300, deadline=None)
@given(count_rows(), st.integers(1, 6))
def test_distinct_l_diversity_matches_definition(rows: Rows, l: int) -> None:  # noqa: E741
    res = distinct_l_diversity(bucket(rows), l)
    assert res.value == ref_distinct(rows)
    assert res.safe == all(sum(1 for c in r if c > 0) >= l for r in rows)
    g = res.witness["group"]  # type: ignore[index]
    assert res.witness["distinct_values"] == sum(1 for c in rows[g] if c > 0)  # type: ignore[index]


@settings(max_examples=300, deadline=None)
@given(count_rows(), st.integers(1, 6))
def test_entropy_l_diversity_matches_definition(rows: Rows, l: int) -> None:  # noqa: E741
    res = entropy_l_diversity(bucket(rows), l)
    expected = min(ref_exp_entropy(r) for r in rows)
    assert res.value == pytest.approx(expected, rel=1e-12)
    exact = [ref_entropy_passes_exactly(r, l) for r in rows]
    # whole l: exactly the definition, at log l too (no false failure, no false pass)
    assert res.safe == all(exact)
    assert res.details["failing_groups"] == exact.count(False)
    assert res.details["decision"] == "exact near the limit"


@settings(max_examples=300, deadline=None)
@given(count_rows(), st.integers(1, 5), small_fractions.filter(lambda f: f > 0))
def test_recursive_cl_diversity_matches_definition(
    rows: Rows,
    l: int,  # noqa: E741
    c: Fraction,
) -> None:
    res = recursive_cl_diversity(bucket(rows), float(c), l)
    ratios = [ref_recursive_ratio(r, l) for r in rows]
    if any(x is None for x in ratios):
        assert res.value == math.inf
    else:
        worst = max(x for x in ratios if x is not None)
        # one correctly rounded division of integers
        assert res.value == float(worst)
    # the definition itself: r_1 < c (r_l + ... + r_m) in every group, with c the float given
    cf = typed(float(c))
    expected_safe = True
    for r in rows:
        srt = sorted((v for v in r if v > 0), reverse=True)
        if len(srt) < l or not srt[0] < cf * sum(srt[l - 1 :]):
            expected_safe = False
    assert res.safe == expected_safe


@settings(max_examples=300, deadline=None)
@given(count_rows(), small_fractions.filter(lambda f: f <= 1))
def test_t_closeness_equal_distance_matches_definition(rows: Rows, t: Fraction) -> None:
    labels = [f"cat{j}" for j in range(len(rows[0]))]
    res = t_closeness(bucket(rows, labels), float(t))
    total = totals_of(rows)
    emds = [ref_emd(r, total, None) for r in rows]
    assert res.details["ground_distance"] == "equal"
    assert res.value == float(max(emds))  # exact numerators, one rounding
    assert res.safe == all(e <= typed(float(t)) for e in emds)
    assert 0.0 <= res.value <= 1.0


@settings(max_examples=300, deadline=None)
@given(count_rows(), small_fractions.filter(lambda f: f <= 1), st.randoms(use_true_random=False))
def test_t_closeness_ordered_distance_matches_definition(
    rows: Rows, t: Fraction, rnd: random.Random
) -> None:
    n_values = len(rows[0])
    numbers = rnd.sample([-3, 0, 1, 2, 5, 10, 11, 100, 2.5, 0.25], n_values)
    labels = [str(x) for x in numbers]  # deliberately not in numeric order
    order = sorted(range(n_values), key=lambda j: float(numbers[j]))
    res = t_closeness(bucket(rows, labels), float(t))
    total = totals_of(rows)
    emds = [ref_emd(r, total, order) for r in rows]
    assert res.details["ground_distance"] == "ordered"
    assert res.value == float(max(emds))
    assert res.safe == all(e <= typed(float(t)) for e in emds)
    # forcing the equal distance gives the total variation distance instead
    res_eq = t_closeness(bucket(rows, labels), float(t), ordered=False)
    assert res_eq.value == float(max(ref_emd(r, total, None) for r in rows))


@settings(max_examples=200, deadline=None)
@given(count_rows(), st.randoms(use_true_random=False), st.integers(1, 4))
def test_invariant_under_permutation_of_groups_and_values(
    rows: Rows, rnd: random.Random, scale: int
) -> None:
    labels = [f"v{j}" for j in range(len(rows[0]))]
    perm_g = rnd.sample(range(len(rows)), len(rows))
    perm_v = rnd.sample(range(len(labels)), len(labels))
    rows2 = [[rows[g][v] for v in perm_v] for g in perm_g]
    b1, b2 = bucket(rows, labels), bucket(rows2, [labels[v] for v in perm_v])
    b3 = bucket([[c * scale for c in r] for r in rows], labels)
    assert k_anonymity(b1, 1).value == k_anonymity(b2, 1).value
    assert k_anonymity(b3, 1).value == scale * k_anonymity(b1, 1).value
    for b in (b2, b3):
        assert distinct_l_diversity(b, 1).value == distinct_l_diversity(b1, 1).value
        assert entropy_l_diversity(b, 1).value == pytest.approx(
            entropy_l_diversity(b1, 1).value, rel=1e-12
        )
        assert recursive_cl_diversity(b, 1, 2).value == recursive_cl_diversity(b1, 1, 2).value
        assert t_closeness(b, 1).value == pytest.approx(t_closeness(b1, 1).value, abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(count_rows())
def test_relations_between_criteria(rows: Rows) -> None:
    b = bucket(rows)
    k = k_anonymity(b, 1).value
    d = distinct_l_diversity(b, 1).value
    e = entropy_l_diversity(b, 1).value
    # group size >= distinct values >= exp(entropy) >= 1 (entropy <= log #values)
    assert k >= d >= e * (1 - 1e-12)
    assert e >= 1.0
    # recursive (c,l) with l = 1: r_1 / n <= 1 < c for any c > 1
    assert recursive_cl_diversity(b, 1.0000001, 1).safe
    # adding a value column that never occurs changes no EMD
    padded = bucket([[*r, 0] for r in rows])
    assert t_closeness(padded, 1).value == t_closeness(b, 1).value
    assert t_closeness(padded, 1).details["distinct_values_in_table"] == sum(
        1 for c in totals_of(rows) if c > 0
    )


# ------------------------------------------------------------------ edge cases


def test_single_group_is_its_own_table() -> None:
    b = bucket([[3, 1, 2]])
    assert k_anonymity(b, 6).safe and not k_anonymity(b, 7).safe
    assert distinct_l_diversity(b, 3).safe
    res = t_closeness(b, 0.0)
    assert res.value == 0.0 and res.safe
    assert t_closeness(bucket([[3, 1, 2]], ["1", "2", "3"]), 0.0).value == 0.0


def test_single_value() -> None:
    b = bucket([[4], [2]], ["only"])
    assert distinct_l_diversity(b, 1).safe and not distinct_l_diversity(b, 2).safe
    ent = entropy_l_diversity(b, 1)
    assert ent.value == 1.0 and ent.safe
    assert not entropy_l_diversity(b, 1.01).safe
    # l = 1: tail is the whole group, ratio r_1 / n = 1; strict inequality needs c > 1
    rec = recursive_cl_diversity(b, 1, 1)
    assert rec.value == 1.0 and not rec.safe
    assert recursive_cl_diversity(b, 1.5, 1).safe
    assert recursive_cl_diversity(b, 100, 2).value == math.inf
    for ordered in (None, False):
        assert t_closeness(b, 0, ordered=ordered).value == 0.0
    for ordered in (None, True, False):
        assert t_closeness(bucket([[4], [2]], ["7"]), 0, ordered=ordered).value == 0.0


def test_k_anonymity_at_threshold_and_witness() -> None:
    b = bucket([[3, 2], [1, 1], [5, 0]])
    res = k_anonymity(b, 2)
    assert res.safe and res.value == 2
    res = k_anonymity(b, 3)
    assert not res.safe
    assert res.witness == {"group": 1, "label": "group=1", "size": 2}
    assert res.details["failing_groups"] == 1
    assert res.details["records_in_failing_groups"] == 2
    assert "group 'group=1' has 2 records; 3-anonymity needs at least 3" in res.reason


def test_distinct_at_threshold() -> None:
    b = bucket([[3, 2, 0], [1, 1, 1]], ["a", "b", "c"])
    assert distinct_l_diversity(b, 2).safe
    res = distinct_l_diversity(b, 3)
    assert not res.safe and res.value == 2
    assert res.witness == {"group": 0, "label": "group=0", "distinct_values": 2, "size": 5}
    assert "distinct 3-diversity needs at least 3" in res.reason


@pytest.mark.parametrize("l", range(1, 40))
def test_entropy_exactly_l_equiprobable_values_pass(l: int) -> None:  # noqa: E741
    for mult in (1, 3, 1000):
        b = bucket([[mult] * l + [0], [mult + 1] * (l + 1)])
        res = entropy_l_diversity(b, l)
        assert res.safe, (l, mult, res.value)
        assert res.value == pytest.approx(l, rel=1e-12)
        assert not entropy_l_diversity(b, l + 0.01).safe


def test_entropy_non_uniform_exact_equality_passes() -> None:
    # p = (1/2, 1/8, 1/8, 1/8, 1/8): H = 2 log 2 = log 4 exactly
    b = bucket([[4, 1, 1, 1, 1]])
    assert ref_entropy_passes_exactly([4, 1, 1, 1, 1], 4)
    assert entropy_l_diversity(b, 4).safe
    assert not entropy_l_diversity(b, 4.000001).safe
    # just below: (5,1,1,1,1) has exp(H) < 4
    assert not entropy_l_diversity(bucket([[5, 1, 1, 1, 1]]), 4).safe


def test_entropy_real_l_and_witness() -> None:
    b = bucket([[3, 1], [2, 2]], ["x", "y"])
    res = entropy_l_diversity(b, 1.5)
    expected = ref_exp_entropy([3, 1])
    assert res.value == pytest.approx(expected) and res.safe == (expected >= 1.5)
    assert res.witness is not None
    assert res.witness["group"] == 0 and "most_frequent" not in res.witness  # no value
    assert res.witness["most_frequent_share"] == 0.75
    unsafe = entropy_l_diversity(b, 2)
    assert not unsafe.safe and "'x'" not in unsafe.reason
    assert "(its most frequent value is 75% of its 4 records)" in unsafe.reason
    assert res.parameters == {"l": 1.5}
    assert entropy_l_diversity(b, 2).parameters == {"l": 2}


def test_recursive_at_threshold_is_strict() -> None:
    # sorted (6, 2, 1): l = 2 -> tail 3, ratio 2
    b = bucket([[1, 6, 2]], ["a", "b", "c"])
    assert recursive_cl_diversity(b, 2, 2).value == 2.0
    assert not recursive_cl_diversity(b, 2, 2).safe
    assert recursive_cl_diversity(b, 2.0000001, 2).safe
    # ratio 3/10 against c written as the decimal 0.3: equal, so it fails (strict)
    b = bucket([[3, 2, 2, 2, 1]])
    res = recursive_cl_diversity(b, 0.3, 1)
    assert res.value == 0.3 and not res.safe
    assert recursive_cl_diversity(b, 0.31, 1).safe
    # l = 3 on (6, 2, 1): tail 1, ratio 6
    res = recursive_cl_diversity(bucket([[1, 6, 2]], ["a", "b", "c"]), 5, 3)
    assert res.value == 6.0 and not res.safe
    assert res.witness is not None
    assert (res.witness["r1"], res.witness["tail"]) == (6, 1)
    assert "most_frequent" not in res.witness and "'b'" not in res.reason
    assert "its most frequent value 6 times but only 1 record from the 3rd most frequent on" in (
        res.reason
    )


def test_recursive_fewer_than_l_values_fails_for_any_c() -> None:
    b = bucket([[5, 5, 0], [1, 1, 1]])
    res = recursive_cl_diversity(b, 1e9, 3)
    assert res.value == math.inf and not res.safe
    assert res.witness is not None and res.witness["group"] == 0
    assert res.details["groups_with_fewer_than_l_values"] == 1
    assert "needs at least 3" in res.reason
    # l larger than the number of value columns
    assert recursive_cl_diversity(b, 1e9, 7).value == math.inf


def test_t_closeness_at_threshold() -> None:
    # groups (0.2, 0.8) and (0.8, 0.2), table (0.5, 0.5): EMD exactly 3/10
    b = bucket([[2, 8], [8, 2]], ["a", "b"])
    res = t_closeness(b, 0.3)
    assert res.value == 0.3 and res.safe
    assert not t_closeness(b, math.nextafter(0.3, 0)).safe
    # ordered distance, values 1 < 2 < 3, group (1,0,0) vs table (1/3,1/3,1/3):
    # cumulative differences 2/3, 1/3, 0 -> EMD (2/3 + 1/3) / 2 = 1/2
    b = bucket([[1, 0, 0], [0, 1, 0], [0, 0, 1]], ["3", "1", "2"])
    res = t_closeness(b, 0.5)
    assert res.details["ground_distance"] == "ordered"
    assert res.value == 0.5 and res.safe
    assert res.witness is not None and res.witness["label"] in ("group=0", "group=1")
    assert not t_closeness(b, 0.49).safe
    # the same with the equal distance: TV = 2/3 for every group
    assert t_closeness(b, 0.5, ordered=False).value == float(Fraction(2, 3))


def test_t_closeness_auto_ordering() -> None:
    rows = [[1, 2, 3], [3, 2, 1]]
    assert t_closeness(bucket(rows, ["1", "2.5", "1e1"]), 1).details["ground_distance"] == (
        "ordered"
    )
    for labels in (["1", "2", "x"], ["1", "nan", "2"], ["inf", "1", "2"], ["20-39", "40-59", "*"]):
        assert t_closeness(bucket(rows, labels), 1).details["ground_distance"] == "equal"
    with pytest.raises(InputError, match="ordered"):
        t_closeness(bucket(rows, ["1", "2", "x"]), 0.5, ordered=True)


def test_t_closeness_witness_explains_gap() -> None:
    b = bucket([[9, 1], [1, 9], [5, 5]], ["yes", "no"])
    res = t_closeness(b, 0.1)
    assert not res.safe and res.value == 0.4
    w = res.witness
    assert w is not None and w["group"] == 0 and "largest_gap_value" not in w
    assert w["group_share"] == 0.9 and w["table_share"] == 0.5
    assert "group 'group=0': one sensitive value makes up 90.0% of its 10 records vs 50.0%" in (
        res.reason
    )
    assert "yes" not in res.reason and "'no'" not in res.reason
    assert res.details["failing_groups"] == 2


def test_t_closeness_float_fallback_for_huge_counts() -> None:
    # m * N^2 above 2^62 takes the float path; it must agree with the exact value
    big = 2**31
    rows = [[big, 3 * big], [3 * big, big]]
    res = t_closeness(bucket(rows), 1)
    assert res.value == pytest.approx(0.25, abs=1e-15)
    assert t_closeness(bucket(rows, ["1", "2"]), 1).value == pytest.approx(0.25, abs=1e-15)


# --------------------------------------------------------------- real releases


def test_from_frame_rows_reference_and_labels() -> None:
    rng = np.random.default_rng(7)
    n = 400
    frame = pd.DataFrame(
        {
            "age": rng.choice(["20-39", "40-59", "60-79"], n),
            "sex": rng.choice(["*", "F", "M"], n),
            "disease": rng.choice(["flu", "cold", "hiv", "cancer"], n, p=[0.5, 0.3, 0.15, 0.05]),
        }
    )
    b = Bucketization.from_frame(frame, ReleaseSpec("disease", ("age", "sex")))
    # reference straight from the rows, without the Bucketization
    groups: dict[tuple[str, str], list[str]] = {}
    for a, s, d in zip(frame["age"], frame["sex"], frame["disease"], strict=True):
        groups.setdefault((a, s), []).append(d)
    sizes = {key: len(v) for key, v in groups.items()}
    min_key = min(sizes, key=lambda key: sizes[key])
    res = k_anonymity(b, 10**6)
    assert res.value == sizes[min_key]
    assert res.witness is not None
    assert res.witness["label"] == b.group_label(res.witness["group"])
    assert res.witness["label"].startswith("age=") and ", sex=" in res.witness["label"]
    assert f"group '{res.witness['label']}' has {res.value} records" in res.reason
    assert distinct_l_diversity(b, 1).value == min(len(set(v)) for v in groups.values())
    ent = min(ref_exp_entropy([v.count(s) for s in set(v)]) for v in groups.values())
    assert entropy_l_diversity(b, 1).value == pytest.approx(ent, rel=1e-12)
    all_values = sorted(set(frame["disease"]))
    table = [int((frame["disease"] == s).sum()) for s in all_values]
    emd = max(ref_emd([v.count(s) for s in all_values], table, None) for v in groups.values())
    assert t_closeness(b, 1).value == float(emd)


def test_results_serialize_to_json() -> None:
    b = bucket([[1, 0], [2, 2]], ["a", "b"])
    for res in (
        k_anonymity(b, 2),
        distinct_l_diversity(b, 2),
        entropy_l_diversity(b, 2),
        recursive_cl_diversity(b, 2, 2),
        t_closeness(b, 0.2),
    ):
        d = json.loads(json.dumps(res.to_dict()))
        assert d["criterion"] in {
            "k-anonymity",
            "distinct-l-diversity",
            "entropy-l-diversity",
            "recursive-cl-diversity",
            "t-closeness",
        }
        assert isinstance(d["reason"], str) and d["reason"].endswith(("further", "-close"))
        assert d["witness"]["label"] == b.group_label(d["witness"]["group"])
        assert not res.safe


def test_safe_reasons() -> None:
    b = bucket([[3, 3], [4, 4]], ["a", "b"])
    assert "5-anonymous" in k_anonymity(b, 5).reason
    assert "distinct 2-diverse" in distinct_l_diversity(b, 2).reason
    assert "entropy 2-diverse" in entropy_l_diversity(b, 2).reason
    assert "recursive (1.5,2)-diverse" in recursive_cl_diversity(b, 1.5, 2).reason
    assert "0-close" in t_closeness(b, 0).reason


# ------------------------------------------------------------------ validation


B = Bucketization.from_group_counts([[1, 2], [3, 4]])


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3", None, math.nan, math.inf])
def test_k_validation(k: object) -> None:
    with pytest.raises(InputError, match=r"^k must be an integer >= 1"):
        k_anonymity(B, k)  # type: ignore[arg-type]


def test_integral_parameters_accepted() -> None:
    assert k_anonymity(B, 3.0).parameters == {"k": 3}  # type: ignore[arg-type]
    assert k_anonymity(B, np.int64(3)).parameters == {"k": 3}  # type: ignore[arg-type]
    assert distinct_l_diversity(B, np.int32(2)).safe  # type: ignore[arg-type]
    assert recursive_cl_diversity(B, np.float64(2), 2.0).parameters == {"c": 2, "l": 2}  # type: ignore[arg-type]


@pytest.mark.parametrize("l", [0, -2, 1.5, False, "2", None, math.nan])
def test_distinct_l_validation(l: object) -> None:  # noqa: E741
    with pytest.raises(InputError, match=r"^l must be an integer >= 1"):
        distinct_l_diversity(B, l)  # type: ignore[arg-type]


@pytest.mark.parametrize("l", [0, 0.999, -1, math.nan, math.inf, "2", True])
def test_entropy_l_validation(l: object) -> None:  # noqa: E741
    with pytest.raises(InputError, match=r"^l must be"):
        entropy_l_diversity(B, l)  # type: ignore[arg-type]


@pytest.mark.parametrize("c", [0, -1, math.nan, math.inf, "2", None, True])
def test_recursive_c_validation(c: object) -> None:
    with pytest.raises(InputError, match=r"^c must be"):
        recursive_cl_diversity(B, c, 2)  # type: ignore[arg-type]


@pytest.mark.parametrize("l", [0, 1.5, -3, None])
def test_recursive_l_validation(l: object) -> None:  # noqa: E741
    with pytest.raises(InputError, match=r"^l must be an integer >= 1"):
        recursive_cl_diversity(B, 2, l)  # type: ignore[arg-type]


@pytest.mark.parametrize("t", [-0.01, 1.01, math.nan, math.inf, "0.2", None, False])
def test_t_validation(t: object) -> None:
    with pytest.raises(InputError, match=r"^t must be"):
        t_closeness(B, t)  # type: ignore[arg-type]


def test_t_bounds_are_allowed_and_ordered_validation() -> None:
    assert t_closeness(B, 0).parameters["t"] == 0
    assert t_closeness(B, 1).safe
    with pytest.raises(InputError, match="ordered"):
        t_closeness(B, 0.5, ordered="yes")  # type: ignore[arg-type]


def test_not_a_bucketization() -> None:
    with pytest.raises(InputError, match="Bucketization"):
        k_anonymity([[1, 2]], 1)  # type: ignore[arg-type]


def test_large_matrix_is_fast_enough() -> None:
    import time

    rng = np.random.default_rng(0)
    counts = rng.integers(0, 5, size=(200_000, 20))
    counts[:, 0] += 1
    b = Bucketization.from_group_counts(counts)
    t0 = time.process_time()
    k_anonymity(b, 2)
    distinct_l_diversity(b, 2)
    entropy_l_diversity(b, 2)
    recursive_cl_diversity(b, 2, 2)
    t_closeness(b, 0.2)
    # CPU time (not wall-clock: a loaded machine does not fail it); vectorized: well under a
    # second in practice, a Python loop over 200,000 groups would take minutes
    assert time.process_time() - t0 < 20


# ------------------------------------------------------- verdicts at the threshold
def test_every_classic_result_states_its_tolerance_and_decision() -> None:
    b = bucket([[3, 1, 1], [2, 2, 2]], ["1", "2", "3"])
    results = [
        k_anonymity(b, 3),
        distinct_l_diversity(b, 3),
        entropy_l_diversity(b, 2),
        entropy_l_diversity(b, 2.5),
        recursive_cl_diversity(b, 2, 2),
        t_closeness(b, 0.2),
    ]
    for res in results:
        assert res.details["tolerance"] == 1e-9, res.criterion
    assert [r.details["decision"] for r in results] == [
        "exact", "exact", "exact near the limit", "float", "exact near the limit",
        "exact near the limit",
    ]  # fmt: skip


def test_k_and_distinct_l_exactly_at_the_threshold_pass() -> None:
    b = bucket([[2, 1, 0], [1, 1, 1]])  # sizes 3, 3; distinct 2, 3
    assert k_anonymity(b, 3).safe and not k_anonymity(b, 4).safe
    assert distinct_l_diversity(b, 2).safe and not distinct_l_diversity(b, 3).safe
    assert k_anonymity(b, 3.0).safe  # type: ignore[arg-type]  # an integral float: 3


def test_entropy_exactly_log_l_passes_even_when_the_float_lands_one_ulp_below() -> None:
    """Groups with H = log l exactly (Definition 4.1 with equality) pass; the float exp(H)
    of some of them is below l, which a plain float comparison would fail."""
    below = []
    for l in range(2, 60):  # noqa: E741
        rows = [[1] * l, [7] * l, [3] * l]
        if l == 4:
            rows.append([16, 4, 4, 4, 4])  # p = (1/2, 1/8, 1/8, 1/8, 1/8): H = log 4
        for row in rows:
            assert ref_entropy_passes_exactly(row, l)  # equality, from the definition
            res = entropy_l_diversity(bucket([row]), l)
            assert res.safe, (row, l, res.value)
            if res.value < l:
                below.append((l, res.value))
    assert below, "no exp(H) landed below l: the test would not test the rounding"


def test_entropy_a_hair_below_log_l_fails() -> None:
    """(30000, 30000, 30001) has H < log 3 by about 1e-10: the old relative tolerance
    (exp(H) >= l (1 - 1e-9)) passed it; the definition, checked in integers, does not."""
    row = [30000, 30000, 30001]
    assert not ref_entropy_passes_exactly(row, 3)
    assert ref_exp_entropy(row) >= 3 * (1 - 1e-9)  # inside the old tolerance
    res = entropy_l_diversity(bucket([row, [5, 5, 5]]), 3)
    assert not res.safe and res.details["failing_groups"] == 1
    assert res.witness is not None and res.witness["group"] == 0
    # a group of three values exactly equiprobable beside it passes
    assert entropy_l_diversity(bucket([[30000, 30000, 30000]]), 3).safe


def test_entropy_fractional_l_is_decided_with_the_float_band() -> None:
    row = [3, 1]
    eff = ref_exp_entropy(row)  # about 1.7548
    b = bucket([row])
    assert not entropy_l_diversity(b, eff).safe  # equal: inside the band, unsafe
    assert not entropy_l_diversity(b, eff - 0.5e-9).safe
    assert entropy_l_diversity(b, eff - 1e-8).safe
    assert not entropy_l_diversity(b, eff + 1e-8).safe


def test_recursive_ratio_equal_to_c_fails_whatever_the_float_of_c() -> None:
    b = bucket([[1, 2, 2, 2, 3]])  # sorted (3, 2, 2, 2, 1), l = 1: 3 / 10
    assert Fraction(0.3) < Fraction(3, 10)
    assert not recursive_cl_diversity(b, 0.3, 1).safe
    b = bucket([[1, 1, 1, 1, 1, 1, 1, 1, 1, 1]])  # l = 1: 1 / 10
    assert Fraction(0.1) > Fraction(1, 10)  # read as binary, c = 0.1 would pass 1/10
    res = recursive_cl_diversity(b, 0.1, 1)
    assert res.value == 0.1 and not res.safe
    assert res.details["failing_groups"] == 1
    assert recursive_cl_diversity(b, 0.10000000000000002, 1).safe  # next float up
    # c computed in floats one ulp below the ratio's decimal: 1 - 0.9 = 0.09999999999999998
    assert not recursive_cl_diversity(b, 1 - 0.9, 1).safe
    # a ratio of 2 against c = 2: fails; c = 2 + 1e-15 (beyond the float of 2): passes
    b = bucket([[1, 6, 2]], ["a", "b", "c"])
    assert not recursive_cl_diversity(b, 2, 2).safe
    assert recursive_cl_diversity(b, math.nextafter(2.0, 3.0), 2).safe


def test_t_closeness_emd_equal_to_t_passes_even_through_the_float_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Groups (1, 1) and (1, 7), table (2, 8): EMD of the first is exactly 3/10. Computed in
    plain floats (the path for huge counts) it is 0.30000000000000004, one ulp above 0.3."""
    import airflow_privacy.core.criteria.classic as classic

    rows = [[1, 1], [1, 7]]
    labels = ["a", "b"]
    exact = max(ref_emd(r, totals_of(rows), None) for r in rows)
    assert exact == Fraction(3, 10)
    assert t_closeness(bucket(rows, labels), 0.3).safe
    monkeypatch.setattr(classic, "_EXACT_EMD_LIMIT", 0)  # force the float computation
    res = t_closeness(bucket(rows, labels), 0.3)
    assert res.value == 0.30000000000000004  # the float lands above t ...
    assert res.safe  # ... but the EMD is 3/10 <= 0.3
    assert not t_closeness(bucket(rows, labels), math.nextafter(0.3, 0.0)).safe
    assert not t_closeness(bucket(rows, labels), 0.2999999999).safe
