"""Worst-case background knowledge: maximum disclosure and (c,k)-safety.

Implements Martin, Kifer, Machanavajjhala, Gehrke, Halpern, "Worst-Case Background
Knowledge for Privacy-Preserving Data Publishing" (ICDE 2007):

* Theorem 9: the worst k basic implications are k simple implications ``A_i -> A`` sharing
  one consequent, so the maximum disclosure is ``1 / (1 + min R)`` with
  ``R = Pr(not A and AND_i not A_i) / Pr(A)`` (section 3.3, formula (1)).
* Lemma 12 / Minimize1 (section 3.3.1): within one bucket the minimum of
  ``Pr(AND not A_ij)`` over atoms with person profile ``k_0 >= k_1 >= ...`` is
  ``prod_i (n_b - i - sum_{j<k_i} n_b(s_b^j)) / (n_b - i)``. It depends only on the bucket's
  sorted count profile, so it is computed once per distinct profile, for every budget at
  once, vectorized over profiles.
* Minimize2 (section 3.3.3) is a min-plus knapsack over buckets in log space. Only the
  ``k+1`` best buckets for each (role, budget) can appear in an optimum (exchange argument,
  docs/worst-case-engine.md), so the knapsack runs on at most ``2 (k+1)^2`` candidates
  whatever the number of buckets.
* The negation-only variant (k negated atoms, the l-diversity adversary).
* Saturation (:func:`saturation_point`): with ``d_b`` the number of distinct sensitive
  values of group ``b``, ``K0 = min_b d_b - 1`` pieces of knowledge of either kind already
  disclose a value with certainty, and fewer never do. The maximum disclosure is
  non-decreasing in ``k`` and at most 1, so for every ``k >= K0`` it is 1 and the result at
  ``K0`` is returned (with the ``k`` asked for): no ``k``, however large, costs more than
  ``K0 < |S|``. Proof in :func:`saturation_point` and docs/worst-case-engine.md.

* Benign values (``Bucketization.benign``): the maximum runs over target atoms whose value
  is not benign (the knowledge may name any value). Per group the target is its most
  frequent non-benign value ``s*``; when a benign value is more frequent, the target
  group's cost is the constrained Lemma 12 product of :func:`_log_target_costs` (nested
  forbidden sets, ``s*`` in the largest); saturation is per kind. docs/worst-case-engine.md,
  "Benign values".

The paper's pseudo-code has errors that the enumerator in the tests exposes; they are listed
in docs/paper-errata.md. Everything returned is plain data. The (c,k)-safety verdicts are
taken by :mod:`airflow_privacy.core.thresholds`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.criteria.limits import MAX_K, MAX_K_CURVE
from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.criteria.wording import ValueNames
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError, opt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

Knowledge = Literal["implications", "negations"]


@dataclass(frozen=True)
class Atom:
    """The atom ``t_p[S] = value`` for the ``person``-th (anonymous) member of ``group``.

    People inside a group are exchangeable under the random-worlds assumption, so a person is
    named by its group and a 0-based index within the group (``person < n_b``).
    """

    group: int
    person: int
    value: str


@dataclass(frozen=True)
class Witness:
    """Background knowledge that attains the maximum disclosure.

    ``knowledge == "implications"``: the adversary knows ``A_i -> target`` for every ``A_i``
    in ``atoms`` (an ``A_i`` about the target person himself reads "the target does not
    have ``A_i.value``"). ``knowledge == "negations"``: the adversary knows ``not A_i`` for
    every ``A_i`` in ``atoms``. ``groups`` lists the groups the knowledge touches, the
    target's first. ``len(atoms) <= k``: fewer atoms already reach the maximum.
    """

    knowledge: Knowledge
    target: Atom
    atoms: tuple[Atom, ...]
    groups: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DisclosureResult:
    """Maximum disclosure of a bucketization against ``k`` pieces of knowledge.

    ``numerator / denominator`` is the exact disclosure of ``witness`` (a fraction),
    ``max_disclosure`` its float. For implications the witness is chosen by a search in
    floats, so it is maximal up to floating-point noise (far below
    :data:`~airflow_privacy.core.thresholds.TOLERANCE`); for negations it is exactly maximal.
    """

    knowledge: Knowledge
    k: int
    max_disclosure: float
    witness: Witness
    numerator: int
    denominator: int

    @property
    def exact(self) -> Fraction:
        return Fraction(self.numerator, self.denominator)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CurvePoint:
    """Maximum disclosure for ``k`` pieces of knowledge, both kinds."""

    k: int
    implications: DisclosureResult
    negations: DisclosureResult

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- validation
def _check_k(k: object, name: str = "k", limit: int = MAX_K, who: str | None = None) -> int:
    """``k`` as an int in ``[0, limit]``; errors name the parameter: ``who: k ...`` for a
    criterion's parameter, through :func:`~airflow_privacy.errors.opt` otherwise."""
    shown = f"{who}: {name}" if who else opt(name)
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise InputError(f"{shown} must be a whole number >= 0, got {k!r}")
    if k < 0:
        raise InputError(f"{shown} must be >= 0, got {k}")
    if k > limit:
        raise InputError(
            f"{shown} must be at most {limit:,}, got {k:,} (the disclosure stops growing at "
            "the number of distinct sensitive values in a group, minus one)"
        )
    return int(k)


def _check_c(c: object, who: str | None = None) -> float:
    shown = f"{who}: c" if who else opt("c")
    if isinstance(c, bool) or not isinstance(c, int | float | np.floating | np.integer):
        raise InputError(f"{shown} must be a number in (0, 1], got {c!r}")
    cf = float(c)
    if not (0.0 < cf <= 1.0):
        raise InputError(f"{shown} must be in (0, 1], got {c}")
    return cf


# ------------------------------------------------------------------------- saturation
def saturation_point(b: Bucketization, knowledge: Knowledge = "implications") -> int:
    """``K0 = min_b d_b - 1``: the fewest pieces of knowledge that disclose a sensitive value
    with certainty, for basic implications and for negated atoms alike (``d_b`` is the
    number of distinct values present in group ``b``). For every ``k >= K0`` the maximum
    disclosure is 1; for ``k < K0`` it is below 1.

    Proof (Martin et al. 2007, random worlds of section 2.2, Definitions 2, 4 and 6).

    1. *Monotone and bounded.* A conjunction of ``k`` basic implications can be padded with
       the tautology ``A -> A`` (a basic implication, Definition 2, ``m = n = 1``), so
       ``L^k_basic`` is contained in ``L^{k+1}_basic`` (as sets of events) and the maximum
       disclosure of Definition 6 is non-decreasing in ``k``; the negation adversary takes
       *at most* ``k`` negated atoms, so the same holds there. Every disclosure is a
       probability, at most 1.
    2. *1 at K0.* Let group ``b`` have the fewest distinct values ``s^0, ..., s^{d-1}`` and
       ``p`` be one of its people. The ``d - 1 = K0`` simple implications
       ``t_p[S] = s^j -> t_p[S] = s^0`` (``j >= 1``) are false in every world where ``p``
       holds some ``s^j``, ``j >= 1``; every world consistent with the release gives ``p``
       one of the ``d`` values, so every world satisfying the knowledge gives ``p`` the value
       ``s^0``, and such worlds exist (``n_b(s^0) >= 1``): the disclosure is 1. The ``K0``
       negated atoms ``not t_p[S] = s^j`` do the same.
    3. *Below 1 before K0.* By Theorem 9 (and formula (1) of section 3.3) the worst ``k``
       implications are ``A_i -> A``, with disclosure 1 iff ``Pr(not A and AND_i not A_i) =
       0``; for negations, disclosure 1 iff ``Pr(not A and AND_i not A_i) = 0`` with the
       knowledge consistent. Groups are independent, so the event is impossible iff in some
       group ``b`` the atoms there (``A`` included in the target's group) cannot all be
       false. They can whenever there are fewer than ``d_b``: assign the group's multiset of
       values to its people avoiding every (person, value) pair of the atoms -- a perfect
       matching of people to value slots, which by Hall's theorem fails only if a set ``P``
       of people is forbidden a set ``V`` of present values with
       ``n_b - sum_{v in V} n_b(v) < |P|``, i.e. the ``d_b - |V|`` other values (each count
       at least 1) number at most ``|P| - 1``; forbidding ``V`` to all of ``P`` takes
       ``|P| |V| >= |P| (d_b - |P| + 1) >= d_b`` atoms (the middle expression is concave in
       ``|P|`` and equals ``d_b`` at ``|P| = 1`` and ``|P| = d_b``; ``|P| > d_b`` needs
       ``|V| >= 1`` and so ``|P| > d_b`` atoms). So certainty needs at least ``d_j`` atoms in
       the target's group ``j`` (``k >= d_j - 1``) or ``d_b`` atoms in another group
       (``k >= d_b``): ``k >= K0``.

    The bound is what the paper uses in section 4 ("maximum disclosure certainly reaches 1
    at k = 13 because there are only fourteen possible sensitive values"), refined to the
    least diverse group; ``tests/core/criteria/test_worst_case_bounds.py`` checks it against the
    exhaustive oracle. ``O(groups x values)``.

    *Benign values* (``b.benign``, docs/worst-case-engine.md, "Benign values"): the target
    ranges over the groups ``T`` holding a non-benign value. Step 2 then needs a target group
    ``j`` in ``T`` (``d_j - 1`` atoms) or, for implications only, all ``d_b`` values of one
    person of any *other* group ``b`` as antecedents of ``A_i -> A`` (the knowledge forces
    ``A``); step 3 is unchanged. So ``K0 = min(min_{j in T} d_j - 1, min_{b: T - {b} not
    empty} d_b)`` for implications and ``min_{j in T} d_j - 1`` for negations (negated atoms
    that exclude every value of a person are inconsistent, and knowledge about other groups
    leaves the target's posterior unchanged). With no benign value both are ``min_b d_b - 1``.
    With ``T`` empty nothing can be disclosed and :data:`NO_TARGET` is returned.
    """
    return _saturation(b, knowledge)[0]


#: :func:`saturation_point` when every value present is benign: no knowledge discloses
#: anything, the maximum disclosure is 0 for every ``k``.
NO_TARGET: int = MAX_K + 1


def _saturation(b: Bucketization, knowledge: Knowledge) -> tuple[int, int, int]:
    """``(K0, target group, other group)`` of :func:`saturation_point`; ``other`` is -1
    when the certainty is reached inside the target group (the first least diverse group
    of ``T``), else the group whose ``d_b`` values all imply the target."""
    distinct = (b.counts > 0).sum(axis=1)
    tgt = _targets(b)
    in_t = np.flatnonzero(tgt.index >= 0)
    if in_t.size == 0:
        return NO_TARGET, -1, -1
    j = int(in_t[np.argmin(distinct[in_t])])
    k0 = int(distinct[j]) - 1
    if knowledge == "negations":
        return k0, j, -1
    if in_t.size >= 2:
        others = np.arange(b.n_groups)
    else:  # one target group: the other group must differ from it
        others = np.flatnonzero(np.arange(b.n_groups) != int(in_t[0]))
    if others.size:
        o = int(others[np.argmin(distinct[others])])
        if int(distinct[o]) < k0:
            t2 = int(in_t[0]) if int(in_t[0]) != o else int(in_t[1])
            return int(distinct[o]), t2, o
    return k0, j, -1


@dataclass(frozen=True)
class _TargetInfo:
    """Per group, the target value of the worst case: the most frequent non-benign value
    ``s*`` (first in :meth:`Bucketization.row_order` among equals), its count and the number
    ``r`` of values strictly more frequent (all benign). ``index`` is -1 for a group whose
    present values are all benign (it can hold knowledge but never the target)."""

    index: IntArray
    count: IntArray
    rank: IntArray


def _targets(b: Bucketization) -> _TargetInfo:
    """:class:`_TargetInfo` of ``b``, computed once per bucketization (the saturation point
    and the tables ask for it several times in one check)."""
    return b.memo("worst_case_targets", lambda: _compute_targets(b))


def _compute_targets(b: Bucketization) -> _TargetInfo:
    if not b.benign_mask.any():
        # the most frequent value, first among equals: what ``np.argmax`` returns, and
        # nothing is more frequent (a sort of every group's values cost 20 ms of 125 on
        # 100,000 groups)
        index = np.argmax(b.counts, axis=1).astype(np.int64)
        count = np.take_along_axis(b.counts, index[:, None], axis=1)[:, 0].astype(np.int64)
        index[count == 0] = -1
        rank = np.zeros(b.n_groups, dtype=np.int64)
        for arr in (index, count, rank):
            arr.setflags(write=False)
        return _TargetInfo(index=index, count=count, rank=rank)
    order = b.value_order()
    counts = np.take_along_axis(b.counts, order, axis=1)
    eligible = (counts > 0) & ~b.benign_mask[order]
    has = eligible.any(axis=1)
    pos = np.argmax(eligible, axis=1)
    rows = np.arange(b.n_groups)
    index = np.where(has, order[rows, pos], -1).astype(np.int64)
    count = np.where(has, counts[rows, pos], 0).astype(np.int64)
    rank = np.where(has, (b.counts > count[:, None]).sum(axis=1), 0).astype(np.int64)
    for arr in (index, count, rank):
        arr.setflags(write=False)
    return _TargetInfo(index=index, count=count, rank=rank)


# --------------------------------------------------------------------- Minimize1 (3.3.1)
_CHUNK = 16384


def _log_minimize1(sizes: IntArray, prefix: IntArray, h_max: int) -> FloatArray:
    """``log Minimize1(b, 0, h, h)`` for every profile and every budget ``h = 0..h_max``.

    ``prefix[u, j]`` is the sum of the ``j`` largest counts of profile ``u`` (``j = 0..h_max``).
    Lemma 12: with person profile ``k_0 >= k_1 >= ...`` the minimum probability that every
    atom is false is ``prod_i (n - i - prefix[k_i]) / (n - i)``. The recursion over persons
    ``F_i(cap, rem) = min(stop, min_{kappa <= min(cap, rem)} phi(i, kappa) F_{i+1}(kappa,
    rem - kappa))``
    is evaluated with the running minimum over ``cap`` (O(1) per state), vectorized over
    profiles in chunks. ``stop`` (log 1) allows fewer atoms, which never hurts the adversary
    since Minimize1 is non-increasing in the budget. People are distinct, so ``i < n``.
    """
    n_prof = sizes.shape[0]
    out = np.zeros((n_prof, h_max + 1), dtype=np.float64)
    if h_max == 0:
        return out
    for start in range(0, n_prof, _CHUNK):
        n = sizes[start : start + _CHUNK].astype(np.float64)
        pre = prefix[start : start + _CHUNK, 1:].T.astype(np.float64)  # (h_max, U)
        width = n.shape[0]
        f_next = np.zeros((h_max + 1, h_max + 1, width))
        with np.errstate(divide="ignore", invalid="ignore"):
            for i in range(h_max - 1, -1, -1):
                avail = n - i
                valid = avail > 0
                log_phi = np.where(
                    valid,
                    np.log(np.maximum(avail - pre, 0.0)) - np.log(np.where(valid, avail, 1.0)),
                    np.inf,
                )
                f_cur = np.zeros((h_max + 1, h_max + 1, width))
                for rem in range(1, h_max - i + 1):
                    best = np.zeros(width)
                    for cap in range(1, rem + 1):
                        best = np.fmin(best, log_phi[cap - 1] + f_next[cap, rem - cap])
                        f_cur[cap, rem] = best
                    f_cur[rem + 1 :, rem] = best
                f_next = f_cur
        for h in range(1, h_max + 1):
            out[start : start + _CHUNK, h] = f_next[h, h]
    return out


@lru_cache(maxsize=4096)
def _best_partition(n: int, top: tuple[int, ...], h: int) -> tuple[Fraction, tuple[int, ...]]:
    """Exact ``Minimize1(b, 0, h, h)`` and a minimizing person profile (Lemma 12).

    ``top`` holds the group's counts in decreasing order (at least ``h`` entries, zero
    padded). Exact rationals: this is the value the engine reports for a witness.
    """
    prefix = [0]
    for c in top:
        prefix.append(prefix[-1] + c)

    @cache
    def best(i: int, cap: int, rem: int) -> tuple[Fraction, tuple[int, ...]]:
        result: tuple[Fraction, tuple[int, ...]] = (Fraction(1), ())
        if rem == 0 or i >= n:
            return result
        for kappa in range(1, min(cap, rem) + 1):
            phi = Fraction(max(n - i - prefix[kappa], 0), n - i)
            sub_value, sub_parts = best(i + 1, kappa, rem - kappa)
            value = phi * sub_value
            if value < result[0]:
                result = (value, (kappa, *sub_parts))
        return result

    return best(0, h, h)


# --------------------------------------------------------------------- Minimize2 (3.3.3)
@dataclass(frozen=True)
class _Tables:
    """Per-group log costs: ``g[b, h] = log Minimize1(b, h)`` (h atoms, target elsewhere) and
    ``t[b, h] = log(Minimize1(b, h + 1) * n_b / n_b(s_b^0))`` (target in b, h other atoms)."""

    g: FloatArray
    t: FloatArray
    top: IntArray  # sorted counts, top (k_max + 1) columns, zero padded
    sizes: IntArray
    targets: _TargetInfo


def _distinct_rows(keys: IntArray) -> tuple[IntArray, IntArray]:
    """``(first, inverse)`` of the distinct rows of ``keys`` (non-negative counts): the first
    row of each distinct profile, and each row's profile. The rows are packed into one
    integer when their columns' bit widths fit in 63 bits (the usual case: 100,000 groups of
    40-80 records take 39 bits; 3x faster than comparing rows as bytes), else compared as byte
    strings (5x faster than ``np.unique(axis=0)``). Which profile gets which index does not
    matter: every use maps back through ``inverse``."""
    widths = [max(int(col.max(initial=0)), 1).bit_length() for col in keys.T]
    if sum(widths) <= 63:
        packed = np.zeros(keys.shape[0], dtype=np.int64)
        for col, width in zip(keys.T, widths, strict=True):
            packed <<= width
            packed |= col
        _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    else:
        rows = keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).reshape(-1)
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    return first.astype(np.int64), inverse.reshape(-1).astype(np.int64)


def _tables(b: Bucketization, k_max: int) -> _Tables:
    h_max = k_max + 1
    sorted_counts = b.sorted_counts()
    width = sorted_counts.shape[1]
    if width >= h_max:
        top = sorted_counts[:, :h_max]
    else:
        top = np.zeros((b.n_groups, h_max), dtype=np.int64)
        top[:, :width] = sorted_counts
    sizes = b.sizes
    keys = np.ascontiguousarray(np.column_stack([sizes, top]))
    first, inverse = _distinct_rows(keys)
    uniq = keys[first]
    prefix = np.zeros((uniq.shape[0], h_max + 1), dtype=np.int64)
    prefix[:, 1:] = np.cumsum(uniq[:, 1:], axis=1)
    log_m1 = _log_minimize1(uniq[:, 0], prefix, h_max)[inverse]
    log_ratio = np.log(sizes.astype(np.float64)) - np.log(top[:, 0].astype(np.float64))
    t = log_m1[:, 1:] + log_ratio[:, None]
    tgt = _targets(b)
    if b.benign_mask.any():
        t = t.copy()
        t[tgt.index < 0] = np.inf  # only benign values: never the target
        seen: dict[tuple[int, tuple[int, ...], int, int], FloatArray] = {}
        for grp in np.flatnonzero((tgt.index >= 0) & (tgt.rank > 0)).tolist():
            key = (
                int(sizes[grp]),
                tuple(int(x) for x in top[grp]),
                int(tgt.count[grp]),
                int(tgt.rank[grp]),
            )
            if key not in seen:  # one evaluation per distinct profile
                seen[key] = _log_target_costs(*key, h_max)
            t[grp] = seen[key]
    return _Tables(g=log_m1[:, : k_max + 1], t=t, top=top, sizes=sizes, targets=tgt)


# ------------------------------------------------------ target below a benign value
# A group whose most frequent value is benign holds the target ``A = (p, s*)`` with ``s*``
# its most frequent non-benign value, ``r > 0`` values (benign) more frequent. The least
# ``Pr(A and h further atoms of the group all false)`` is attained by nested forbidden
# sets: the ``m`` people with the largest budget ``kappa_0`` (the target's person among
# them) are all forbidden ``V_0 = {s*} + the kappa_0 - 1 most frequent other values``,
# of count ``Q(kappa_0) = n(s*) + (sum of the kappa_0 - 1 largest other counts)``, every
# other person ``i`` its ``kappa_i < kappa_0`` most frequent values (a subset of V_0), so
# the probability is Lemma 12's product with ``Q(kappa_0)`` for the first ``m`` factors.
# (docs/worst-case-engine.md, "Benign values"; the exhaustive oracle checks the minimum.)


def _q_count(top: tuple[int, ...], nstar: int, rank: int, kappa: int) -> int:
    """``Q(kappa)``: count of ``{s*}`` plus the ``kappa - 1`` most frequent other values."""
    head = sum(top[: kappa - 1])
    return head + nstar if kappa <= rank else head + top[kappa - 1]


def _log_target_costs(
    n: int, top: tuple[int, ...], nstar: int, rank: int, h_max: int
) -> FloatArray:
    """``log(MinQ(h + 1) n / n(s*))`` for ``h = 0..h_max - 1`` (the target role's costs)."""
    prefix = [0]
    for c in top:
        prefix.append(prefix[-1] + c)

    def log_phi(i: int, c: int) -> float:
        x = n - i - c
        return float("-inf") if x <= 0 else math.log(x) - math.log(n - i)

    @cache
    def rest(i: int, cap: int, rem: int) -> float:
        if rem == 0 or i >= n or cap == 0:
            return 0.0
        best = 0.0
        for kappa in range(1, min(cap, rem) + 1):
            best = min(best, log_phi(i, prefix[kappa]) + rest(i + 1, kappa, rem - kappa))
        return best

    out = np.empty(h_max, dtype=np.float64)
    shift = math.log(n) - math.log(nstar)
    for h1 in range(1, h_max + 1):
        best = float("inf")
        for k0 in range(1, h1 + 1):
            q = _q_count(top, nstar, rank, k0)
            head = 0.0
            for m in range(1, min(h1 // k0, n) + 1):
                head += log_phi(m - 1, q)
                best = min(best, head + rest(m, k0 - 1, h1 - m * k0))
        out[h1 - 1] = best + shift
    return out


@lru_cache(maxsize=4096)
def _exact_target(
    n: int, top: tuple[int, ...], nstar: int, rank: int, h1: int
) -> tuple[Fraction, tuple[int, ...]]:
    """Exact ``MinQ(h1)`` and a minimizing person profile (the first ``m`` entries equal to
    ``kappa_0`` are forbidden ``V_0``), as :func:`_best_partition` does for Lemma 12."""
    prefix = [0]
    for c in top:
        prefix.append(prefix[-1] + c)

    @cache
    def rest(i: int, cap: int, rem: int) -> tuple[Fraction, tuple[int, ...]]:
        result: tuple[Fraction, tuple[int, ...]] = (Fraction(1), ())
        if rem == 0 or i >= n:
            return result
        for kappa in range(1, min(cap, rem) + 1):
            phi = Fraction(max(n - i - prefix[kappa], 0), n - i)
            sub_value, sub_parts = rest(i + 1, kappa, rem - kappa)
            if phi * sub_value < result[0]:
                result = (phi * sub_value, (kappa, *sub_parts))
        return result

    best: tuple[Fraction, tuple[int, ...]] | None = None
    for k0 in range(1, h1 + 1):
        q = _q_count(top, nstar, rank, k0)
        head = Fraction(1)
        for m in range(1, min(h1 // k0, n) + 1):
            head *= Fraction(max(n - (m - 1) - q, 0), n - (m - 1))
            sub_value, sub_parts = rest(m, k0 - 1, h1 - m * k0)
            if best is None or head * sub_value < best[0]:
                best = (head * sub_value, (k0,) * m + sub_parts)
    assert best is not None
    return best


def _candidates(tab: _Tables, k_max: int) -> IntArray:
    """Groups that can appear in an optimal allocation.

    At most ``k_max + 1`` groups are used (``k_max`` atoms outside the target's group, each
    used group holding at least one, plus the target's group). So for every role and budget
    ``h`` only the ``k_max + 1`` groups with the smallest cost can be needed: an optimum
    using any other group ``b`` with ``h`` atoms can swap it for an unused group among those
    ``k_max + 1`` whose cost is no larger.
    """
    n_groups = tab.g.shape[0]
    keep = k_max + 1
    if n_groups <= keep:
        return np.arange(n_groups, dtype=np.int64)
    chosen: list[IntArray] = []
    for h in range(k_max + 1):
        chosen.append(_smallest(tab.t[:, h], keep))
        if h >= 1:
            chosen.append(_smallest(tab.g[:, h], keep))
    # sorted and deduplicated by hand: np.unique would import numpy.ma (it checks for masked
    # arrays), about 10 ms of every check's start-up
    picked = np.sort(np.concatenate(chosen))
    return picked[np.concatenate(([True], picked[1:] != picked[:-1]))].astype(np.int64)


def _smallest(cost: FloatArray, keep: int) -> IntArray:
    """Indices of the ``keep`` smallest costs, ties going to the smallest index, so the
    witness does not depend on ``k_max`` (``argpartition`` alone breaks ties arbitrarily)."""
    threshold = cost[np.argpartition(cost, keep - 1)[keep - 1]]
    below = np.flatnonzero(cost < threshold)
    tied = np.flatnonzero(cost == threshold)[: keep - below.size]
    return np.concatenate([below, tied]).astype(np.int64)


@dataclass(frozen=True)
class _Allocation:
    target_group: int
    atoms_per_group: dict[int, int]  # group -> atoms placed there (target's group: besides A)


@np.errstate(invalid="ignore")
def _minimize2(tab: _Tables, k_max: int) -> list[_Allocation]:
    """Min-plus knapsack over candidate groups, for every budget ``k = 0..k_max`` at once.

    ``D0[x]``: least log cost of ``x`` atoms with the target not yet placed; ``D1[x]``: with
    the target placed. A group takes ``h >= 1`` atoms (cost ``g``), or holds the target with
    ``h >= 0`` further atoms (cost ``t``), or nothing. Ties keep the earlier, smaller choice.
    """
    cands = _candidates(tab, k_max)
    size = k_max + 1
    inf = np.inf
    d0 = np.full(size, inf)
    d0[0] = 0.0
    d1 = np.full(size, inf)
    # back pointers: for candidate step c, state (flag, x): (h, role) with role 0 none,
    # 1 non-target, 2 target
    back_h = np.zeros((len(cands), 2, size), dtype=np.int64)
    back_role = np.zeros((len(cands), 2, size), dtype=np.int8)
    for step, grp in enumerate(cands):
        g = tab.g[grp]  # inf + -inf gives nan, and nan never compares as better
        t = tab.t[grp]
        n0 = d0.copy()
        n1 = d1.copy()
        for h in range(size):
            if h >= 1:
                cand0 = d0[: size - h] + g[h]
                better0 = cand0 < n0[h:]
                n0[h:] = np.where(better0, cand0, n0[h:])
                back_h[step, 0, h:][better0] = h
                back_role[step, 0, h:][better0] = 1
                cand1 = d1[: size - h] + g[h]
                better1 = cand1 < n1[h:]
                n1[h:] = np.where(better1, cand1, n1[h:])
                back_h[step, 1, h:][better1] = h
                back_role[step, 1, h:][better1] = 1
            cand_t = d0[: size - h] + t[h]
            better_t = cand_t < n1[h:]
            n1[h:] = np.where(better_t, cand_t, n1[h:])
            back_h[step, 1, h:][better_t] = h
            back_role[step, 1, h:][better_t] = 2
        d0, d1 = n0, n1
    results: list[_Allocation] = []
    for k in range(k_max + 1):
        x = int(np.argmin(d1[: k + 1]))  # first minimum: fewest atoms
        flag = 1
        target = -1
        placed: dict[int, int] = {}
        for step in range(len(cands) - 1, -1, -1):
            role = int(back_role[step, flag, x])
            if role == 0:
                continue
            h = int(back_h[step, flag, x])
            grp = int(cands[step])
            if role == 2:
                target = grp
                flag = 0
            if h:
                placed[grp] = h
            x -= h
        results.append(_Allocation(target_group=target, atoms_per_group=placed))
    return results


def _group_atoms(
    b: Bucketization, group: int, parts: tuple[int, ...], order: IntArray
) -> list[Atom]:
    """Atoms of Lemma 12's configuration: person ``i`` takes the ``parts[i]`` most frequent
    values of the group. Atoms on values absent from the group are dropped (always false,
    so they carry no knowledge)."""
    atoms: list[Atom] = []
    for person, kappa in enumerate(parts):
        for j in range(kappa):
            v = int(order[j])
            if b.counts[group, v] > 0:
                atoms.append(Atom(group=group, person=person, value=b.values[v]))
    return atoms


def _target_atoms(
    b: Bucketization, group: int, parts: tuple[int, ...], target_value: int
) -> list[Atom]:
    """Atoms of the target's group besides ``A`` itself: the people with the largest budget
    ``parts[0]`` are forbidden ``V_0`` (``s*`` and the ``parts[0] - 1`` most frequent other
    values), every other person its ``parts[i]`` most frequent values (a subset of ``V_0``).
    With ``s*`` the most frequent value this is Lemma 12's configuration."""
    order = [int(v) for v in b.row_order(group)]
    v0 = [target_value, *[v for v in order if v != target_value][: parts[0] - 1]]
    atoms: list[Atom] = []
    for person, kappa in enumerate(parts):
        chosen = v0 if kappa == parts[0] else order[:kappa]
        for v in chosen:
            if person == 0 and v == target_value:
                continue
            if b.counts[group, v] > 0:
                atoms.append(Atom(group=group, person=person, value=b.values[v]))
    return atoms


def _implication_result(
    b: Bucketization, tab: _Tables, alloc: _Allocation, k: int
) -> DisclosureResult:
    j = alloc.target_group
    n_j = int(tab.sizes[j])
    top_j = tuple(int(x) for x in tab.top[j])
    h_j = alloc.atoms_per_group.get(j, 0)
    s_star = int(tab.targets.index[j])
    n_star = int(tab.targets.count[j])
    rank = int(tab.targets.rank[j])
    if rank == 0:
        m1_target, parts_target = _best_partition(n_j, top_j, h_j + 1)
    else:
        m1_target, parts_target = _exact_target(n_j, top_j, n_star, rank, h_j + 1)
    ratio = m1_target * Fraction(n_j, n_star)
    atoms = _target_atoms(b, j, parts_target or (1,), s_star)
    groups = [j]
    for grp, h in sorted(alloc.atoms_per_group.items()):
        if grp == j:
            continue
        m1, parts = _best_partition(int(tab.sizes[grp]), tuple(int(x) for x in tab.top[grp]), h)
        ratio *= m1
        atoms.extend(_group_atoms(b, grp, parts, b.row_order(grp)))
        groups.append(grp)
    target = Atom(group=j, person=0, value=b.values[s_star])
    value = Fraction(1) / (1 + ratio)
    witness = Witness("implications", target, tuple(atoms), tuple(groups))
    return DisclosureResult(
        "implications", k, float(value), witness, value.numerator, value.denominator
    )


def _no_target_result(b: Bucketization, k: int, knowledge: Knowledge) -> DisclosureResult:
    """Every value present is benign: nothing can be disclosed, for any knowledge. The
    witness names person 0 of group 0 and its most frequent (benign) value, with no atoms;
    :func:`describe_witness` says that no value is sensitive."""
    target = Atom(group=0, person=0, value=b.values[int(b.row_order(0)[0])])
    return DisclosureResult(knowledge, k, 0.0, Witness(knowledge, target, (), (0,)), 0, 1)


def _saturated_result(b: Bucketization, k: int, knowledge: Knowledge) -> DisclosureResult:
    """The result for any ``k >= saturation_point(b)``: disclosure 1, attained by ruling out
    every other value for person 0 of the first least diverse group (step 2 of
    :func:`saturation_point`'s proof), with ``K0`` atoms -- the fewest possible (step 3).
    With benign values the target group is the first least diverse group holding a
    non-benign value, or (implications) the knowledge is "if person 0 of group ``o`` has any
    of its values, the target has ``s*``" for the least diverse other group ``o``."""
    _, j, other = _saturation(b, knowledge)
    s_star = int(_targets(b).index[j])
    target = Atom(group=j, person=0, value=b.values[s_star])
    if other >= 0:
        order = b.row_order(other)
        present = [int(v) for v in order if b.counts[other, int(v)] > 0]
        atoms = tuple(Atom(group=other, person=0, value=b.values[v]) for v in present)
        return DisclosureResult(
            knowledge, k, 1.0, Witness(knowledge, target, atoms, (j, other)), 1, 1
        )
    order = b.row_order(j)
    present = [int(v) for v in order if b.counts[j, int(v)] > 0 and int(v) != s_star]
    atoms = tuple(Atom(group=j, person=0, value=b.values[v]) for v in present)
    return DisclosureResult(knowledge, k, 1.0, Witness(knowledge, target, atoms, (j,)), 1, 1)


def _negation_result(b: Bucketization, k: int) -> DisclosureResult:
    """Negation-only knowledge (k negated atoms, the l-diversity adversary).

    The worst case rules out the target's own ``k`` most frequent competing values:
    ``max_b n_b(s_b^0) / (n_b - sum_{j=1..k} n_b(s_b^j))``. (Negated atoms about other people
    never do better; the property tests check this against exhaustive enumeration.) With
    benign values the target value is the group's most frequent non-benign value ``s*`` and
    the competitors ruled out are the ``k`` most frequent other values, benign ones included:
    ``n_b(s*) / (n_b - top_k(others))`` over groups holding a non-benign value (the larger
    ``n_b(s*)`` the larger both this ratio and ``n_b(s*) / (n_b - top_k)``, so ``s*`` is the
    best target of its group; docs/worst-case-engine.md, "Benign values"). The maximum is
    found in floats and settled exactly among near-ties, so it is exact. Callers pass
    ``k < saturation_point(b, "negations")``; beyond it :func:`_saturated_result` applies.
    """
    tgt = _targets(b)
    sc = b.sorted_counts()
    width = sc.shape[1]
    prefix = np.zeros((b.n_groups, width + 2), dtype=np.int64)
    prefix[:, 1 : width + 1] = np.cumsum(sc, axis=1)
    prefix[:, width + 1] = prefix[:, width]
    # top k of the values other than s*: P[k] if s* is not among them, else P[k+1] - n(s*)
    others = np.where(
        tgt.rank >= k, prefix[:, min(k, width + 1)], prefix[:, min(k + 1, width + 1)] - tgt.count
    )
    num = tgt.count
    den = b.sizes - others
    valid = tgt.index >= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(valid, num / np.where(valid, den, 1), -1.0)
    near = np.flatnonzero(valid & (ratio >= float(ratio.max()) * (1 - 1e-12)))
    best = max((int(g) for g in near), key=lambda g: (Fraction(int(num[g]), int(den[g])), -g))
    s_star = int(tgt.index[best])
    rivals = [int(v) for v in b.row_order(best) if int(v) != s_star][:k]
    atoms = tuple(
        Atom(group=best, person=0, value=b.values[v]) for v in rivals if b.counts[best, v] > 0
    )
    target = Atom(group=best, person=0, value=b.values[s_star])
    value = Fraction(int(num[best]), int(den[best]))
    return DisclosureResult(
        "negations",
        k,
        float(value),
        Witness("negations", target, atoms, (best,)),
        value.numerator,
        value.denominator,
    )


# ------------------------------------------------------------------------ public API
def disclosure_curve(b: Bucketization, k_max: int) -> list[CurvePoint]:
    """Maximum disclosure for ``k = 0..k_max`` implications and negations, in one pass.

    The dynamic program runs only up to ``min(k_max, K0 - 1)`` (``K0`` =
    :func:`saturation_point`); every later point is the saturated result (disclosure 1, the
    same witness, its own ``k``). Memory and time are those of ``min(k_max, K0)`` plus one
    small object per point; ``k_max`` above :data:`MAX_K_CURVE` is refused as bad input
    before anything is computed. With benign values the two kinds saturate at their own
    ``K0``; with every present value benign the curve is 0 throughout.
    """
    k_max = _check_k(k_max, "k_max", MAX_K_CURVE)
    k0 = saturation_point(b, "implications")
    if k0 == NO_TARGET:
        imp0 = _no_target_result(b, 0, "implications").witness
        neg0 = _no_target_result(b, 0, "negations").witness
        return [
            CurvePoint(
                k,
                DisclosureResult("implications", k, 0.0, imp0, 0, 1),
                DisclosureResult("negations", k, 0.0, neg0, 0, 1),
            )
            for k in range(k_max + 1)
        ]
    k0_neg = saturation_point(b, "negations")
    k_dp = min(k_max, k0 - 1)
    allocations: list[_Allocation] = []
    tab: _Tables | None = None
    if k_dp >= 0:
        tab = _tables(b, k_dp)
        allocations = _minimize2(tab, k_dp)
    imp_w = _saturated_result(b, k0, "implications").witness
    neg_w = _saturated_result(b, k0_neg, "negations").witness
    out: list[CurvePoint] = []
    for k in range(k_max + 1):  # flat from K0 on: one witness per kind, shared
        if k < k0:
            assert tab is not None
            imp = _implication_result(b, tab, allocations[k], k)
        else:
            imp = DisclosureResult("implications", k, 1.0, imp_w, 1, 1)
        if k < k0_neg:
            neg = _negation_result(b, k)
        else:
            neg = DisclosureResult("negations", k, 1.0, neg_w, 1, 1)
        out.append(CurvePoint(k=k, implications=imp, negations=neg))
    return out


def max_disclosure(
    b: Bucketization, k: int, knowledge: Knowledge = "implications"
) -> DisclosureResult:
    """Maximum disclosure of ``b`` against ``k`` basic implications (Definition 6, Theorem 9)
    or, with ``knowledge="negations"``, against ``k`` negated atoms; with its witness.

    For ``k >= saturation_point(b)`` the result is the saturated one (disclosure 1, computed
    in ``O(groups x values)``), whatever ``k``; ``k`` above :data:`MAX_K` is bad input.
    """
    k = _check_k(k)
    if knowledge not in ("implications", "negations"):
        raise InputError(f"knowledge must be 'implications' or 'negations', got {knowledge!r}")
    k0 = saturation_point(b, knowledge)
    if k0 == NO_TARGET:
        return _no_target_result(b, k, knowledge)
    if k >= k0:
        return _saturated_result(b, k, knowledge)
    if knowledge == "negations":
        return _negation_result(b, k)
    tab = _tables(b, k)
    return _implication_result(b, tab, _minimize2(tab, k)[k], k)


def ck_safe(result: DisclosureResult, c: float) -> bool:
    """Definition 13's ``max disclosure < c``, decided by :mod:`airflow_privacy.core.thresholds`.

    The disclosure is the exact fraction of the witness, compared exactly with ``c`` read as
    the decimal it was written as. For implications the witness is maximal only up to the
    floating-point noise of the search (its log costs), so a disclosure within the tolerance
    band below ``c`` is unsafe as well (:data:`~airflow_privacy.core.thresholds.EXACT_WITH_BAND`);
    for negations, and at saturation, the value is exactly maximal and the decision exact.
    """
    exact = thresholds.below(result.exact, c)
    if result.knowledge == "negations" or result.exact == 1:
        return exact
    return exact and thresholds.below(result.max_disclosure, c)


def _decision(result: DisclosureResult) -> thresholds.Decision:
    if result.knowledge == "negations" or result.exact == 1:
        return thresholds.EXACT
    return thresholds.EXACT_WITH_BAND


def is_ck_safe(b: Bucketization, c: float, k: int) -> bool:
    """Definition 13: ``b`` is (c,k)-safe iff its maximum disclosure w.r.t. k basic
    implications is less than ``c`` (decided by :func:`ck_safe`)."""
    c = _check_c(c)
    return ck_safe(max_disclosure(b, k), c)


# ------------------------------------------------------------ exact evaluation of knowledge
_MAX_EXACT_ATOMS = 20


def _falling(x: int, m: int) -> int:
    out = 1
    for i in range(m):
        out *= x - i
    return out


def _prob_all_false(
    b: Bucketization, group: int, atoms: Sequence[tuple[int, int]], forced: tuple[int, int] | None
) -> Fraction:
    """``Pr(forced and no atom of ``atoms`` holds)`` within one group, by inclusion-exclusion.

    Atoms are ``(person, value index)``. ``Pr(a set of atoms all hold)`` is 0 if it gives one
    person two values, else ``prod_v falling(n(v), m_v) / falling(n, m)`` where ``m_v`` people
    are assigned value ``v`` (random worlds, Martin et al. section 2.2).
    """
    counts = [int(c) for c in b.counts[group]]
    n = sum(counts)
    uniq = sorted(set(atoms))
    if len(uniq) > _MAX_EXACT_ATOMS:
        raise InputError(
            f"exact evaluation supports at most {_MAX_EXACT_ATOMS} atoms per group, got {len(uniq)}"
        )
    total = Fraction(0)
    for mask in range(1 << len(uniq)):
        chosen = [uniq[i] for i in range(len(uniq)) if mask >> i & 1]
        if forced is not None:
            chosen.append(forced)
        people: dict[int, int] = {}
        ok = True
        for person, v in chosen:
            if people.setdefault(person, v) != v:
                ok = False
                break
        if not ok:
            continue
        per_value: dict[int, int] = {}
        for v in people.values():
            per_value[v] = per_value.get(v, 0) + 1
        num = 1
        for v, m in per_value.items():
            num *= _falling(counts[v], m)
        term = Fraction(num, _falling(n, len(people)))
        total += -term if bin(mask).count("1") % 2 else term
    return total


def posterior(
    b: Bucketization,
    target: Atom,
    atoms: Sequence[Atom],
    knowledge: Knowledge = "implications",
) -> Fraction:
    """Exact ``Pr(target | B and knowledge)`` for specific knowledge about specific people.

    ``knowledge="implications"``: the adversary knows ``A_i -> target`` for each atom
    (section 3.3: ``Pr(A) / (Pr(A) + Pr(not A and AND not A_i))``); ``"negations"``: he knows
    ``not A_i`` for each atom. Raises :class:`InputError` for atoms outside the release or
    for knowledge that no table consistent with the release satisfies. Cost is exponential
    in the number of atoms per group (at most 20).
    """
    index = {v: j for j, v in enumerate(b.values)}

    def resolve(a: Atom) -> tuple[int, int, int]:
        if not 0 <= a.group < b.n_groups:
            raise InputError(f"atom {a}: group {a.group} does not exist")
        size = int(b.sizes[a.group])
        if not 0 <= a.person < size:
            raise InputError(f"atom {a}: group {a.group} has {size} people (0..{size - 1})")
        if a.value not in index:
            raise InputError(f"atom {a}: {a.value!r} is not a value of {b.sensitive!r}")
        return a.group, a.person, index[a.value]

    tg, tp, tv = resolve(target)
    by_group: dict[int, list[tuple[int, int]]] = {}
    for a in atoms:
        g, p, v = resolve(a)
        by_group.setdefault(g, []).append((p, v))
    by_group.setdefault(tg, [])

    def product(extra_target: bool) -> Fraction:
        out = Fraction(1)
        for g, group_atoms in by_group.items():
            if g == tg:
                if extra_target:
                    out *= _prob_all_false(b, g, group_atoms, (tp, tv))
                else:
                    out *= _prob_all_false(b, g, [*group_atoms, (tp, tv)], None)
            else:
                out *= _prob_all_false(b, g, group_atoms, None)
        return out

    if knowledge == "implications":
        p_a = Fraction(int(b.counts[tg, tv]), int(b.sizes[tg]))
        denominator = p_a + product(extra_target=False)
        if denominator == 0:
            raise InputError("the knowledge is inconsistent with the release")
        return p_a / denominator
    if knowledge == "negations":
        both = product(extra_target=True)
        evidence = both + product(extra_target=False)
        if evidence == 0:
            raise InputError("the knowledge is inconsistent with the release")
        return both / evidence
    raise InputError(f"knowledge must be 'implications' or 'negations', got {knowledge!r}")


# ----------------------------------------------------------------- criteria and wording
def _value_names(w: Witness) -> ValueNames:
    """The witness's values as ``value A`` (the target's), ``value B``, ... in the order
    :func:`describe_witness` and :func:`witness_dict` mention them."""
    names = ValueNames()
    names(w.target.value)
    for a in w.atoms:
        names(a.value)
    return names


def describe_witness(b: Bucketization, result: DisclosureResult) -> str:
    """The witness in words a data steward can act on: groups by their published labels,
    people by position in their group, sensitive values as ``value A`` (the target's),
    ``value B``, ... (:mod:`airflow_privacy.core.criteria.wording`): never a value itself."""
    w = result.witness
    if result.numerator == 0:
        return "every value present in the release is declared benign: nothing can be disclosed"
    t = w.target
    target_group = b.group_label(t.group)
    name = _value_names(w)

    def who(a: Atom) -> str:
        if a.group == t.group:
            return f"person #{a.person + 1} of the same group"
        return f"person #{a.person + 1} of group '{b.group_label(a.group)}'"

    facts: list[str] = []
    for a in w.atoms:
        if a.group == t.group and a.person == t.person:
            facts.append(f"the target does not have {name(a.value)}")
        elif w.knowledge == "negations":
            facts.append(f"{who(a)} does not have {name(a.value)}")
        else:
            facts.append(f"if {who(a)} has {name(a.value)}, then the target has {name(t.value)}")
    if facts:
        listed = "; ".join(f"({i}) {f}" for i, f in enumerate(facts, start=1))
        prefix = f"an adversary who knows that {listed}"
    else:
        prefix = "an adversary with no background knowledge"
    return (
        f"{prefix} concludes that a person in group '{target_group}' "
        f"has {name(t.value)} with probability {result.max_disclosure:.4g}"
    )


def witness_dict(b: Bucketization, result: DisclosureResult) -> dict[str, Any]:
    """JSON-ready witness, the public form: groups with their labels, people by position,
    values as ``value_ref`` (``value A`` is the target's, as in :func:`describe_witness`);
    never a sensitive value (``result.witness`` keeps them, inside the engine)."""
    w = result.witness
    name = _value_names(w)
    return {
        "knowledge": w.knowledge,
        "target": {
            "group": w.target.group,
            "group_label": b.group_label(w.target.group),
            "person": w.target.person,
            "value_ref": name(w.target.value),
        },
        "atoms": [
            {
                "group": a.group,
                "group_label": b.group_label(a.group),
                "person": a.person,
                "value_ref": name(a.value),
            }
            for a in w.atoms
        ],
        "groups": [{"group": g, "group_label": b.group_label(g)} for g in w.groups],
        "explanation": describe_witness(b, result),
    }


def _safety_result(
    b: Bucketization, criterion: str, c: float, k: int, knowledge: Knowledge
) -> CriterionResult:
    c = _check_c(c, criterion)
    k = _check_k(k, who=criterion)
    k0 = saturation_point(b, knowledge)
    res = max_disclosure(b, k, knowledge)
    safe = ck_safe(res, c)
    pieces = "basic implications" if knowledge == "implications" else "negated atoms"
    verdict = "below" if safe else "not below"
    reason = (
        f"maximum disclosure against {k} {pieces} is {res.max_disclosure:.4g}, "
        f"{verdict} c = {c:g}: {describe_witness(b, res)}"
    )
    return CriterionResult(
        criterion=criterion,
        safe=safe,
        parameters={"c": c, "k": k, **b.benign_parameters()},
        value=res.max_disclosure,
        reason=reason,
        max_disclosure=res.max_disclosure,
        witness=witness_dict(b, res),
        details={
            "groups": b.n_groups,
            "records": b.n_records,
            "exact": f"{res.numerator}/{res.denominator}",
            "saturation_k": None if k0 == NO_TARGET else k0,
            "saturated": k >= k0,
            **thresholds.decision_details(_decision(res)),
            **b.benign_details(),
        },
    )


def check_ck_safety(b: Bucketization, c: float, k: int) -> CriterionResult:
    """(c,k)-safety (Definition 13) as a :class:`CriterionResult` with its witness."""
    return _safety_result(b, "ck-safety", c, k, "implications")


def check_negation_safety(b: Bucketization, c: float, k: int) -> CriterionResult:
    """Safety against ``k`` negated atoms (the l-diversity adversary), same shape."""
    return _safety_result(b, "negation-safety", c, k, "negations")
