"""The heatmap rows of a Privacy-MaxEnt estimate: ``P*(s | q)`` of the riskiest QI values.

Du et al. 2008, section 3.1: ``P*(s | q)`` is the same for every record with QI value
``q``. The rows are the QI values with the largest posterior of one counted sensitive value
(the order of :meth:`MaxEntResult.top_at_risk`). The columns are *ranks*, not values: a
row's posteriors sorted from the most to the least likely counted value (values declared
not sensitive are left out). The heatmap goes into the estimate's envelope (XCom, the
ledger, the report), and a cell "q, HIV: 0.99" is the disclosure itself; the ranked row
shows how concentrated the estimate is for ``q`` without saying on which value. The full
table goes only to the posterior file the user asks for (``maxent --output``). Only
aggregates of the release under the estimate: no named person is listed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_COLUMNS = 24


def rank_label(i: int) -> str:
    """``0 -> 1st``, ``1 -> 2nd``, ...: the column of the ``i``-th most likely value."""
    n = i + 1
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def maxent_heatmap(result: Any, rows: int = 10) -> dict[str, Any]:
    """``{"values": ["1st", "2nd", ...], "ranked": True, "rows": [{"label", "records",
    "posterior": [...]}]}`` for the ``rows`` QI values most at risk (a
    :class:`MaxEntResult`): each row's posteriors of the counted sensitive values, largest
    first, at most :data:`MAX_COLUMNS` of them (module doc)."""
    rel = result.release
    post = np.asarray(result.posterior, dtype=np.float64)
    counted = np.array([v not in result.not_sensitive for v in rel.values], dtype=bool)
    masked = np.where(counted[None, :], post, -1.0)
    best = masked.max(axis=1) if masked.size else np.zeros(0)
    order = np.lexsort((np.arange(best.size), -best))[: max(0, int(rows))]
    width = min(int(counted.sum()), MAX_COLUMNS)
    ranked = -np.sort(-post[:, counted], axis=1)[:, :width]
    return {
        "values": [rank_label(j) for j in range(width)],
        "ranked": True,
        "rows": [
            {
                "label": rel.describe_qi(q),
                "records": int(rel.qi_counts[q]),
                "posterior": [min(1.0, max(0.0, float(x))) for x in ranked[q].tolist()],
            }
            for q in order.tolist()
        ],
    }
