"""Worst-case background knowledge: maximum disclosure and (c,k)-safety.

Implements Martin, Kifer, Machanavajjhala, Gehrke, Halpern, "Worst-Case Background
Knowledge for Privacy-Preserving Data Publishing" (ICDE 2007), papers/000_*:

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

The paper's pseudo-code has errors that the enumerator in the tests exposes; they are listed
in docs/paper-errata.md. Everything returned is plain data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

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
    """Maximum disclosure of a bucketization against ``k`` pieces of knowledge."""

    knowledge: Knowledge
    k: int
    max_disclosure: float
    witness: Witness

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
