"""What an anonymizer decides, apart from the rows it applies to: a recoding of the input.

Every anonymizer decides from the input's sufficient statistics, the histogram of its
distinct ``(QI..., sensitive)`` tuples with their record counts (LeFevre et al. 2006 and
Martin et al. 2007, section 2.1, only ever read counts), and its decision is a *recoding*:
for each histogram row, the published group each of its records goes to, or none
(suppressed). Applying it is a per-record function of the record's own values, which a
backend evaluates where the data lives (a join on a mapping table in SQL or DuckDB, a column
expression in Spark, an Arrow ``take`` in process), so no other step touches rows.

For the lattice and Mondrian every record of a histogram row goes to the same group (the
QI tuple decides it). A bucketization may spread the records of one ``(QI, sensitive)``
tuple over several buckets: ``counts`` says how many go to each; the backend numbers the
records of a tuple (in any order: they are identical in the published columns) and assigns
them in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]


class HistogramLike(Protocol):
    """What the anonymizers read of a backend's histogram
    (:class:`airflow_privacy.core.backends.histogram.Histogram`, which depends on this
    package, so it is named here by its shape): ``keys`` holds one row per distinct
    ``(qis..., sensitive)`` tuple, ``counts[r]`` its records, ``dropped`` the source's other
    columns."""

    @property
    def qis(self) -> tuple[str, ...]: ...

    @property
    def sensitive(self) -> str: ...

    @property
    def keys(self) -> pa.Table: ...

    @property
    def counts(self) -> IntArray: ...

    @property
    def dropped(self) -> tuple[str, ...]: ...


class PopulationCounts(Protocol):
    """A population table given by its counts (a ``GROUP BY`` of its QI columns where it
    lives): ``keys`` holds one row per distinct QI tuple, ``counts[r]`` its records."""

    @property
    def keys(self) -> pa.Table: ...

    @property
    def counts(self) -> IntArray: ...


@dataclass(frozen=True)
class TableHistogram:
    """A histogram counted in process (:func:`.apply.table_histogram`), with the fields of
    the backends' ``Histogram``."""

    qis: tuple[str, ...]
    sensitive: str
    keys: pa.Table
    counts: IntArray
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recoding:
    """Where the records of each histogram row are published.

    ``columns``: the published group columns, in order. ``labels[g]``: the published
    values of group ``g`` in those columns. ``row``, ``group``, ``count`` (equal lengths,
    sorted by ``row``): ``count[i]`` records of histogram row ``row[i]`` go to group
    ``group[i]``; a histogram row's records not listed are suppressed (removed). The
    sensitive column is published as it is."""

    columns: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]
    row: IntArray
    group: IntArray
    count: IntArray

    @property
    def one_group_per_row(self) -> bool:
        """True when no histogram row is split over several groups (a join on the row's
        key applies it)."""
        r = self.row
        return bool(r.shape[0] < 2 or np.all(r[1:] != r[:-1]))

    @property
    def records(self) -> int:
        """The records published."""
        return int(self.count.sum())
