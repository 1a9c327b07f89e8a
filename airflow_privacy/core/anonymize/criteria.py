"""The criteria an anonymizer must meet: validated once, each its own class.

A criterion is a ``(name, params)`` pair turned into an instance of its class
(:mod:`airflow_privacy.core.criteria.registry`), so every anonymizer works with every
registered criterion, including plug-ins. The release passes when every criterion passes.

Besides the verdict on a whole release, the anonymizers need a verdict on single groups
(Mondrian's candidate halves, the groups a suppression budget removes): each criterion
supplies its own test (``Criterion.group_test``, in
:mod:`airflow_privacy.core.criteria.group_tests`), exact for the *local* criteria and only
necessary for (c,k)-safety and the skyline criterion, and its relative cost, so cheap
criteria are checked first.

Benign values (``Bucketization.benign``: sensitive values whose disclosure is not a breach,
docs/worst-case-engine.md, "Benign values") belong to the set: :meth:`CriteriaSet.parse`
takes them next to the criteria, :meth:`CriteriaSet.bind` keeps them, every release the set
evaluates is evaluated ``.with_benign(...)``, and a criterion whose per-group test depends on
them receives them as the keyword ``benign`` of ``Criterion.group_test`` (a criterion whose
``group_test`` does not take the keyword, a plug-in written before, is called without it).
So the anonymizers decide with the benign values exactly as the re-check with them does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.criteria.base import Criterion, GroupTest, group_test_with
from airflow_privacy.core.criteria.registry import create
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError, opt

__all__ = ["CriteriaSet", "Criterion", "GroupTest"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass
class CriteriaSet:
    """Validated criteria (all must pass) and the tests the anonymizers run with them."""

    items: tuple[Criterion, ...]
    values: tuple[str, ...] = ()
    benign: frozenset[str] = frozenset()
    """The declared benign values (labels; one absent from the table is ignored)."""
    _tests: dict[int, tuple[GroupTest, bool] | None] = field(default_factory=dict, repr=False)

    @classmethod
    def parse(
        cls, criteria: Sequence[tuple[str, Mapping[str, Any]]], benign: Iterable[str] = ()
    ) -> CriteriaSet:
        """Validate every ``(name, params)`` pair (errors name the criterion and parameter),
        and run each once on a tiny release (with the ``benign`` values) so that parameters
        only an engine rejects when checking (``--l 2.5`` for distinct l-diversity, a
        designated value that is also benign) fail before any data is read."""
        marked = frozenset(str(v) for v in benign)
        if isinstance(criteria, str | bytes) or not isinstance(criteria, Sequence):
            raise InputError("criteria must be a list of (name, parameters) pairs")
        if not criteria:
            raise InputError(f"at least one criterion is required ({opt('criterion')})")
        items: list[Criterion] = []
        probe = Bucketization.from_group_counts([[2, 1], [1, 2]], ("1", "2")).with_benign(marked)
        probe = probe.with_population([6, 6])  # for the criteria decided against a population
        for entry in criteria:
            if not isinstance(entry, Sequence) or isinstance(entry, str) or len(entry) != 2:
                raise InputError(f"criterion {entry!r} is not a (name, parameters) pair")
            name, params = entry
            if not isinstance(params, Mapping):
                raise InputError(f"parameters of criterion {name!r} must be a mapping")
            criterion = create(str(name), params)
            criterion.evaluate(probe)
            items.append(criterion)
        return cls(tuple(items), benign=marked)

    def bind(self, values: Sequence[str]) -> CriteriaSet:
        """The same criteria (and benign values) for a table whose sensitive values are
        ``values``."""
        return CriteriaSet(self.items, tuple(values), self.benign)

    def judged(self, b: Bucketization) -> Bucketization:
        """``b`` with this set's benign values, as the re-check with them sees it."""
        return b if b.benign == self.benign else b.with_benign(self.benign)

    # ------------------------------------------------------------------ releases
    def by_cost(self, subset: Sequence[int] | None = None) -> list[int]:
        idx = range(len(self.items)) if subset is None else subset
        return sorted(idx, key=lambda i: (self.items[i].cost, i))

    def first_failure(
        self, b: Bucketization, subset: Sequence[int] | None = None
    ) -> CriterionResult | None:
        """The first failing criterion's result (cheap criteria first), or ``None``."""
        b = self.judged(b)
        for i in self.by_cost(subset):
            result = self.items[i].evaluate(b)
            if not result.safe:
                return result
        return None

    def passes(self, b: Bucketization, subset: Sequence[int] | None = None) -> bool:
        return self.first_failure(b, subset) is None

    def evaluate_all(self, b: Bucketization) -> list[CriterionResult]:
        b = self.judged(b)
        return [c.evaluate(b) for c in self.items]

    # -------------------------------------------------------------------- groups
    def group_test(self, i: int) -> tuple[GroupTest, bool] | None:
        """``(test, exact)`` for criterion ``i``: ``test(counts, totals)`` says which groups
        pass on their own; ``exact`` when the release passes iff all groups do. ``None``
        when there is no single-group test (the criterion is checked whole). The benign
        values reach the criterion as ``group_test(values, benign=...)`` when its method
        takes that keyword (module doc)."""
        if i not in self._tests:
            self._tests[i] = group_test_with(self.items[i], self.values, self.benign)
        return self._tests[i]

    def groups_passing(
        self,
        counts: IntArray,
        totals: IntArray,
        subset: Sequence[int] | None = None,
        population: IntArray | None = None,
    ) -> BoolArray:
        """Groups (rows of ``counts``) that pass every single-group test of ``subset``.

        ``totals`` is the sensitive distribution of the whole table (t-closeness);
        ``population`` the groups' population class sizes, which the criteria decided
        against a population table test (``Criterion.population_test``)."""
        ok = np.ones(counts.shape[0], dtype=bool)
        for i in self.by_cost(subset):
            found = self.group_test(i)
            if found is None:
                by_population = self.items[i].population_test()
                if by_population is None:
                    continue
                if population is None:
                    raise RuntimeError("a population criterion tested without population counts")
                ok &= by_population(counts.sum(axis=1), population)
            else:
                ok &= found[0](counts, totals)
            if not ok.any():
                break
        return ok

    def needs_population(self) -> bool:
        """Is one of the criteria decided against a population table?"""
        return any(c.needs_population() for c in self.items)

    def local(self, subset: Sequence[int] | None = None) -> bool:
        """Do the single-group tests of ``subset`` decide the whole release?"""
        idx = range(len(self.items)) if subset is None else subset
        for i in idx:
            found = self.group_test(i)
            if found is None or not found[1]:
                return False
        return True

    def global_indices(self) -> list[int]:
        """Criteria that must be checked on the whole release (no exact group test)."""
        out = []
        for i in range(len(self.items)):
            found = self.group_test(i)
            if found is None or not found[1]:
                out.append(i)
        return out

    def to_list(self) -> list[dict[str, Any]]:
        return [c.to_dict() for c in self.items]
