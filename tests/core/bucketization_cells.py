"""Comparing counted releases in the backend tests: a bucketization's non-empty cells, and
the equality of two counts (or of two refusals, each an ``("error", message)`` tuple)."""

from __future__ import annotations

from typing import Any

from airflow_privacy.core.model import Bucketization


def cells(b: Bucketization) -> dict[tuple[str, ...], int]:
    """``{(group values..., sensitive value): n_b(s)}`` for every non-empty cell."""
    return {
        (*g, v): int(b.counts[i, j])
        for i, g in enumerate(b.groups)
        for j, v in enumerate(b.values)
        if b.counts[i, j]
    }


def same(a: Any, b: Any) -> None:
    """Two bucketizations are equal (columns, groups, values, counts, in order), or two
    refusals are the same message."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    assert a.groups == b.groups
    assert a.values == b.values
    assert a.counts.tolist() == b.counts.tolist()
    assert (a.group_columns, a.sensitive) == (b.group_columns, b.sensitive)
