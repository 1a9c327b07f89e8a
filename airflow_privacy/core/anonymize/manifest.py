"""What an anonymizer returns: the release, and a manifest later issues store and audit.

The manifest is plain data (``to_dict()`` is JSON-serializable): the method and its
parameters, the criteria and their results on the release (``CriterionResult.to_dict()``,
computed with the declared benign values, which ``benign`` records when there are any),
the utility numbers, the seed, and the method's own record (hierarchy levels and the search
path for the lattice, partitions for Mondrian, bucket parameters for bucketization).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.criteria.result import CriterionResult

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.anonymize.plan import Recoding
    from airflow_privacy.core.model import Bucketization

MANIFEST_VERSION = 1


def plain(value: Any) -> Any:
    """Numpy scalars and tuples as plain Python; non-finite floats as strings ("inf")."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        x = float(value)
        if not math.isfinite(x):
            return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
        return x
    if isinstance(value, np.bool_):
        return bool(value)
    return value


@dataclass(frozen=True)
class Manifest:
    """How a release was made and what it achieves."""

    method: str
    qis: tuple[str, ...]
    sensitive: str
    group_columns: tuple[str, ...]
    criteria: list[dict[str, Any]]
    parameters: dict[str, Any]
    seed: int
    records_in: int
    records_out: int
    suppressed: int
    groups: int
    dropped_columns: tuple[str, ...]
    criteria_results: list[CriterionResult]
    utility: dict[str, float | None]
    details: dict[str, Any] = field(default_factory=dict)
    benign: tuple[str, ...] = ()
    """The declared benign values the search and the criteria results used (sorted)."""

    @property
    def safe(self) -> bool:
        return all(r.safe for r in self.criteria_results)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "manifest_version": MANIFEST_VERSION,
            "method": self.method,
            "qis": list(self.qis),
            "sensitive": self.sensitive,
            "group_columns": list(self.group_columns),
            "criteria": self.criteria,
            "parameters": self.parameters,
            "seed": self.seed,
            "records_in": self.records_in,
            "records_out": self.records_out,
            "suppressed": self.suppressed,
            "groups": self.groups,
            "dropped_columns": list(self.dropped_columns),
            "safe": self.safe,
            "criteria_results": [r.to_dict() for r in self.criteria_results],
            "utility": self.utility,
            "details": self.details,
        }
        if self.benign:
            out["benign"] = list(self.benign)
        result: dict[str, Any] = plain(out)
        return result


@dataclass(frozen=True)
class AnonymizationResult:
    """The publishable release, the columns that define its groups, and its manifest.

    ``release`` holds the QI columns (generalized, or exact plus ``bucket`` for a
    bucketization) and the sensitive column; ``tables`` holds the two-table form of a
    bucketization (``"qit"``, ``"st"``) and is empty otherwise. ``source_rows[r]`` is the
    input row of release row ``r`` (for provenance and tests; never written out).
    ``bucketization`` is the release's own per-group counts. ``recoding`` is the decision
    itself (:class:`~airflow_privacy.core.anonymize.plan.Recoding`): where the records of
    each distinct input tuple go, which a backend applies where the data lives.
    """

    release: pa.Table
    group_columns: tuple[str, ...]
    manifest: Manifest
    bucketization: Bucketization
    source_rows: npt.NDArray[np.int64]
    tables: dict[str, pa.Table] = field(default_factory=dict)
    recoding: Recoding | None = None
