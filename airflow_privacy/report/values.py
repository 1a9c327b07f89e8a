"""Reading an envelope's values back for a report (from a file, the ledger): a number, a whole
number, a list or a mapping, else an empty or absent value (a report shows what a check
recorded, and never fails on a field it cannot read); and the bins of the group-size
histogram. Shared by the report's sections without their importing one another."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def as_float(x: Any) -> float | None:
    """A finite number of an envelope read back (from a file, the ledger), else None: a
    report shows what a check recorded, and never fails on a field it cannot read."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    try:
        value = float(x)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def as_whole(x: Any) -> int | None:
    """A whole number of an envelope read back, else None."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    value = as_float(x)
    return int(value) if value is not None and value.is_integer() else None


def as_list(x: Any) -> list[Any]:
    return x if isinstance(x, list) else []


def as_mapping(x: Any) -> Mapping[str, Any]:
    return x if isinstance(x, Mapping) else {}


# ------------------------------------------------------------------------- utility
def size_bins(max_size: int) -> list[tuple[int, int]]:
    """Histogram bins of group sizes: 1..10 one by one, then 11-20, 21-50, 51-100, ..."""
    bins = [(s, s) for s in range(1, 11)]
    low, steps = 11, (2, 5, 10)
    scale = 10
    while low <= max_size:
        for f in steps:
            high = f * scale
            if high >= low:
                bins.append((low, high))
                low = high + 1
        scale *= 10
    return [b for b in bins if b[0] <= max_size]
