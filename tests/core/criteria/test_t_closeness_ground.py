"""t-closeness decides its ground distance in one place (classic.t_closeness_ground): the
check and the anonymizers' group test read the same labels the same way, so an anonymizer
never publishes a release the check then refuses (or the reverse) over how values are
ordered. Checked against the definition (Li, Li, Venkatasubramanian, ICDE 2007, section
4.2) written here with exact fractions."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.criteria import group_tests
from airflow_privacy.core.criteria.classic import t_closeness, t_closeness_ground
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

LABELS = ["1", "2.5", " 7 ", "1e3", "-4", "nan", "inf", "abc", "１２", "0x10", "3"]


def emd(group: list[int], total: list[int], labels: list[str]) -> Fraction:
    """The EMD of the definition: ordered distance |i - j| / (m - 1) over the values sorted
    numerically when every label is a finite number, else the equal distance."""
    present = [i for i, c in enumerate(total) if c]
    try:
        nums = [float(labels[i]) for i in present]
        numeric = all(abs(x) != float("inf") and x == x for x in nums)
    except ValueError:
        numeric = False
    if numeric:
        present = [i for _, i in sorted(zip(nums, present, strict=True), key=lambda t: t[0])]
    n, big_n, m = sum(group), sum(total), len(present)
    if m <= 1:
        return Fraction(0)
    d = [Fraction(group[i], n) - Fraction(total[i], big_n) for i in present]
    if numeric:
        run, out = Fraction(0), Fraction(0)
        for x in d:
            run += x
            out += abs(run)
        return out / (m - 1)
    return sum((abs(x) for x in d), Fraction(0)) / 2


@settings(max_examples=150)
@given(
    labels=st.lists(st.sampled_from(LABELS), min_size=1, max_size=5, unique=True),
    data=st.data(),
)
def test_check_and_group_test_agree_with_the_definition(
    labels: list[str], data: st.DataObject
) -> None:
    m = len(labels)
    rows = data.draw(st.lists(st.lists(st.integers(0, 4), min_size=m, max_size=m),
                              min_size=1, max_size=4))  # fmt: skip
    rows = [r for r in rows if sum(r)]
    if not rows:
        return
    t = data.draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]))
    counts = np.asarray(rows, dtype=np.int64)
    total = counts.sum(axis=0).tolist()
    want = [emd(r, total, labels) <= Fraction(t) for r in rows]
    b = Bucketization.from_group_counts(counts, values=labels)
    assert t_closeness(b, t).safe is all(want)
    test = group_tests.t_closeness(labels, t, None)
    assert test(counts, counts.sum(axis=0)).tolist() == want


def test_ordered_true_needs_numbers_in_both_places() -> None:
    with pytest.raises(InputError, match=r"^ordered=True needs numeric values of 's', but 1"):
        t_closeness_ground(["1", "x"], True, "s")
    test = group_tests.t_closeness(["1", "x"], 0.2, True)
    counts = np.array([[1, 1]], dtype=np.int64)
    with pytest.raises(InputError, match=r"^ordered=True needs numeric values of the sensitive"):
        test(counts, counts.sum(axis=0))
    assert t_closeness_ground(["1", "x"], None, "s") == (False, None)
    ordered, order = t_closeness_ground(["10", "2", "3"], None, "s")
    assert ordered and order is not None and order.tolist() == [1, 2, 0]
