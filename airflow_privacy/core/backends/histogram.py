"""The histogram a backend returns for the anonymizers: distinct tuples and their counts.

``GROUP BY qi..., sensitive`` over the release, computed where the data lives (the one
row-level pass of an anonymization). ``keys`` holds the distinct tuples with the backend's
own typed values, so that a :class:`~airflow_privacy.core.anonymize.plan.Recoding` can be
joined back on them exactly; :meth:`Histogram.encoded` gives the anonymizers their input,
values as the text labels every other step uses (the Arrow path's cast to text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.anonymize.encoding import Encoded

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Histogram:
    """``keys``: one row per distinct ``(qis..., sensitive)`` tuple (columns named as in the
    source, in that order); ``counts[r]``: the records of row ``r`` (>= 1). ``dropped``: the
    source's other columns, which the release does not carry."""

    qis: tuple[str, ...]
    sensitive: str
    keys: pa.Table
    counts: IntArray
    dropped: tuple[str, ...] = ()

    @property
    def records(self) -> int:
        return int(self.counts.sum())

    def encoded(self) -> Encoded:
        """The anonymizers' input: codes of the distinct tuples, weighted by their counts
        (errors as for a table: missing values, no records)."""
        from dataclasses import replace

        from airflow_privacy.core.anonymize.encoding import encode

        enc = encode(self.keys, self.qis, self.sensitive)
        return replace(enc, dropped=self.dropped, weights=np.asarray(self.counts, np.int64))
