"""Which attribute drives a failure: the answer for every criterion's witness.

sdcMicro's users ask which quasi-identifier drives the risk (SUDA2's per-attribute
contributions answer it for special uniques, :mod:`airflow_privacy.core.risk.suda`). For any
other criterion the witness is a group; this module answers the same question for it, from
the release's own counts: for each group column ``c``, the group the witness would fall into
if ``c`` were not published (every group that agrees with the witness on all the other
columns, merged), its size, and whether that merged group passes the criterion on its own.
A column whose removal makes the group pass is one that drives the failure; among them the
one that merges the fewest records costs the least to generalize.

"Passes on its own" is the criterion's per-group test (:meth:`Criterion.group_test`, against
the whole table's distribution for t-closeness and the likeness criteria), or the criterion
evaluated on the merged group alone when the class has no such test. For criteria decided
group by group (k-anonymity, the l-diversity family, t-closeness, ...) that is what the
release would need of the group; for background-knowledge criteria ((c,k)-safety, skyline)
it is a necessary condition (the adversary may put all his knowledge in one group), and the
sentence says "on its own".

Nothing here names a value: columns, record counts and verdicts only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.base import Criterion
    from airflow_privacy.core.model import Bucketization

__all__ = ["attribute_drivers", "drivers_sentence", "which_attribute", "witness_group"]


def witness_group(result: Mapping[str, Any]) -> int | None:
    """The group a result's witness points at (``witness.group``, or the target's group of
    a background-knowledge witness), or ``None``."""
    w = result.get("witness")
    if not isinstance(w, Mapping):
        return None
    g = w.get("group")
    if isinstance(g, int) and not isinstance(g, bool):
        return g
    target = w.get("target")
    if isinstance(target, Mapping):
        t = target.get("group")
        if isinstance(t, int) and not isinstance(t, bool):
            return t
    return None


def _judge(criterion: Criterion, b: Bucketization) -> Callable[[Any, Any], bool]:
    """``passes(merged counts, mask of the merged groups)``: the merged group on its own
    (module doc), the criterion's test built once for every column."""
    from airflow_privacy.core.criteria.base import group_test_with
    from airflow_privacy.core.model import Bucketization as B

    if criterion.needs_population():
        # decided on the group's records and its population class (k-map against a
        # population table, delta-presence): the merged class is the merged groups' classes
        pop_test = criterion.population_test()
        population = b.population
        if pop_test is None or population is None:
            return lambda merged, mask: False
        return lambda merged, mask: bool(
            pop_test(
                np.asarray([int(merged.sum())], dtype=np.int64),
                np.asarray([int(population[mask].sum())], dtype=np.int64),
            )[0]
        )
    found = group_test_with(criterion, b.values, b.benign)
    if found is not None:
        test, _ = found
        totals = b.counts.sum(axis=0)
        return lambda merged, mask: bool(test(merged[None, :].astype(np.int64), totals)[0])

    def alone(merged: Any, mask: Any) -> bool:
        one = B.from_group_counts([merged.tolist()], b.values, b.sensitive).with_benign(b.benign)
        return bool(criterion.evaluate(one).safe)

    return alone


def attribute_drivers(b: Bucketization, criterion: Criterion, group: int) -> list[dict[str, Any]]:
    """For each group column, the witness group merged over that column: ``column``,
    ``records``, ``groups`` (how many groups merge), ``passes`` (module doc). Ordered as
    the columns; a release grouped by one column has nothing to merge over but the whole
    table, which is what dropping that column would publish."""
    if b.n_groups == 0 or not 0 <= group < b.n_groups:
        return []
    passes = _judge(criterion, b)
    key = b.groups[group]
    # which groups agree with the witness on each column (a release grouped by one column
    # needs none: 14 ms of a 100,000-group (c,k) check went to an object array of the keys)
    same = [
        np.fromiter((k[i] == key[i] for k in b.groups), dtype=bool, count=b.n_groups)
        for i in range(len(key))
    ] if len(key) > 1 else []  # fmt: skip
    out: list[dict[str, Any]] = []
    for j, column in enumerate(b.group_columns):
        mask = np.ones(b.n_groups, dtype=bool)
        for i, agrees in enumerate(same):
            if i != j:
                mask &= agrees
        merged = b.counts[mask].sum(axis=0)
        out.append(
            {
                "column": column,
                "records": int(merged.sum()),
                "groups": int(mask.sum()),
                "passes": passes(merged, mask),
            }
        )
    return out


def which_attribute(
    b: Bucketization, criterion: Criterion, result: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], str] | None:
    """For a failing result: its witness group's :func:`attribute_drivers` and their
    sentence (``on its own`` when the criterion's single-group test is only necessary), or
    ``None`` when the witness names no group."""
    from airflow_privacy.core.criteria.base import group_test_with

    g = witness_group(result)
    if g is None or not b.group_columns:
        return None
    drivers = attribute_drivers(b, criterion, g)
    found = group_test_with(criterion, b.values, b.benign)
    return drivers, drivers_sentence(drivers, necessary_only=found is None or not found[1])


def drivers_sentence(drivers: list[dict[str, Any]], necessary_only: bool) -> str:
    """One sentence: which columns, left out, would let the witness group pass."""
    if not drivers:
        return ""
    alone = " on its own" if necessary_only else ""
    fixing = sorted((d for d in drivers if d["passes"]), key=lambda d: (d["records"], d["column"]))
    if fixing:
        best = fixing[0]
        others = ", ".join(repr(d["column"]) for d in fixing[1:])
        return (
            f"without {best['column']!r} the group would hold "
            f"{best['records']:,} records ({best['groups']} groups merged) and pass{alone}"
            + (f"; leaving out {others} would also do" if others else "")
        )
    biggest = max(drivers, key=lambda d: (d["records"], d["column"]))
    return (
        "leaving out any one column is not enough (the largest merge, "
        f"without {biggest['column']!r}, holds {biggest['records']:,} records and still "
        "fails): generalize several columns together"
    )
