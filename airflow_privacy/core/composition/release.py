"""What a release published, as the composition audit and the ledger see it.

Ganta, Kasiviswanathan, Smith, "Composition Attacks and Auxiliary Information in Data
Privacy" (KDD 2008), section 2: a partition-based release is a set of
equivalence classes (Definition 2); for each the *descriptor* an adversary locates people
with, and the exact multiset of sensitive values (property (i) of section 1.1.1, "exact
sensitive value disclosure"). A :class:`PublishedRelease` holds exactly that and nothing
else, so it can be stored in the ledger without raw records:

* ``generalized`` (k-anonymity, Mondrian, full-domain): one group per distinct combination
  of the generalized QI labels (``20-29``, ``<30``, ``130**``, ``*``, hierarchy labels);
* ``bucketized`` (Anatomy): QIs are published exactly, beside a bucket id; a group is a
  bucket and its descriptor is the multiset of exact QI tuples of its members;
* ``microaggregated``: QIs are replaced by the group's centroid (numbers); people are
  located at the nearest centroid (section 2, "Locatability").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]
Kind = Literal["generalized", "bucketized", "microaggregated"]
KINDS: tuple[Kind, ...] = ("generalized", "bucketized", "microaggregated")

Member = tuple[tuple[str, ...], int]
"""An exact QI tuple of a bucketized release and how many records of the bucket have it."""


def check_kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise InputError(f"unknown release kind {kind!r} (known: {', '.join(KINDS)})")
    return kind


@dataclass(frozen=True)
class PublishedRelease:
    """Group descriptors and sensitive multisets of one release.

    ``keys[g]`` is group ``g``'s descriptor: its QI labels in the order of ``qis``
    (generalized), its centroid as decimal strings (microaggregated), or ``(bucket id,)``
    (bucketized, whose ``members[g]`` lists the exact QI tuples of the bucket with their
    multiplicities). ``counts[g, v]`` is the number of records of group ``g`` with sensitive
    value ``values[v]``. ``name`` is only used in messages and reports.
    """

    kind: Kind
    qis: tuple[str, ...]
    sensitive: str
    keys: tuple[tuple[str, ...], ...]
    values: tuple[str, ...]
    counts: IntArray
    members: tuple[tuple[Member, ...], ...] | None = None
    name: str = "release"

    def __post_init__(self) -> None:
        check_kind(self.kind)
        object.__setattr__(self, "qis", tuple(self.qis))
        if not self.qis:
            raise InputError(f"release {self.name!r} has no quasi-identifiers")
        dupes = sorted({q for q in self.qis if self.qis.count(q) > 1})
        if dupes:
            raise InputError(f"quasi-identifier {dupes[0]!r} is given more than once")
        if self.sensitive in self.qis:
            raise InputError(
                f"column {self.sensitive!r} cannot be both the sensitive column and a QI"
            )
        counts = np.asarray(self.counts, dtype=np.int64)
        if counts.ndim != 2 or counts.shape != (len(self.keys), len(self.values)):
            raise InputError(
                f"release {self.name!r}: counts must be a {len(self.keys)} x "
                f"{len(self.values)} matrix (groups x sensitive values)"
            )
        if counts.shape[0] == 0:
            raise InputError(f"release {self.name!r} has no records")
        if (counts < 0).any():
            raise InputError(f"release {self.name!r}: counts must be non-negative")
        if (counts.sum(axis=1) == 0).any():
            g = int(np.flatnonzero(counts.sum(axis=1) == 0)[0])
            raise InputError(f"release {self.name!r}: group {self.keys[g]!r} has no records")
        if len(set(self.values)) != len(self.values):
            raise InputError(f"release {self.name!r}: a sensitive value is listed twice")
        if len(set(self.keys)) != len(self.keys):
            raise InputError(f"release {self.name!r}: a group descriptor is listed twice")
        width = 1 if self.kind == "bucketized" else len(self.qis)
        for key in self.keys:
            if len(key) != width:
                raise InputError(
                    f"release {self.name!r}: descriptor {key!r} has {len(key)} fields, "
                    f"expected {width}"
                )
        if self.kind == "bucketized":
            if self.members is None or len(self.members) != len(self.keys):
                raise InputError(
                    f"release {self.name!r}: a bucketized release needs the exact QI tuples "
                    "of every bucket"
                )
            for g, group in enumerate(self.members):
                total = 0
                for qi_values, mult in group:
                    if len(qi_values) != len(self.qis) or mult <= 0:
                        raise InputError(
                            f"release {self.name!r}: bad member {qi_values!r} x {mult} in "
                            f"bucket {self.keys[g][0]!r}"
                        )
                    total += mult
                if total != int(counts[g].sum()):
                    raise InputError(
                        f"release {self.name!r}: bucket {self.keys[g][0]!r} lists {total} "
                        f"QI tuples for {int(counts[g].sum())} sensitive values"
                    )
        elif self.members is not None:
            raise InputError(f"release {self.name!r}: only bucketized releases list members")
        if self.kind == "microaggregated":
            for key in self.keys:
                for q, cell in zip(self.qis, key, strict=True):
                    try:
                        float(cell)
                    except ValueError:
                        raise InputError(
                            f"release {self.name!r}: centroid value {cell!r} of QI {q!r} is "
                            "not a number (microaggregated releases publish numeric centroids)"
                        ) from None
        counts.setflags(write=False)
        object.__setattr__(self, "counts", counts)

    # ---------------------------------------------------------------- views
    @property
    def n_groups(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    @cached_property
    def sizes(self) -> IntArray:
        out: IntArray = self.counts.sum(axis=1)
        out.setflags(write=False)
        return out

    def group_label(self, g: int) -> str:
        """``age=20-29, zip=130**`` (generalized / microaggregated) or ``bucket=7``."""
        if self.kind == "bucketized":
            return f"bucket={self.keys[g][0]}"
        return ", ".join(f"{q}={v}" for q, v in zip(self.qis, self.keys[g], strict=True))

    def multiset(self, g: int) -> dict[str, int]:
        """Group ``g``'s sensitive multiset ``{value: count}`` (values it has only)."""
        return {v: int(c) for v, c in zip(self.values, self.counts[g], strict=True) if c}

    def renamed(self, name: str) -> PublishedRelease:
        return PublishedRelease(
            self.kind,
            self.qis,
            self.sensitive,
            self.keys,
            self.values,
            self.counts,
            self.members,
            name,
        )

    # --------------------------------------------------------- constructors
    @classmethod
    def from_arrow(
        cls,
        table: pa.Table,
        qis: Sequence[str],
        sensitive: str,
        kind: str = "generalized",
        bucket: str | None = None,
        name: str = "release",
    ) -> PublishedRelease:
        """Read the groups of a release table.

        ``generalized`` / ``microaggregated``: the groups are the distinct combinations of
        the ``qis`` columns (Definition 2). ``bucketized``: the groups are the values of the
        ``bucket`` column and the ``qis`` columns hold exact values.
        """
        from airflow_privacy.core.model import Bucketization, ReleaseSpec

        k = check_kind(kind)
        qis = tuple(qis)
        if k == "bucketized":
            if not bucket:
                raise InputError(f"a bucketized release needs its bucket column ({opt('bucket')})")
            if bucket in qis:
                raise InputError(f"column {bucket!r} cannot be both the bucket column and a QI")
            group_cols: tuple[str, ...] = (bucket,)
        else:
            if bucket:
                raise InputError(f"{opt('bucket')} applies to bucketized releases, not {k} ones")
            group_cols = qis
        present = table.column_names
        for col in (*qis, *group_cols):
            if col not in present:
                raise InputError(
                    f"QI column {col!r} does not exist in release {name!r} "
                    f"(columns: {', '.join(present)})"
                    if col in qis
                    else f"bucket column {col!r} does not exist in release {name!r} "
                    f"(columns: {', '.join(present)})"
                )
        b = Bucketization.from_arrow(
            table, ReleaseSpec(sensitive=sensitive, group_columns=group_cols)
        )
        members: tuple[tuple[Member, ...], ...] | None = None
        if k == "bucketized":
            assert bucket is not None
            members = _bucket_members(table, bucket, qis, b.groups)
        return cls(k, qis, sensitive, b.groups, b.values, b.counts, members, name)

    @classmethod
    def from_frame(
        cls,
        frame: Any,
        qis: Sequence[str],
        sensitive: str,
        kind: str = "generalized",
        bucket: str | None = None,
        name: str = "release",
    ) -> PublishedRelease:
        """Like :meth:`from_arrow`, from a pandas DataFrame."""
        import pyarrow as pa

        return cls.from_arrow(
            pa.Table.from_pandas(frame, preserve_index=False), qis, sensitive, kind, bucket, name
        )

    @classmethod
    def from_groups(
        cls,
        qis: Sequence[str],
        sensitive: str,
        groups: Sequence[tuple[Sequence[str], Mapping[str, int]]],
        kind: str = "generalized",
        members: Sequence[Sequence[Member]] | None = None,
        name: str = "release",
    ) -> PublishedRelease:
        """Build from ``[(descriptor, {value: count}), ...]`` (what the ledger stores)."""
        values: dict[str, int] = {}
        for _, ms in groups:
            for v in ms:
                values.setdefault(str(v), len(values))
        counts = np.zeros((len(groups), len(values)), dtype=np.int64)
        for g, (_, ms) in enumerate(groups):
            for v, c in ms.items():
                if isinstance(c, bool) or int(c) != c:
                    raise InputError(
                        f"release {name!r}: count {c!r} of {v!r} is not a whole number"
                    )
                counts[g, values[str(v)]] += int(c)
        keys = tuple(tuple(str(x) for x in key) for key, _ in groups)
        mem = (
            None
            if members is None
            else tuple(
                tuple((tuple(str(x) for x in q), int(m)) for q, m in group) for group in members
            )
        )
        return cls(check_kind(kind), tuple(qis), sensitive, keys, tuple(values), counts, mem, name)

    # ---------------------------------------------------------------- output
    def group_records(self) -> list[dict[str, Any]]:
        """One plain dict per group: ``descriptor``, ``size``, ``sensitive`` (and ``members``)."""
        out = []
        for g, key in enumerate(self.keys):
            rec: dict[str, Any] = {
                "descriptor": list(key),
                "size": int(self.sizes[g]),
                "sensitive": self.multiset(g),
            }
            if self.members is not None:
                rec["members"] = [[list(q), m] for q, m in self.members[g]]
            out.append(rec)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "qis": list(self.qis),
            "sensitive": self.sensitive,
            "records": self.n_records,
            "groups": self.group_records(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PublishedRelease:
        try:
            groups = [(g["descriptor"], g["sensitive"]) for g in data["groups"]]
            members = (
                [[(q, m) for q, m in g["members"]] for g in data["groups"]]
                if data["kind"] == "bucketized"
                else None
            )
            return cls.from_groups(
                data["qis"],
                data["sensitive"],
                groups,
                data["kind"],
                members,
                data.get("name", "release"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"not a release description: {exc}") from None

    def content_hash(self, member_hashes: Sequence[str] = ()) -> str:
        """SHA-256 of the published content in a canonical order (groups sorted by
        descriptor, multisets by value), plus the sorted identifier hashes when given.

        Two releases with the same hash published the same thing; the ledger records such a
        release once, and identifies it by the content alone (no ``member_hashes``: the same
        file attempted with and without identifiers is one release).
        """
        groups = sorted(
            (
                list(rec["descriptor"]),
                sorted(rec["sensitive"].items()),
                sorted((q, m) for q, m in rec.get("members", [])),
            )
            for rec in self.group_records()
        )
        canonical = {
            "kind": self.kind,
            "qis": list(self.qis),
            "sensitive": self.sensitive,
            "groups": groups,
            "members": sorted(set(member_hashes)),
        }
        blob = json.dumps(canonical, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _bucket_members(
    table: pa.Table, bucket: str, qis: tuple[str, ...], buckets: Sequence[tuple[str, ...]]
) -> tuple[tuple[Member, ...], ...]:
    """The exact QI tuples of every bucket, with multiplicities, in ``buckets`` order.

    The bucket value is labelled as the counts label it (``buckets``: a float bucket ``1.0``
    is ``'1.0'`` in both); the QI values as Arrow writes them as text, which is how a
    population's values are read (:meth:`Population.from_arrow`), so people are located."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from airflow_privacy.core.counting import count_rows

    for c in qis:
        nulls = table.column(c).null_count
        if nulls:
            raise InputError(f"QI column {c!r} has {nulls} missing value(s); fill or drop them")

    def as_text(c: str) -> pa.ChunkedArray:
        col = table.column(c)
        if pa.types.is_dictionary(col.type):
            col = pc.cast(col, col.type.value_type)
        return col if col.type == pa.string() else pc.cast(col, pa.string())

    sub = pa.table(
        {"bucket": table.column(bucket), **{f"q{i}": as_text(c) for i, c in enumerate(qis)}}
    )
    rows, counts = count_rows(sub, sub.column_names)
    per: dict[str, list[Member]] = {}
    for row, n in zip(rows, counts.tolist(), strict=True):
        per.setdefault(row[0], []).append((tuple(row[1:]), int(n)))
    return tuple(tuple(sorted(per.get(key[0], []))) for key in buckets)
