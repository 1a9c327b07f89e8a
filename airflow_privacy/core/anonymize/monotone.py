"""Which criteria are monotone, and so may prune a generalization search.

A criterion is *monotone* (has the generalization property) when a release that passes it
still passes after any of its groups are merged: the bucketization order of Martin et al.
2007, section 3.4 (``B <= B'`` iff every bucket of ``B'`` is a union of buckets of ``B``).
Full-domain generalization only ever merges groups as a node moves up the lattice, so for a
monotone criterion a passing node makes every coarser node pass and a failing node makes
every finer node fail (Incognito, LeFevre et al. 2005, the "generalization property"; Flash,
Kohlmayer et al. 2012, "predictive tagging"). The lattice search prunes with those two rules
only for the criteria that declare it and checks every node it needs otherwise.

With a record suppression budget the question changes: a node passes when the records of
its groups that fail on their own can be removed within the budget and the rest passes. That
stays monotone only when merging a passing group with *any* group gives a passing group
(the records to suppress at a coarser node are then a subset of those at a finer node):
true for k-anonymity and distinct l-diversity, false for the others (see the counterexamples
in ``tests/core/anonymize/test_anonymize_monotone.py``).

``local`` marks criteria that hold iff every group passes on its own (given the whole
table's sensitive distribution, which t-closeness compares with). Mondrian and the
suppression step test single groups for those with the criteria's vectorized tests
(:mod:`airflow_privacy.core.criteria.group_tests`); other criteria are checked on the whole
release.

Each criterion declares its own traits (``Criterion.monotonicity``, with the reference the
property comes from, in its class under ``airflow_privacy/core/criteria/models/``), as ARX's
criteria do (``isMonotonicWithGeneralization``, ``isMonotonicWithSuppression``). Every
``True`` is checked by brute force in ``tests/core/anonymize/test_anonymize_monotone.py`` (random
merges of
random bucketizations; the (c,k)-safety engine is itself checked against the possible-worlds
oracle). A criterion that declares nothing (a plug-in, say) is treated as non-monotone and
non-local: correct, only slower.
"""

from __future__ import annotations

from airflow_privacy.core.criteria.base import UNKNOWN, Criterion, Monotonicity
from airflow_privacy.core.criteria.registry import known

__all__ = ["UNKNOWN", "Monotonicity", "monotonicity", "prunes"]


def monotonicity(name: str) -> Monotonicity:
    """The traits criterion ``name`` declares (:data:`UNKNOWN` for an unknown name)."""
    cls = known(name)
    return cls.monotonicity if cls is not None else UNKNOWN


def prunes(criterion: Criterion, suppression: bool) -> bool:
    """May a lattice search prune with ``criterion``?"""
    traits = criterion.traits()
    return traits.suppression if suppression else traits.merge
