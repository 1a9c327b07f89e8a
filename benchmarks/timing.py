"""Timing helper shared by the benchmarks."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest of ``repeat`` runs of ``fn`` (seconds) and the last run's result."""
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
