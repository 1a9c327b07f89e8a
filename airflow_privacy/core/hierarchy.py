"""Generalization hierarchies: ARX CSV import and built-in interval / mask builders.

A hierarchy maps every original value of a quasi-identifier to one label per level:
level 0 is the value itself, the last level is usually ``*`` (suppressed). ARX's CSV format
(used by ``data/adult``): no header, ``;``-separated, column 0 = original value, column
``i`` = level ``i``. Full-domain generalization (Martin et al. 2007, section 2.1; Incognito,
LeFevre et al. 2005) replaces a whole column by one level.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

_EXACT_BOUND = 1 << 53  # interval bounds up to this magnitude are exact as floats


@dataclass(frozen=True)
class Hierarchy:
    """``levels[i][v]`` is the label of original value ``v`` at level ``i`` (``levels[0]`` is
    the identity)."""

    column: str
    levels: tuple[dict[str, str], ...]

    @property
    def height(self) -> int:
        """Number of levels, the original values included."""
        return len(self.levels)

    @property
    def values(self) -> tuple[str, ...]:
        """The original values, in file order."""
        return tuple(self.levels[0])

    def labels(self, level: int) -> list[str]:
        """The distinct labels of ``level``, in file order."""
        self._check_level(level)
        return list(dict.fromkeys(self.levels[level].values()))

    def generalize_value(self, value: str, level: int) -> str:
        self._check_level(level)
        try:
            return self.levels[level][value]
        except KeyError:
            raise InputError(
                f"value {value!r} of column {self.column!r} is not in its hierarchy"
            ) from None

    def generalize(self, values: Iterable[str], level: int) -> list[str]:
        """Generalize a sequence of original values to ``level``."""
        self._check_level(level)
        arr = np.asarray([str(v) for v in values], dtype=object)
        uniq, inverse = np.unique(arr, return_inverse=True)
        mapped = np.asarray([self.generalize_value(str(u), level) for u in uniq], dtype=object)
        return [str(x) for x in mapped[inverse.reshape(-1)]]

    def generalize_arrow(self, column: pa.ChunkedArray | pa.Array, level: int) -> pa.Array:
        """Generalize an Arrow column (any type; values compared as strings)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        self._check_level(level)
        as_str = pc.cast(column, pa.string()) if column.type != pa.string() else column
        enc = pc.dictionary_encode(as_str)
        if isinstance(enc, pa.ChunkedArray):
            enc = enc.combine_chunks()
        labels = [self.generalize_value(str(v), level) for v in enc.dictionary.to_pylist()]
        return pa.array(labels, type=pa.string()).take(enc.indices)

    def _check_level(self, level: int) -> None:
        if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level < self.height:
            raise InputError(
                f"level {level!r} does not exist for column {self.column!r} "
                f"(levels 0..{self.height - 1})"
            )

    # ----------------------------------------------------------------- builders
    @classmethod
    def from_rows(cls, column: str, rows: Sequence[Sequence[str]], source: str = "") -> Hierarchy:
        """Build from ARX-style rows ``[value, level1, level2, ...]``."""
        where = f" in {source}" if source else ""
        if not rows:
            raise InputError(f"hierarchy for column {column!r} is empty{where}")
        width = len(rows[0])
        levels: list[dict[str, str]] = [{} for _ in range(width)]
        for lineno, row in enumerate(rows, start=1):
            if len(row) != width:
                raise InputError(
                    f"hierarchy for column {column!r}{where}, line {lineno}: "
                    f"{len(row)} levels, expected {width}"
                )
            value = row[0]
            if value in levels[0]:
                raise InputError(
                    f"hierarchy for column {column!r}{where}, line {lineno}: "
                    f"value {value!r} appears twice"
                )
            for i, label in enumerate(row):
                levels[i][value] = label
        return cls(column=column, levels=tuple(levels))

    @classmethod
    def from_arx_csv(cls, path: str | Path, column: str | None = None) -> Hierarchy:
        """Load an ARX hierarchy file (``;``-separated, no header).

        ``column`` defaults to the file name after ``hierarchy_`` (``adult_hierarchy_age.csv``
        -> ``age``).
        """
        from airflow_privacy.core.io import read_text

        p = Path(path)
        # a regular file of bounded size, valid UTF-8 (never a FIFO or a device)
        text = read_text(p, "hierarchy", limit=64 << 20)
        name = column or p.stem.split("hierarchy_", 1)[-1]
        try:
            rows = [
                [c.strip() for c in row]
                for row in csv.reader(io.StringIO(text, newline=""), delimiter=";")
                if row
            ]
        except csv.Error as exc:
            raise InputError(f"cannot read hierarchy file {p.name}: {exc}") from None
        return cls.from_rows(name, rows, source=p.name)

    @classmethod
    def intervals(
        cls, column: str, values: Iterable[str | int | float], widths: Sequence[int]
    ) -> Hierarchy:
        """Numeric hierarchy: level ``i`` groups values into intervals of ``widths[i-1]``
        aligned at 0; a last level ``*`` is added.

        Every label means exactly the values it stands for, as the composition audit reads
        it back (:mod:`airflow_privacy.core.composition.descriptors`): when every value is
        a whole number the label is the inclusive range of whole numbers (``width=20``:
        ``20-39``); when any value has a fractional part, every label of the column is the
        half-open interval (``[20,40)``), so that ``39.5`` is not published as ``20-39``.
        Values are compared as the numbers they parse to (``float``); they must be finite
        and at most 2**53 in magnitude, where every interval bound is exact.
        """
        ws: list[int] = []
        for w in widths:
            if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w <= 0:
                raise InputError(
                    f"interval widths for {column!r} must be whole numbers > 0, got {w!r}"
                )
            ws.append(int(w))
        if ws != sorted(ws):
            raise InputError(f"interval widths for {column!r} must be positive and increasing")
        parsed: dict[str, float] = {}
        for v in dict.fromkeys(str(x) for x in values):
            try:
                num = float(v)
            except ValueError:
                raise InputError(f"value {v!r} of column {column!r} is not numeric") from None
            if not math.isfinite(num):
                raise InputError(f"value {v!r} of column {column!r} is not a finite number")
            parsed[v] = num
        whole = all(num.is_integer() for num in parsed.values())
        rows: list[list[str]] = []
        for v, num in parsed.items():
            row = [v]
            exact = Fraction(num)
            for w in ws:
                lo = math.floor(exact / w) * w
                hi = lo + w
                if max(abs(lo), abs(hi)) > _EXACT_BOUND:
                    raise InputError(
                        f"value {v!r} of column {column!r} is too large for intervals of "
                        f"width {w} (bounds up to 2**53 in magnitude)"
                    )
                row.append(f"{lo}-{hi - 1}" if whole else f"[{lo},{hi})")
            row.append("*")
            rows.append(row)
        return cls.from_rows(column, rows)

    @classmethod
    def masks(cls, column: str, values: Iterable[str], max_masked: int | None = None) -> Hierarchy:
        """Mask hierarchy: level ``i`` replaces the last ``i`` characters with ``*``
        (``13053`` -> ``1305*`` -> ``130**``); the top level is ``*``.

        A label keeps its value's length, so that it means "the values of this length with
        this prefix" (``130**``) and labels of one level never overlap. When the values have
        different lengths, a one-character value keeps its value below the top level (its
        fully masked label would be ``*``, which means any value).
        """
        vals = list(dict.fromkeys(str(v) for v in values))
        if not vals:
            raise InputError(f"no values to build a mask hierarchy for {column!r}")
        if max_masked is not None and (
            isinstance(max_masked, bool) or not isinstance(max_masked, int) or max_masked < 0
        ):
            raise InputError(f"the mask depth for {column!r} must be a whole number >= 0")
        length = max(len(v) for v in vals)
        depth = length if max_masked is None else min(max_masked, length)
        mixed = len({len(v) for v in vals}) > 1
        rows = []
        for v in vals:
            size = len(v)
            most = size if not (mixed and size <= 1) else 0
            row = [v]
            for i in range(1, depth + 1):
                m = min(i, most)
                row.append(v[: size - m] + "*" * m)
            if row[-1] != "*":
                row.append("*")
            rows.append(row)
        width = max(len(r) for r in rows)
        rows = [
            r if len(r) == width else [*r[:-1], *([r[-1]] * (width - len(r) + 1))] for r in rows
        ]
        return cls.from_rows(column, rows)


def check_hierarchy_columns(hierarchies: Mapping[str, object] | None, qis: Sequence[str]) -> None:
    """A hierarchy generalizes a quasi-identifier: one given for any other column (the
    sensitive one, a column that is not published) is a mistake, refused by name."""
    if isinstance(qis, str):
        raise InputError(f"the QIs must be a list of column names, got the text {qis!r}")
    known = list(dict.fromkeys(qis))
    for col in hierarchies or {}:
        if col not in known:
            raise InputError(
                f"a hierarchy is given for column {col!r}, which is not among the QIs "
                f"({', '.join(map(repr, known))}); give hierarchies for QI columns only"
            )


def load_hierarchies(paths: dict[str, str | Path]) -> dict[str, Hierarchy]:
    """Load ARX hierarchy files for several columns: ``{column: path}``."""
    return {col: Hierarchy.from_arx_csv(path, col) for col, path in paths.items()}


def generalize_table(
    table: pa.Table, hierarchies: dict[str, Hierarchy], levels: dict[str, int]
) -> pa.Table:
    """Full-domain generalization: replace each column in ``levels`` by that level of its
    hierarchy. Columns not named are left as they are."""
    out = table
    for col, level in levels.items():
        if col not in table.column_names:
            raise InputError(
                f"column {col!r} does not exist (columns: {', '.join(table.column_names)})"
            )
        if col not in hierarchies:
            raise InputError(f"no hierarchy for column {col!r}")
        idx = out.column_names.index(col)
        out = out.set_column(idx, col, hierarchies[col].generalize_arrow(out.column(col), level))
    return out
