"""Which registry criteria are monotone, and so may prune a generalization search.

A criterion is *monotone* (has the generalization property) when a release that passes it
still passes after any of its groups are merged: the bucketization order of Martin et al.
2007, section 3.4 (``B <= B'`` iff every bucket of ``B'`` is a union of buckets of ``B``).
Full-domain generalization only ever merges groups as a node moves up the lattice, so for a
monotone criterion a passing node makes every coarser node pass and a failing node makes
every finer node fail (Incognito, LeFevre et al. 2005, the "generalization property"; Flash,
Kohlmayer et al. 2012, "predictive tagging"). The lattice search prunes with those two rules
only for the criteria marked monotone here and checks every node it needs otherwise.

With a record suppression budget the question changes: a node passes when the records of
its groups that fail on their own can be removed within the budget and the rest passes. That
stays monotone only when merging a passing group with *any* group gives a passing group
(the records to suppress at a coarser node are then a subset of those at a finer node):
true for k-anonymity and distinct l-diversity, false for the others (see the counterexamples
in ``tests/test_anonymize_monotone.py``).

``local`` marks criteria that hold iff every group passes on its own (given the whole
table's sensitive distribution, which t-closeness compares with). Mondrian and the
suppression step test single groups for those with the vectorized tests of
:mod:`airflow_privacy.core.anonymize.criteria`; other criteria are checked on the whole
release.

Every ``True`` below is checked by brute force in ``tests/test_anonymize_monotone.py``
(random merges of random bucketizations through the registry; the (c,k)-safety engine the
registry runs is itself checked against the possible-worlds oracle). A criterion missing
from this table (for example one registered later) is treated as non-monotone and
non-local: correct, only slower.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Monotonicity:
    """What the anonymizers may assume about one criterion."""

    merge: bool
    """Passing survives merging groups (no suppression): prune the lattice."""
    suppression: bool
    """Still monotone with a record suppression budget (failing groups removed)."""
    local: bool
    """Passes iff every group passes on its own (the whole table's distribution fixed)."""
    reference: str
    """Where the property comes from."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


MONOTONICITY: dict[str, Monotonicity] = {
    "k-anonymity": Monotonicity(
        True, True, True,
        "group sizes add up when groups merge (LeFevre et al. 2005, generalization property)",
    ),
    "distinct-l-diversity": Monotonicity(
        True, True, True,
        "a merged group holds every value of its parts (Machanavajjhala et al. 2007)",
    ),
    "entropy-l-diversity": Monotonicity(
        True, False, True,
        "entropy is concave: a merged group's entropy is at least the smaller of its parts' "
        "(Machanavajjhala et al. 2007); a failing part can pull a passing one below",
    ),
    "recursive-cl-diversity": Monotonicity(
        True, False, True,
        "r1 of the merge <= r1(A) + r1(B) < c (tail(A) + tail(B)) <= c tail(merge) "
        "(Machanavajjhala et al. 2007)",
    ),
    "t-closeness": Monotonicity(
        True, False, True,
        "the EMD to the fixed table distribution is convex in the group's distribution "
        "(Li et al. 2007, generalization property); suppression changes the table distribution",
    ),
    "ck-safety": Monotonicity(
        True, False, False,
        "Theorem 14 of Martin et al. 2007 (maximum disclosure only falls as buckets merge)",
    ),
    "negation-safety": Monotonicity(
        True, False, True,
        "max over groups of r1 / (n - r2 - ... - r_{k+1}); the mediant of two groups' "
        "ratios is at most the larger (docs/anonymizers.md)",
    ),
    "skyline": Monotonicity(
        True, False, False,
        "Chen et al. 2007 (SkylineAnonymize builds on Mondrian); checked by brute force "
        "once the criterion is registered",
    ),
}  # fmt: skip

UNKNOWN = Monotonicity(False, False, False, "not in the monotonicity table: every node is checked")


def monotonicity(name: str) -> Monotonicity:
    """The table entry for criterion ``name`` (:data:`UNKNOWN` for unlisted criteria)."""
    return MONOTONICITY.get(name, UNKNOWN)


def prunes(name: str, suppression: bool) -> bool:
    """May a lattice search prune with criterion ``name``?"""
    entry = monotonicity(name)
    return entry.suppression if suppression else entry.merge
