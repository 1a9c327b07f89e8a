"""Plain data to strict JSON (shared by the CLI, the operators and the ledger)."""

from __future__ import annotations

import math
from typing import Any


def json_safe(value: Any) -> Any:
    """Strict JSON: infinite values (e.g. recursive (c,l)'s ratio for a group with fewer than
    l values) become the strings "inf" / "-inf"; NaN becomes null; tuples become lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
