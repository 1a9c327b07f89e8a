"""Locating individuals in a published release from their QI values.

Ganta et al., "Composition Attacks and Auxiliary Information in Data Privacy" (KDD 2008),
section 2, Definition 6 (locatability) and Algorithm 1,
line 5 (``Get_equivalence_class(R_j, i)``). An individual whose QI values are consistent
with several groups (overlapping generalizations, a QI tuple in several buckets, equidistant
centroids) is located in *all* of them: the adversary knows the person is one of the records
of those groups, so the sensitive value set is their union, and each of those records is
equally likely to be the person's (the weights of the frequency-aware posterior). An
individual consistent with no group is *unlocatable*, with a reason (never dropped
silently: the audit counts them per release); when the value is a number and the QI has
labels read as plain text (a label form the reader does not know, e.g. another tool's
``1e-05-2e-05``), the reason names them.

* generalized: label predicates of :mod:`airflow_privacy.core.composition.descriptors`,
  evaluated once per (distinct label, distinct value) of each QI column and combined per
  group with boolean matrix products, chunked over individuals;
* bucketized: the exact QI tuple is looked up among the buckets' members (numbers compared
  numerically);
* microaggregated: the nearest centroid (Euclidean distance after dividing each QI by the
  standard deviation of the release's centroids; ties within 1e-9 relative are all kept).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.composition.descriptors import (
    hierarchy_covers,
    match_matrix,
    parse_label,
    parse_numbers,
)
from airflow_privacy.core.composition.release import PublishedRelease
from airflow_privacy.core.counting import int_view
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

    from airflow_privacy.core.hierarchy import Hierarchy

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_CELLS = 1 << 22  # individuals x groups per chunk


class CodedColumn(Sequence[str]):
    """A population column held as codes into its distinct values (``values[codes[i]]`` is
    individual ``i``'s text): 4 bytes per person where a tuple of Python strings costs about
    60, and located without a Python pass over the people."""

    __slots__ = ("codes", "values")

    def __init__(self, values: Sequence[str], codes: npt.NDArray[np.integer]) -> None:
        self.values: tuple[str, ...] = tuple(values)
        self.codes: IntArray = np.asarray(codes, dtype=np.int64)

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...
    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        if isinstance(i, slice):
            return tuple(self.values[int(c)] for c in self.codes[i])
        return self.values[int(self.codes[i])]


def column_codes(values: Sequence[str]) -> tuple[list[str], IntArray]:
    """A column's distinct texts (in order of first appearance) and each person's code."""
    if isinstance(values, CodedColumn):
        used = np.zeros(len(values.values), dtype=bool)
        used[values.codes] = True
        if used.all():
            return list(values.values), values.codes
        keep = np.flatnonzero(used)
        remap = np.full(len(values.values), -1, dtype=np.int64)
        remap[keep] = np.arange(keep.shape[0])
        return [values.values[int(k)] for k in keep], remap[values.codes]
    return _codes(values)


@dataclass(frozen=True)
class Population:
    """The people the adversary targets: their exact QI values (as the adversary knows them)
    and, optionally, keyed hashes of an identifier (to know who is in which release).

    Raw identifiers are never kept: only their HMAC (see
    :mod:`airflow_privacy.core.composition.identifiers`).
    """

    columns: Mapping[str, Sequence[str]]
    n: int
    id_hashes: tuple[str, ...] | None = None
    sensitive: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for col, vals in self.columns.items():
            if len(vals) != self.n:
                raise InputError(f"population column {col!r} has {len(vals)} values, not {self.n}")
        if self.id_hashes is not None and len(self.id_hashes) != self.n:
            raise InputError("population: one identifier hash per individual is required")
        if self.sensitive is not None and len(self.sensitive) != self.n:
            raise InputError("population: one sensitive value per individual is required")

    @classmethod
    def from_records(
        cls,
        records: Sequence[Mapping[str, object]],
        qis: Sequence[str],
        id_hashes: Sequence[str] | None = None,
        sensitive: str | None = None,
    ) -> Population:
        cols = {}
        for q in qis:
            vals = []
            for i, r in enumerate(records):
                if q not in r or r[q] is None:
                    raise InputError(f"individual {i} has no value for QI {q!r}")
                vals.append(str(r[q]).strip())
            cols[q] = tuple(vals)
        sens = tuple(str(r[sensitive]) for r in records) if sensitive else None
        hashes = tuple(id_hashes) if id_hashes is not None else None
        return cls(cols, len(records), hashes, sens)

    @classmethod
    def from_arrow(
        cls,
        table: pa.Table,
        qis: Sequence[str],
        id_column: str | None = None,
        hash_key: bytes | None = None,
        sensitive: str | None = None,
        name: str = "population",
    ) -> Population:
        """QI columns (and the identifier column, hashed with ``hash_key``) of a table of
        original records."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from airflow_privacy.core.cells import describe_columns
        from airflow_privacy.core.composition.identifiers import hash_identifiers

        present = table.column_names
        wanted = [*qis, *([id_column] if id_column else []), *([sensitive] if sensitive else [])]
        for c in wanted:
            if c not in present:
                raise InputError(
                    f"column {c!r} does not exist in {name} (columns: {describe_columns(present)})"
                )
        if table.num_rows == 0:
            raise InputError(f"{name} is empty (0 records)")

        def text(col: str) -> Any:
            arr = table.column(col)
            if arr.null_count:
                raise InputError(
                    f"column {col!r} of {name} has {arr.null_count} missing value(s); "
                    "fill or drop them first"
                )
            if pa.types.is_dictionary(arr.type):
                arr = pc.cast(arr, arr.type.value_type)
            if arr.type != pa.string():
                arr = pc.cast(arr, pa.string())
            return arr

        def strings(col: str) -> tuple[str, ...]:
            return tuple(str(v).strip() for v in text(col).to_pylist())

        def coded(col: str) -> CodedColumn:
            """The column's distinct texts, stripped (Python's ``str.strip``, as the
            individuals' values always were), and each person's code: one hash pass in
            Arrow over the column as it is typed; only its distinct values become text."""
            arr = table.column(col)
            if arr.null_count:
                text(col)  # refused with the missing values' message
            if pa.types.is_dictionary(arr.type):
                arr = pc.cast(arr, arr.type.value_type)
            enc = pc.dictionary_encode(arr).combine_chunks()
            dictionary = enc.dictionary
            if dictionary.type != pa.string():
                dictionary = pc.cast(dictionary, pa.string())
            raw = int_view(enc.indices)
            first: dict[str, int] = {}
            remap = np.fromiter(
                (first.setdefault(str(v).strip(), len(first)) for v in dictionary.to_pylist()),
                dtype=np.int64, count=len(dictionary),
            )  # fmt: skip
            return CodedColumn(list(first), remap[raw])

        cols = {q: coded(q) for q in dict.fromkeys(qis)}
        hashes = None
        if id_column:
            if hash_key is None:
                raise InputError(
                    "identifier hashes need a key: set the ledger's key environment "
                    "variable (AIRFLOW_PRIVACY_LEDGER_KEY unless the ledger names another)"
                )
            hashes = tuple(hash_identifiers(strings(id_column), hash_key))
        sens = strings(sensitive) if sensitive else None
        return cls(cols, table.num_rows, hashes, sens)


@dataclass(frozen=True)
class Location:
    """Where every individual of a population falls in one release.

    ``groups(i)`` are the groups individual ``i`` is consistent with (CSR: ``indptr``,
    ``indices``); ``weighted[i, v]`` is the expected number of ``values[v]`` records among
    them, weighted so that ``weighted[i] / weighted[i].sum()`` is the chance that a
    uniformly chosen candidate record of ``i`` has each value; ``reasons`` says why each
    unlocatable individual is.
    """

    release: PublishedRelease
    indptr: IntArray
    indices: IntArray
    weighted: FloatArray
    reasons: dict[int, str]

    @property
    def n_matches(self) -> IntArray:
        out: IntArray = np.diff(self.indptr)
        return out

    @property
    def located(self) -> BoolArray:
        out: BoolArray = self.n_matches > 0
        return out

    def groups(self, i: int) -> list[int]:
        return [int(g) for g in self.indices[self.indptr[i] : self.indptr[i + 1]]]


def locate(
    population: Population,
    release: PublishedRelease,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    covers: Mapping[str, dict[str, frozenset[str]]] | None = None,
) -> Location:
    """Locate every individual of ``population`` in ``release`` (Ganta et al., Definition 6).

    ``hierarchies`` (or their precomputed ``covers``) give the meaning of hierarchy labels
    of generalized releases. Every QI of ``release`` must be a column of the population.
    """
    for q in release.qis:
        if q not in population.columns:
            raise InputError(
                f"QI {q!r} of release {release.name!r} is not a column of the population "
                f"(columns: {', '.join(population.columns)})"
            )
    if release.kind == "generalized":
        cov = dict(covers or {})
        for q, h in (hierarchies or {}).items():
            if q not in cov:
                cov[q] = hierarchy_covers(h)
        return _locate_generalized(population, release, cov)
    if release.kind == "bucketized":
        return _locate_bucketized(population, release)
    return _locate_microaggregated(population, release)


def _codes(values: Sequence[str]) -> tuple[list[str], IntArray]:
    uniq: dict[str, int] = {}
    codes = np.fromiter((uniq.setdefault(v, len(uniq)) for v in values), dtype=np.int64)
    return list(uniq), codes


def _finish(
    release: PublishedRelease,
    inverse: IntArray,
    u_indptr: IntArray,
    u_indices: IntArray,
    u_weighted: FloatArray,
    reasons_u: dict[int, str],
) -> Location:
    """Expand per-distinct-tuple results to individuals."""
    n = len(inverse)
    counts = np.diff(u_indptr)[inverse]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    if len(u_indices):
        starts = u_indptr[:-1][inverse]
        offsets = np.arange(int(indptr[-1]), dtype=np.int64) - np.repeat(indptr[:-1], counts)
        indices = u_indices[np.repeat(starts, counts) + offsets]
    else:
        indices = np.zeros(0, dtype=np.int64)
    reasons = {i: reasons_u[int(u)] for i, u in enumerate(inverse.tolist()) if int(u) in reasons_u}
    return Location(release, indptr, indices, u_weighted[inverse], reasons)


def _csr(rows: list[IntArray], n: int) -> tuple[IntArray, IntArray]:
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=n)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    indices = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    return indptr, indices.astype(np.int64)


def _locate_generalized(
    population: Population,
    release: PublishedRelease,
    covers: Mapping[str, dict[str, frozenset[str]]],
) -> Location:
    qis = release.qis
    n_groups = release.n_groups
    value_lists: list[list[str]] = []
    value_codes: list[IntArray] = []
    blocks: list[BoolArray] = []
    label_codes: list[IntArray] = []
    for j, q in enumerate(qis):
        vals, codes = column_codes(population.columns[q])
        labels, lcodes = _codes([key[j] for key in release.keys])
        value_lists.append(vals)
        value_codes.append(codes)
        label_codes.append(lcodes)
        blocks.append(match_matrix(labels, vals, q, covers.get(q)))
    # distinct QI tuples of the population
    stacked = np.stack(value_codes, axis=1) if qis else np.zeros((population.n, 0), np.int64)
    uniq, inverse = np.unique(stacked, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    n_u = len(uniq)
    counts_f = release.counts.astype(np.float64)
    weighted = np.zeros((n_u, len(release.values)))
    hit_rows: list[IntArray] = []
    hit_groups: list[IntArray] = []
    chunk = max(1, _CELLS // max(n_groups, 1))
    for start in range(0, n_u, chunk):
        stop = min(n_u, start + chunk)
        m = np.ones((stop - start, n_groups), dtype=bool)
        for j in range(len(qis)):
            per_value = blocks[j][uniq[start:stop, j]]  # (chunk, labels)
            m &= per_value[:, label_codes[j]]
        weighted[start:stop] = m.astype(np.float64) @ counts_f
        r, c = np.nonzero(m)  # row-major: rows ascending, groups ascending within a row
        hit_rows.append(r.astype(np.int64) + start)
        hit_groups.append(c.astype(np.int64))
    indptr = np.zeros(n_u + 1, dtype=np.int64)
    indices = np.zeros(0, dtype=np.int64)
    if hit_rows:
        all_rows = np.concatenate(hit_rows)
        np.cumsum(np.bincount(all_rows, minlength=n_u), out=indptr[1:])
        indices = np.concatenate(hit_groups)
    reasons: dict[int, str] = {}
    unread: dict[int, list[str]] = {}
    for u in np.flatnonzero(np.diff(indptr) == 0).tolist():
        why = "no group covers this combination of QI values"
        for j, q in enumerate(qis):
            if not blocks[j][uniq[u, j]].any():
                value = value_lists[j][int(uniq[u, j])]
                why = f"{q}={value!r} is covered by no published {q} label"
                if not math.isnan(parse_numbers([value.strip()])[0]):
                    if j not in unread:
                        unread[j] = _text_labels(release, j, covers.get(q))
                    why += _unread_hint(unread[j])
                break
        reasons[int(u)] = why
    return _finish(release, inverse, indptr, indices, weighted, reasons)


def _text_labels(
    release: PublishedRelease, j: int, covers: dict[str, frozenset[str]] | None
) -> list[str]:
    """Labels of QI ``j`` read as plain text (not a number, an interval, a comparison, a
    mask or a hierarchy label): a number can only be covered by them if equal as text."""
    q = release.qis[j]
    out = []
    for label in dict.fromkeys(key[j] for key in release.keys):
        parsed = parse_label(label, q, covers)
        if parsed.kind == "exact" and math.isnan(parse_numbers([label.strip()])[0]):
            out.append(label)
    return out


def _unread_hint(labels: Sequence[str], show: int = 3) -> str:
    """Said beside an unlocatable number: the labels it could not be compared with."""
    if not labels:
        return ""
    more = f" and {len(labels) - show:,} more" if len(labels) > show else ""
    listed = ", ".join(repr(t) for t in labels[:show])
    return f" (labels read as plain text, not as numbers or intervals: {listed}{more})"


def _canonical(cell: str) -> str:
    """Exact QI values compare as numbers when both are numbers (``28`` == ``28.0``)."""
    s = cell.strip()
    try:
        x = float(s)
    except ValueError:
        return s
    return repr(x) if math.isfinite(x) else s


def _locate_bucketized(population: Population, release: PublishedRelease) -> Location:
    assert release.members is not None
    where: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for g, group in enumerate(release.members):
        for qi_values, mult in group:
            key = tuple(_canonical(v) for v in qi_values)
            where.setdefault(key, []).append((g, mult))
    tuples = [
        tuple(_canonical(population.columns[q][i]) for q in release.qis)
        for i in range(population.n)
    ]
    uniq_map: dict[tuple[str, ...], int] = {}
    inverse = np.fromiter(
        (uniq_map.setdefault(t, len(uniq_map)) for t in tuples), dtype=np.int64, count=population.n
    )
    n_u = len(uniq_map)
    shares = release.counts.astype(np.float64) / release.sizes[:, None]
    weighted = np.zeros((n_u, len(release.values)))
    rows: list[IntArray] = []
    reasons: dict[int, str] = {}
    for u, t in enumerate(uniq_map):
        hits = where.get(t, [])
        rows.append(np.asarray(sorted(g for g, _ in hits), dtype=np.int64))
        for g, mult in hits:
            weighted[u] += mult * shares[g]
        if not hits:
            reasons[u] = "its exact QI values appear in no bucket"
    indptr, indices = _csr(rows, n_u)
    return _finish(release, inverse, indptr, indices, weighted, reasons)


def _locate_microaggregated(population: Population, release: PublishedRelease) -> Location:
    qis = release.qis
    cent = np.array([[float(c) for c in key] for key in release.keys], dtype=np.float64)
    scale = cent.std(axis=0)
    scale[~(scale > 0)] = 1.0
    cent = cent / scale
    cols = [parse_numbers([v.strip() for v in population.columns[q]]) for q in qis]
    x = np.stack(cols, axis=1) / scale
    bad = np.isnan(x).any(axis=1)
    uniq, inverse = np.unique(np.where(np.isnan(x), np.inf, x), axis=0, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    n_u = len(uniq)
    counts_f = release.counts.astype(np.float64)
    weighted = np.zeros((n_u, len(release.values)))
    rows: list[IntArray] = []
    reasons: dict[int, str] = {}
    bad_u = np.zeros(n_u, dtype=bool)
    bad_u[inverse[bad]] = True
    chunk = max(1, _CELLS // max(release.n_groups, 1))
    for start in range(0, n_u, chunk):
        stop = min(n_u, start + chunk)
        block = uniq[start:stop]
        d2 = ((block[:, None, :] - cent[None, :, :]) ** 2).sum(axis=2)
        best = d2.min(axis=1, keepdims=True)
        m = d2 <= best * (1 + 1e-9) + 1e-12
        m[bad_u[start:stop]] = False
        weighted[start:stop] = m.astype(np.float64) @ counts_f
        for r in range(stop - start):
            rows.append(np.flatnonzero(m[r]).astype(np.int64))
    for u in np.flatnonzero(bad_u).tolist():
        i = int(np.flatnonzero(inverse == u)[0])
        q = next(q for j, q in enumerate(qis) if np.isnan(cols[j][i]))
        reasons[int(u)] = f"{q}={population.columns[q][i]!r} is not a number (nearest centroid)"
    indptr, indices = _csr(rows, n_u)
    return _finish(release, inverse, indptr, indices, weighted, reasons)
