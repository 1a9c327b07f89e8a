"""Top-(K+, K-) strongest association rules between QI values and the sensitive value
(Du et al. 2008, section 4.4): the publisher's bound on the adversary's knowledge.

A *positive* rule ``Q_v => s`` has confidence ``P(s | Q_v)`` and support ``n(Q_v, s)``; a
*negative* rule ``Q_v => not s`` has confidence ``P(not s | Q_v) = 1 - P(s | Q_v)`` and
support ``n(Q_v, not s)`` (Savasere et al.'s ``Q => not S`` form). ``Q_v`` is a conjunction of
values over a subset of the QI attributes (the paper's Figure 6 varies its width ``T``).
Rules are mined from the *original* table (the adversary's knowledge is assumed to be true
of it, section 4.2), restricted to a minimum support, and ranked by confidence; ties go to
the larger support, then the narrower antecedent, then the order of the attributes and
values. Each rule becomes the knowledge ``P(s | Q_v) = n(Q_v, s) / n(Q_v)`` (exact as a
ratio of counts).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.maxent.knowledge import Bound, DistributionFact, Knowledge, Source
from airflow_privacy.core.maxent.release import string_codes
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class AssociationRule:
    """``given => value`` (``positive``) or ``given => not value``."""

    given: tuple[tuple[str, str], ...]
    value: str
    positive: bool
    count_given: int
    count_value: int  # n(Q_v, s)

    @property
    def support(self) -> int:
        return self.count_value if self.positive else self.count_given - self.count_value

    @property
    def confidence(self) -> float:
        hit = self.count_value if self.positive else self.count_given - self.count_value
        return hit / self.count_given

    @property
    def probability(self) -> float:
        """``P(value | given)`` in the original table: the knowledge the rule gives."""
        return self.count_value / self.count_given

    def describe(self) -> str:
        cond = ", ".join(f"{c}={v}" for c, v in self.given)
        arrow = self.value if self.positive else f"not {self.value}"
        return (
            f"{'+' if self.positive else '-'}rule {cond} => {arrow} "
            f"(confidence {self.confidence:.4g}, support {self.support})"
        )

    def to_fact(self, position: int | None = None) -> DistributionFact:
        """The rule as knowledge; ``position`` (1-based among the mined rules) is how
        messages name it (``mined rule #2``), the label keeps the rule in full."""
        p = self.probability
        source = Source(self.describe(), rule=position)
        return DistributionFact(self.given, (self.value,), Bound(p, p), source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "given": dict(self.given),
            "value": self.value,
            "kind": "positive" if self.positive else "negative",
            "confidence": self.confidence,
            "support": self.support,
            "probability": self.probability,
        }

    def public_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` without the sensitive value (``value`` is ``None``): a rule mined
        from the original table ties a group to a value, which the public form never does."""
        return {**self.to_dict(), "value": None}


def mine_rules(
    table: pa.Table,
    qi_columns: Sequence[str],
    sensitive: str,
    top_positive: int,
    top_negative: int,
    min_support: int = 3,
    widths: Sequence[int] | None = None,
) -> tuple[list[AssociationRule], list[AssociationRule]]:
    """The ``top_positive`` strongest positive and ``top_negative`` strongest negative rules
    of ``table`` with support >= ``min_support``; antecedents over ``widths`` QI attributes
    (default: every width from 1 to all QI columns)."""
    qi_cols = tuple(qi_columns)
    if top_positive < 0 or top_negative < 0:
        raise InputError("the number of rules must be >= 0")
    if min_support < 1:
        raise InputError(f"the minimum support must be >= 1 record, got {min_support}")
    for col in (*qi_cols, sensitive):
        if col not in table.column_names:
            raise InputError(
                f"column {col!r} does not exist in the original table (columns: "
                f"{', '.join(table.column_names)})"
            )
    if table.num_rows == 0:
        raise InputError("the original table is empty")
    all_widths = list(range(1, len(qi_cols) + 1))
    use = sorted(set(widths)) if widths is not None else all_widths
    for w in use:
        if w not in all_widths:
            raise InputError(f"rule width {w} is outside 1..{len(qi_cols)}")
    coded = [string_codes(table, c) for c in qi_cols]
    s_codes, s_labels = string_codes(table, sensitive)
    nv = len(s_labels)
    # the best rules so far, each kind a heap of at most k entries keyed by its rank negated
    # (the root is the worst kept): a rule is decoded only once it is among the best, so
    # the work and memory follow k, not k times the attribute subsets (2 x 200 rules over
    # 12 QIs had decoded 817,176 candidates and held 1.4 GB)
    best: dict[bool, list[tuple[tuple[Any, ...], int, tuple[int, ...], int, int, int, int]]] = {
        True: [],
        False: [],
    }
    subset_rank = 0
    for w in use:
        for subset in itertools.combinations(range(len(qi_cols)), w):
            subset_rank += 1
            key = np.zeros(table.num_rows, dtype=np.int64)
            for j in subset:
                key = key * len(coded[j][1]) + coded[j][0]
            keys, group = np.unique(key, return_inverse=True)
            group = np.asarray(group).ravel()
            counts = np.bincount(group * nv + s_codes, minlength=keys.size * nv).reshape(-1, nv)
            n_given = counts.sum(axis=1)
            for positive, k in ((True, top_positive), (False, top_negative)):
                if k == 0:
                    continue
                hit = counts if positive else n_given[:, None] - counts
                g_idx, s_idx = np.nonzero(hit >= min_support)
                if g_idx.size == 0:
                    continue
                sup = hit[g_idx, s_idx]
                conf = sup / n_given[g_idx]
                order = np.lexsort((s_idx, g_idx, -sup, -conf))[:k]
                heap = best[positive]
                for o in order.tolist():
                    g, s = int(g_idx[o]), int(s_idx[o])
                    rank = (-float(conf[o]), -int(sup[o]), w, subset_rank, g, s)
                    entry = (_negated(rank), int(keys[g]), subset, s, int(n_given[g]),
                             int(counts[g, s]), g)  # fmt: skip
                    if len(heap) < k:
                        heapq.heappush(heap, entry)
                    elif entry[0] > heap[0][0]:
                        heapq.heapreplace(heap, entry)
                    else:
                        break  # the rest of this subset ranks lower still
    out: dict[bool, list[AssociationRule]] = {}
    for positive, heap in best.items():
        kept = sorted(heap, key=lambda e: e[0], reverse=True)  # best first
        out[positive] = [
            AssociationRule(
                _decode(key, subset, coded, qi_cols), s_labels[s], positive, given, both
            )
            for _, key, subset, s, given, both, _g in kept
        ]
    return out[True], out[False]


def _negated(rank: tuple[float, int, int, int, int, int]) -> tuple[float, int, int, int, int, int]:
    """A rule's rank (smaller: stronger) negated, so that a min-heap's root is the weakest."""
    return (-rank[0], -rank[1], -rank[2], -rank[3], -rank[4], -rank[5])


def rules_knowledge(rules: Sequence[AssociationRule]) -> Knowledge:
    """The rules as knowledge statements."""
    return Knowledge(tuple(r.to_fact(i) for i, r in enumerate(rules, start=1)))


def _decode(
    key: int,
    subset: tuple[int, ...],
    coded: Sequence[tuple[IntArray, list[str]]],
    qi_cols: tuple[str, ...],
) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for j in reversed(subset):
        card = len(coded[j][1])
        out.append((qi_cols[j], coded[j][1][key % card]))
        key //= card
    return tuple(reversed(out))
