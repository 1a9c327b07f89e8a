"""The release model: a :class:`ReleaseSpec` and its sufficient statistics (a
:class:`Bucketization`).

A *release* is a table of records. Its QI-groups (equivalence classes, or buckets of an
Anatomy-style release) are the distinct combinations of the *group columns*. Every engine
works on the bucketization only: for each group ``b`` the count ``n_b(s)`` of every sensitive
value ``s`` (Martin et al. 2007, section 2.1, notation ``n_b``, ``n_b(s)``). The same
statistics come from a pandas frame, an Arrow table, or a SQL ``GROUP BY`` pushed down to a
warehouse (:meth:`Bucketization.from_counts`).

A blank sensitive value (null, empty or whitespace only) is never counted as a category of
its own: the readers of :mod:`airflow_privacy.core.io` and :meth:`Bucketization.from_counts`
refuse it, or publish it as the ``missing_as`` value the caller gives.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.cells import blank_cells_message, check_missing_as, describe_columns
from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

T = TypeVar("T")
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class ReleaseSpec:
    """Which columns of a release mean what.

    ``group_columns`` define the QI-groups (generalized QI columns, or a bucket id);
    ``quasi_identifiers`` are the columns an adversary can link on (defaults to the group
    columns); ``sensitive`` is the one sensitive attribute; ``hierarchies`` optionally maps a
    QI column to the path of its ARX hierarchy file.
    """

    sensitive: str
    group_columns: tuple[str, ...]
    quasi_identifiers: tuple[str, ...] = ()
    hierarchies: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.sensitive:
            raise InputError("the sensitive column name is empty")
        if not self.group_columns:
            raise InputError(f"at least one group column is required ({opt('group')})")
        object.__setattr__(self, "group_columns", tuple(self.group_columns))
        object.__setattr__(self, "quasi_identifiers", tuple(self.quasi_identifiers))
        dupes = sorted({c for c in self.group_columns if self.group_columns.count(c) > 1})
        if dupes:
            raise InputError(f"group column {dupes[0]!r} is given more than once")
        if self.sensitive in self.group_columns:
            raise InputError(
                f"column {self.sensitive!r} cannot be both the sensitive column and a group column"
            )

    @property
    def qis(self) -> tuple[str, ...]:
        """The quasi-identifiers: explicit ones, or the group columns."""
        return self.quasi_identifiers or self.group_columns

    def required_columns(self) -> tuple[str, ...]:
        """Columns a release table must have for this spec."""
        return (*self.group_columns, self.sensitive)


@dataclass(frozen=True)
class Bucketization:
    """Per-group sensitive-value counts: the sufficient statistics of a release.

    ``counts[g, v]`` is ``n_b(s)`` for group ``groups[g]`` and value ``values[v]``. Every
    group has at least one record. Random-worlds assumption (Martin et al. 2007, section
    2.2): every assignment of a group's sensitive multiset to its people is equally likely,
    and groups are independent.

    ``benign`` is the set of sensitive values whose disclosure is not a breach ("none",
    "no affairs"), declared by the user for the sensitive attribute and shared by every
    criterion of the release: the background-knowledge engines maximise the adversary's
    confidence only over the other values (docs/worst-case-engine.md, "Benign values").
    Labels that do not occur in the release are kept (a monthly release may lack one) and
    ignored by the engines.

    ``population`` (optional) holds, for every group ``g``, the size ``F_g`` of the matching
    class of a population table (the population's records with the same group values,
    sample included, so ``F_g >= n_g``), and ``population_rest`` the sizes of the
    population's classes that no record of the release falls in: the counts k-map against a
    population table and delta-presence need (Sweeney 2002, section 4; Nergiz, Atzori &
    Clifton 2007, Definition 4; docs/kmap-delta-presence.md). ``None``: no population given.
    """

    group_columns: tuple[str, ...]
    sensitive: str
    groups: tuple[tuple[str, ...], ...]
    values: tuple[str, ...]
    counts: IntArray
    benign: frozenset[str] = frozenset()
    population: IntArray | None = None
    population_rest: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        counts = np.asarray(self.counts, dtype=np.int64)
        if counts.ndim != 2:
            raise InputError("counts must be a 2-D array (groups x sensitive values)")
        if counts.shape != (len(self.groups), len(self.values)):
            raise InputError(
                f"counts has shape {counts.shape}, expected "
                f"({len(self.groups)} groups, {len(self.values)} values)"
            )
        if counts.shape[0] == 0:
            raise InputError("the release has no records")
        if (counts < 0).any():
            raise InputError("counts must be non-negative")
        empty = np.flatnonzero(counts.sum(axis=1) == 0)
        if empty.size:
            raise InputError(f"group {self.groups[int(empty[0])]!r} has no records")
        counts.setflags(write=False)
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "benign", frozenset(str(v) for v in self.benign))
        self._check_population()

    def _check_population(self) -> None:
        if self.population is None:
            if self.population_rest:
                raise InputError("population_rest is given without population")
            return
        pop = np.asarray(self.population, dtype=np.int64)
        if pop.shape != (self.counts.shape[0],):
            raise InputError(
                f"population has shape {pop.shape}, expected ({self.counts.shape[0]} groups,)"
            )
        sizes = self.counts.sum(axis=1)
        short = np.flatnonzero(pop < sizes)
        if short.size:
            g = int(short[0])
            more = f" ({short.size} groups are)" if short.size > 1 else ""
            raise InputError(
                f"{opt('population')} does not contain the release: group "
                f"'{self.group_label(g)}' has {int(sizes[g])} records in the release but "
                f"{int(pop[g])} in the population{more}"
            )
        rest = tuple(int(x) for x in self.population_rest)
        if any(x < 1 for x in rest):
            raise InputError("population_rest must hold class sizes >= 1")
        pop.setflags(write=False)
        object.__setattr__(self, "population", pop)
        object.__setattr__(self, "population_rest", rest)

    def with_population(
        self, population: Sequence[int] | IntArray, rest: Iterable[int] = ()
    ) -> Bucketization:
        """The same release with population class sizes (class doc): ``population[g]`` for
        group ``g``, ``rest`` for the population classes without a release record."""
        return replace(
            self, population=np.asarray(population, dtype=np.int64), population_rest=tuple(rest)
        )

    def with_population_classes(self, classes: Mapping[tuple[str, ...], int]) -> Bucketization:
        """The same release with the sizes of a population's classes, keyed by their group
        values as text (``classes[key]``: the population's records with those values): each
        group gets its class, the classes no group falls in are the rest. A group the
        population lacks is bad input naming it (and the option ``population``)."""
        keys = [tuple(str(v) for v in g) for g in self.groups]
        missing = [g for g, k in enumerate(keys) if k not in classes]
        if missing:
            g = missing[0]
            more = f" ({len(missing)} groups are missing)" if len(missing) > 1 else ""
            raise InputError(
                f"{opt('population')} does not contain the release: group "
                f"'{self.group_label(g)}' ({int(self.sizes[g])} records) has no record in the "
                f"population, counted on the same group columns{more}"
            )
        own = set(keys)
        rest = [int(n) for k, n in classes.items() if k not in own]
        return self.with_population([int(classes[k]) for k in keys], rest)

    @property
    def population_records(self) -> int | None:
        """The population's size (``None`` without a population)."""
        if self.population is None:
            return None
        return int(self.population.sum()) + sum(self.population_rest)

    def with_benign(self, values: Iterable[str]) -> Bucketization:
        """The same release with the benign values ``values`` (replacing any declared)."""
        return replace(self, benign=frozenset(str(v) for v in values))

    @cached_property
    def benign_mask(self) -> npt.NDArray[np.bool_]:
        """``benign_mask[v]``: whether ``values[v]`` is declared benign."""
        out = np.array([v in self.benign for v in self.values], dtype=bool)
        out.setflags(write=False)
        return out

    @property
    def benign_absent(self) -> tuple[str, ...]:
        """Declared benign values that do not occur in the release (sorted)."""
        return tuple(sorted(self.benign - set(self.values)))

    def benign_parameters(self) -> dict[str, Any]:
        """What a result records of the benign values: ``{"benign": [...]}`` (sorted), empty
        when none is declared, so results without benign values are unchanged."""
        return {"benign": sorted(self.benign)} if self.benign else {}

    def benign_details(self) -> dict[str, Any]:
        """``{"benign_absent": [...]}`` when a declared benign value does not occur in the
        release (not an error: a monthly release may lack it), else empty."""
        absent = self.benign_absent
        return {"benign_absent": list(absent)} if absent else {}

    # ------------------------------------------------------------------ views
    @property
    def n_groups(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    @cached_property
    def sizes(self) -> IntArray:
        """``n_b`` for every group."""
        out: IntArray = self.counts.sum(axis=1)
        out.setflags(write=False)
        return out

    def sorted_counts(self) -> IntArray:
        """Each group's counts in decreasing order: ``n_b(s_b^0) >= n_b(s_b^1) >= ...``."""
        out: IntArray = -np.sort(-self.counts, axis=1)
        return out

    def row_order(self, g: int) -> IntArray:
        """Value indices of group ``g`` in decreasing order of frequency (ties: label order),
        i.e. ``s_b^0, s_b^1, ...``."""
        out: IntArray = np.argsort(-self.counts[g], kind="stable")
        return out

    def value_order(self) -> IntArray:
        """Per group, the value indices in decreasing order of frequency (stable by label);
        computed once (read-only)."""

        def order() -> IntArray:
            out: IntArray = np.argsort(-self.counts, axis=1, kind="stable")
            out.setflags(write=False)
            return out

        return self.memo("value_order", order)

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A value derived from this bucketization, computed on first use and kept with it
        (its fields never change: the counts are read-only, and a change such as
        :meth:`with_benign` makes a new bucketization). For derived arrays several engines
        ask for, e.g. the worst-case engine's targets."""
        store: dict[str, Any] = self.__dict__.setdefault("_memo", {})
        if key not in store:
            store[key] = compute()
        return cast("T", store[key])

    def group_label(self, g: int) -> str:
        """Human-readable descriptor of group ``g``: ``age=20-39, sex=*``."""
        return ", ".join(
            f"{c}={v}" for c, v in zip(self.group_columns, self.groups[g], strict=True)
        )

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_arrow(
        cls, table: pa.Table, spec: ReleaseSpec, *, weights: str | None = None
    ) -> Bucketization:
        """Count a release held as an Arrow table (the fast path used by the CLI); with
        ``weights``, each row stands for that column's number of records (distinct rows
        and their counts, :mod:`airflow_privacy.core.parquet_stream`, whose reader has
        checked them)."""
        check_columns(table.column_names, spec)
        if table.num_rows == 0:
            raise InputError("the release is empty (0 records)")
        for col in spec.required_columns():
            nulls = table.column(col).null_count
            if nulls and weights is None:
                raise InputError(
                    f"column {col!r} has {nulls} missing value(s); fill or drop them first"
                )

        from airflow_privacy.core.counting import count_groups

        groups, labels, counts = count_groups(
            table, spec.group_columns, spec.sensitive, weights=weights
        )
        return cls(spec.group_columns, spec.sensitive, groups, labels, counts)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, spec: ReleaseSpec) -> Bucketization:
        """Count a release held as a pandas DataFrame."""
        import pyarrow as pa

        check_columns([str(c) for c in frame.columns], spec)
        sub = frame[list(spec.required_columns())]
        return cls.from_arrow(pa.Table.from_pandas(sub, preserve_index=False), spec)

    @classmethod
    def from_counts(
        cls,
        rows: Iterable[Sequence[Any]],
        group_columns: Sequence[str],
        sensitive: str,
        *,
        missing_as: str | None = None,
        source: str = "the count rows",
    ) -> Bucketization:
        """Build from ``(group values..., sensitive value, count)`` rows.

        This is the shape of ``SELECT g1, g2, s, COUNT(*) FROM release GROUP BY g1, g2, s``,
        so the check can be pushed down to a warehouse and only counts travel. A blank
        sensitive value (``None``, empty or whitespace only) is refused as the file readers
        refuse blank cells (naming ``source``), or counted as ``missing_as`` when given.
        """

        replacement = check_missing_as(missing_as)
        spec = ReleaseSpec(sensitive=sensitive, group_columns=tuple(group_columns))
        width = len(spec.group_columns) + 2
        group_pos: dict[tuple[str, ...], int] = {}
        value_pos: dict[str, int] = {}
        cells: dict[tuple[int, int], int] = {}
        blank_records = 0
        first_blank: int | None = None
        for i, row in enumerate(rows):
            if len(row) != width:
                raise InputError(f"count row {i} has {len(row)} fields, expected {width}")
            *gvals, sval, cnt = row
            if any(v is None for v in gvals):
                raise InputError(f"count row {i} has a missing group value")
            try:
                c = int(cnt)
            except (TypeError, ValueError):
                raise InputError(f"count row {i}: count {cnt!r} is not an integer") from None
            if c < 0 or c != cnt:
                raise InputError(f"count row {i}: count {cnt!r} is not a non-negative integer")
            text = None if sval is None else str(sval)
            if text is None or not text.strip():
                if c == 0:
                    continue
                if replacement is None:
                    blank_records += c
                    first_blank = i if first_blank is None else first_blank
                    continue
                text = replacement
            gkey = tuple(str(v) for v in gvals)
            g = group_pos.setdefault(gkey, len(group_pos))
            v = value_pos.setdefault(text, len(value_pos))
            cells[(g, v)] = cells.get((g, v), 0) + c
        if first_blank is not None:
            raise InputError(
                blank_cells_message(sensitive, source, blank_records, f"count row {first_blank}")
            )
        if not cells:
            raise InputError("the release is empty (no count rows)")
        counts = np.zeros((len(group_pos), len(value_pos)), dtype=np.int64)
        for (g, v), c in cells.items():
            counts[g, v] += c
        keep = counts.sum(axis=1) > 0
        groups = tuple(k for k, ok in zip(group_pos, keep, strict=True) if ok)
        return cls(spec.group_columns, sensitive, groups, tuple(value_pos), counts[keep])

    @classmethod
    def from_group_counts(
        cls,
        counts: Sequence[Sequence[int]] | IntArray,
        values: Sequence[str] | None = None,
        sensitive: str = "s",
    ) -> Bucketization:
        """Build from a plain matrix of counts (groups named ``0``, ``1``, ...): for tests
        and for callers that already hold the statistics."""
        arr = np.asarray(counts, dtype=np.int64)
        if arr.ndim != 2:
            raise InputError("counts must be a 2-D array (groups x sensitive values)")
        labels = (
            tuple(values) if values is not None else tuple(f"v{j}" for j in range(arr.shape[1]))
        )
        groups = tuple((str(g),) for g in range(arr.shape[0]))
        return cls(("group",), sensitive, groups, labels, arr)

    def normalized(self) -> Bucketization:
        """The same statistics in the order every counting backend agrees on: groups sorted
        by their label tuples, sensitive values by their labels (Python's order of text).
        Two backends that count the same release give equal normalized bucketizations, so
        the criteria (whose witnesses break ties by position) decide the same way."""
        if _ascending(self.groups) and _ascending(self.values):
            return self  # a counting that sorted already (the Arrow path) costs one look
        g_order = sorted(range(len(self.groups)), key=self.groups.__getitem__)
        v_order = sorted(range(len(self.values)), key=self.values.__getitem__)
        counts = self.counts[np.ix_(np.asarray(g_order, dtype=np.int64),
                                    np.asarray(v_order, dtype=np.int64))]  # fmt: skip
        population = None if self.population is None else self.population[g_order]
        return replace(
            self,
            groups=tuple(self.groups[g] for g in g_order),
            values=tuple(self.values[v] for v in v_order),
            counts=np.ascontiguousarray(counts),
            population=population,
        )

    # ---------------------------------------------------------------- output
    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (JSON-serializable)."""
        return {
            "group_columns": list(self.group_columns),
            "sensitive": self.sensitive,
            "values": list(self.values),
            "groups": [
                {"key": list(key), "counts": [int(c) for c in row]}
                for key, row in zip(self.groups, self.counts, strict=True)
            ],
        }


def _ascending(items: Sequence[Any]) -> bool:
    """Whether ``items`` are in (non-decreasing) order: a stable sort would keep them."""
    return all(map(operator.le, items, items[1:]))


def check_columns(present: Sequence[str], spec: ReleaseSpec) -> None:

    have = set(present)
    for col in spec.group_columns:
        if col not in have:
            raise InputError(
                f"group column {col!r} does not exist (columns: {describe_columns(present)})"
            )
    if spec.sensitive not in have:
        raise InputError(
            f"sensitive column {spec.sensitive!r} does not exist "
            f"(columns: {describe_columns(present)})"
        )
