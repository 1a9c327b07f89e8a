"""The heatmap rows of a Privacy-MaxEnt estimate: ``P*(s | q)`` of the riskiest QI values.

Du et al. 2008, section 3.1: ``P*(s | q)`` is the same for every record with QI value
``q``. The rows are the QI values with the largest posterior of one counted sensitive value
(the order of :meth:`MaxEntResult.top_at_risk`), the columns every sensitive value. Only
aggregates of the published release under the estimate: no named person is listed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MAX_COLUMNS = 24


def maxent_heatmap(result: Any, rows: int = 10) -> dict[str, Any]:
    """``{"values": [...], "rows": [{"label", "records", "posterior": [...]}]}`` for the
    ``rows`` QI values most at risk (a :class:`MaxEntResult`); with more than
    :data:`MAX_COLUMNS` sensitive values, the columns with the largest posteriors."""
    rel = result.release
    post = np.asarray(result.posterior, dtype=np.float64)
    counted = np.array([v not in result.not_sensitive for v in rel.values], dtype=bool)
    masked = np.where(counted[None, :], post, -1.0)
    best = masked.max(axis=1)
    order = np.lexsort((np.arange(best.size), -best))[: max(0, int(rows))]
    cols = np.arange(len(rel.values))
    if cols.size > MAX_COLUMNS and order.size:
        top_cols = np.argsort(-post[order].max(axis=0), kind="stable")[:MAX_COLUMNS]
        cols = np.sort(top_cols)
    return {
        "values": [str(rel.values[j]) for j in cols.tolist()],
        "rows": [
            {
                "label": rel.describe_qi(q),
                "records": int(rel.qi_counts[q]),
                "posterior": [min(1.0, max(0.0, float(post[q, j]))) for j in cols.tolist()],
            }
            for q in order.tolist()
        ],
    }
