"""The safety predicate ``p``: on a released table, and on a disclosure set.

Zhang et al. 2007 (section 2) evaluate the safety predicate on a *set* of database states
(what the adversary knows), and the classic criteria on a single released table. Both forms
are built here from the same criteria (each its class,
:mod:`airflow_privacy.core.criteria.base`; ``Criterion.posterior_form`` says which have a
disclosure-set form), all of which must hold:

* **table form** ``p(T_i(y))``: the criteria on the bucketization candidate ``T_i`` shows on
  world ``y``. Any registry criterion works. This is the stopping test of the naive
  algorithm ("release the first candidate whose table passes").
* **disclosure-set form** ``p(S)``: for every person ``t``, the adversary's posterior
  ``Pr_S(t has v)`` (the fraction of worlds of ``S`` in which ``t`` holds ``v``) is treated
  as the sensitive distribution of ``t``'s own group and must pass the criterion's group
  test: distinct l-diversity (at least ``l`` values with positive posterior), entropy
  l-diversity (posterior entropy at least ``log l``), recursive (c,l)-diversity
  (``r_1 < c (r_l + ... + r_m)`` on the sorted posterior) and t-closeness (EMD between the
  posterior and the table's distribution at most ``t``). k-anonymity does not depend on the
  sensitive values (``Criterion.sizes_only``): it is the table form on the released
candidate. This is the paper's
  reading of its example ("each patient has at least two equally likely choices"). When
  ``S`` is the whole block of a release the posterior of ``t`` is exactly the distribution of
  ``t``'s group, so the two forms agree (tested).

The background-knowledge criteria (ck-safety, negation-safety, skyline) are defined on a
bucketization under the random-worlds assumption, not on an arbitrary set of worlds: they
work as the table form (the algorithm's stopping test) but have no disclosure-set form.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.algorithm_aware.model import Candidate
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.release import counts_bucketization
from airflow_privacy.core.criteria.models import BUILT_IN
from airflow_privacy.errors import InputError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

#: The built-in criteria with a disclosure-set form (``Criterion.posterior_form``).
POSTERIOR_FORMS = tuple(cls.name for cls in BUILT_IN if cls.posterior_form)


class Predicate:
    """The conjunction of registry criteria, in table form and disclosure-set form."""

    def __init__(
        self,
        criteria: Sequence[tuple[str, Mapping[str, Any]]] | CriteriaSet,
        values: Sequence[str],
        totals: IntArray,
        sensitive: str = "s",
    ) -> None:
        parsed = criteria if isinstance(criteria, CriteriaSet) else CriteriaSet.parse(criteria)
        self.criteria = parsed.bind(tuple(values))
        self.values = tuple(values)
        self.totals = np.asarray(totals, dtype=np.int64)
        self.sensitive = sensitive
        self.local = self.criteria.local()
        self._memo: dict[bytes, bool] = {}
        self.table_checks = 0

    @property
    def label(self) -> str:
        return " and ".join(c.label for c in self.criteria.items)

    def to_list(self) -> list[dict[str, Any]]:
        return self.criteria.to_list()

    # ------------------------------------------------------------------ table form
    def table_passes(self, counts: IntArray) -> BoolArray:
        """``counts``: ``(W, G, V)`` block keys of one candidate; which tables pass."""
        w, g, v = counts.shape
        self.table_checks += w
        if self.local:
            ok = self.criteria.groups_passing(counts.reshape(w * g, v), self.totals)
            out: BoolArray = np.asarray(ok.reshape(w, g).all(axis=1), dtype=bool)
            return out
        flat = counts.reshape(w, g * v)
        uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
        verdict = np.empty(uniq.shape[0], dtype=bool)
        for i, row in enumerate(uniq):
            key = row.tobytes() + g.to_bytes(4, "little")
            hit = self._memo.get(key)
            if hit is None:
                b = counts_bucketization(row.reshape(g, v), self.values, self.sensitive)
                hit = self._memo[key] = self.criteria.passes(b)
            verdict[i] = hit
        res: BoolArray = verdict[inverse.reshape(-1)]
        return res

    # -------------------------------------------------------- disclosure-set form
    def check_posterior_form(self) -> None:
        """Raise :class:`InputError` naming a criterion without a disclosure-set form."""
        for c in self.criteria.items:
            if not c.posterior_form:
                raise InputError(
                    f"criterion {c.name} has no disclosure-set form (it is defined on a "
                    f"bucketization, not on a set of worlds); the safe mode and the audit's "
                    f"predicate support: {', '.join(POSTERIOR_FORMS)}"
                )

    @property
    def _set_form(self) -> list[int]:
        """Criteria tested on a person's posterior (all but those that depend on the group
        sizes only, such as k-anonymity)."""
        return [i for i, c in enumerate(self.criteria.items) if not c.sizes_only]

    @property
    def min_k(self) -> int:
        """The group size the size-only criteria (k-anonymity) ask of the released
        candidate (0: none)."""
        ks = [c.required_group_size() for c in self.criteria.items if c.sizes_only]
        return max(ks, default=0)

    @property
    def has_posterior_form(self) -> bool:
        return all(c.posterior_form for c in self.criteria.items)

    def people_failing(self, candidate: Candidate, world_counts: IntArray) -> list[int]:
        """People whose posterior fails (``world_counts[p, v]``: worlds of the set in which
        ``p`` holds ``v``, every row summing to the set's size > 0); all people when
        k-anonymity fails on the candidate."""
        self.check_posterior_form()
        n = world_counts.shape[0]
        ok = np.ones(n, dtype=bool)
        for i, c in enumerate(self.criteria.items):
            if c.sizes_only:
                if int(candidate.sizes.min()) < c.required_group_size():
                    ok[:] = False
                continue
            ok &= self.criteria.groups_passing(world_counts, self.totals, [i])
        return [int(p) for p in np.flatnonzero(~ok)]

    def within_error(self, people: Sequence[int], low: FloatArray, high: FloatArray) -> list[int]:
        """Of ``people`` (failing at their sampled posterior), those for whom some
        distribution inside their confidence intervals ``low[p, v] .. high[p, v]`` passes
        the predicate: the failure is within sampling error.

        Two witnesses are tried, each a point of the box ``low <= q <= high`` on the
        simplex: the maximum-entropy point (water-filling, ``q_v = clip(lam, low_v,
        high_v)``), which decides entropy and distinct l-diversity exactly (and is the
        flattest point, favourable to recursive (c,l)-diversity), and the point nearest to
        the table's distribution (``clip(P_v + lam, ...)``), favourable to t-closeness. A
        witness is checked with the same group tests, so a person reported within error
        really has a passing distribution inside the intervals; for recursive diversity and
        t-closeness a passing point the two witnesses miss is possible (then the person is
        reported failing)."""
        overall = self.totals / max(int(self.totals.sum()), 1)
        out = []
        for p in people:
            lo, hi = low[p], high[p]
            if lo.sum() > 1.0 + 1e-12 or hi.sum() < 1.0 - 1e-12:
                continue
            for centre in (np.zeros_like(lo), overall):
                q = _waterfill(centre, lo, hi)
                if bool(
                    self.criteria.groups_passing(
                        np.asarray(q[None, :]),
                        self.totals,
                        self._set_form,
                    )[0]
                ):
                    out.append(int(p))
                    break
        return out

    def set_passes(self, candidate: Candidate, world_counts: IntArray) -> bool:
        """``p(S)`` for a non-empty set ``S`` given by its per-person value counts."""
        return not self.people_failing(candidate, world_counts)


def _waterfill(centre: FloatArray, low: FloatArray, high: FloatArray) -> FloatArray:
    """The point ``clip(centre + lam, low, high)`` summing to 1 (bisection on ``lam``);
    with ``centre = 0`` the maximum-entropy distribution inside the box."""
    a, b = -1.0 - float(centre.max()), 1.0 - float(centre.min())
    for _ in range(100):
        mid = (a + b) / 2
        if np.clip(centre + mid, low, high).sum() < 1.0:
            a = mid
        else:
            b = mid
    q: FloatArray = np.clip(centre + (a + b) / 2, low, high)
    out: FloatArray = np.asarray(q / q.sum(), dtype=np.float64)
    return out
