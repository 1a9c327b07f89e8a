"""The worked numbers of Martin et al. 2007, computed by the exhaustive oracle.

The bucketization is the paper's Figure 3: bucket 0 (males: Bob, Charlie, Dave, Ed, Frank)
holds {Flu: 2, Lung Cancer: 2, Mumps: 1}; bucket 1 (females: Gloria, Hannah, Irma, Jessica,
Karen) holds {Flu: 2, Breast Cancer: 1, Heart Disease: 1, Ovarian Cancer: 1}. People are
exchangeable inside a bucket, so the person indices below are only names.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

from tests.oracle import (
    OAtom,
    all_atoms,
    holds,
    max_disclosure_basic,
    max_disclosure_negations,
    max_disclosure_simple,
    posterior_basic,
    posterior_implications,
    posterior_negations,
    probability,
    worlds,
)

VALUES = ["Flu", "Lung Cancer", "Mumps", "Breast Cancer", "Heart Disease", "Ovarian Cancer"]
FLU, LUNG_CANCER, MUMPS, BREAST_CANCER, HEART_DISEASE, OVARIAN_CANCER = range(6)
FIGURE3 = [[2, 2, 1, 0, 0, 0], [2, 0, 0, 1, 1, 1]]

MALES, FEMALES = 0, 1
BOB, CHARLIE, DAVE, ED, FRANK = ((MALES, p) for p in range(5))
GLORIA, HANNAH, IRMA, JESSICA, KAREN = ((FEMALES, p) for p in range(5))


def atom(person: tuple[int, int], value: int) -> OAtom:
    return (person[0], person[1], value)


def test_sample_space_is_every_distinct_assignment() -> None:
    space = worlds(FIGURE3)
    # 5! / (2! 2! 1!) = 30 assignments for the males, 5! / 2! = 60 for the females.
    assert len(space) == 30 * 60
    assert len(set(space)) == len(space)
    for w in space:
        assert sorted(w[MALES]) == [FLU, FLU, LUNG_CANCER, LUNG_CANCER, MUMPS]
        assert sorted(w[FEMALES]) == [FLU, FLU, BREAST_CANCER, HEART_DISEASE, OVARIAN_CANCER]


def test_no_knowledge_marginals_are_the_bucket_frequencies() -> None:
    for g, row in enumerate(FIGURE3):
        n = sum(row)
        for p in range(n):
            for v, c in enumerate(row):
                a: OAtom = (g, p, v)
                assert probability(FIGURE3, lambda w: holds(w, a)) == Fraction(c, n)  # noqa: B023
    assert max_disclosure_simple(FIGURE3, 0).value == Fraction(2, 5)


def test_intro_ed() -> None:
    ed_lc = atom(ED, LUNG_CANCER)
    # Without knowledge: 2/5.
    assert probability(FIGURE3, lambda w: holds(w, ed_lc)) == Fraction(2, 5)
    # Ed does not have mumps: 1/2.
    not_mumps = atom(ED, MUMPS)
    assert probability(
        FIGURE3, lambda w: holds(w, ed_lc), lambda w: not holds(w, not_mumps)
    ) == Fraction(1, 2)
    assert posterior_negations(FIGURE3, ed_lc, [not_mumps]) == Fraction(1, 2)
    # ... and not flu: certain.
    not_flu = atom(ED, FLU)
    assert posterior_negations(FIGURE3, ed_lc, [not_mumps, not_flu]) == 1
    # The paper's encoding of "Ed does not have flu" as a basic implication:
    # t_Ed = flu -> t_Ed = ovarian cancer.
    flu_to_oc = ((atom(ED, FLU),), (atom(ED, OVARIAN_CANCER),))
    mumps_to_oc = ((atom(ED, MUMPS),), (atom(ED, OVARIAN_CANCER),))
    assert posterior_basic(FIGURE3, ed_lc, [mumps_to_oc]) == Fraction(1, 2)
    assert posterior_basic(FIGURE3, ed_lc, [mumps_to_oc, flu_to_oc]) == 1


def test_intro_charlie_and_hannah() -> None:
    charlie_flu, hannah_flu = atom(CHARLIE, FLU), atom(HANNAH, FLU)
    assert probability(FIGURE3, lambda w: holds(w, charlie_flu)) == Fraction(2, 5)
    got = probability(
        FIGURE3,
        lambda w: holds(w, charlie_flu),
        lambda w: not holds(w, hannah_flu) or holds(w, charlie_flu),
    )
    assert got == Fraction(10, 19)
    assert posterior_implications(FIGURE3, charlie_flu, [hannah_flu]) == Fraction(10, 19)
    assert posterior_basic(FIGURE3, charlie_flu, [((hannah_flu,), (charlie_flu,))]) == Fraction(
        10, 19
    )


def test_maximum_disclosure_for_one_implication_is_two_thirds_not_ten_nineteenths() -> None:
    """Section 2.3 claims the maximum w.r.t. one basic implication is 10/19, attained by
    ``t_p' = flu -> t_p = flu`` with p in bucket 0 and p' in bucket 1. That is only the best
    implication whose antecedent is about the *other* bucket. Definition 6 maximizes over all
    implications, including ones about the target's own person: "Ed has lung cancer -> Ed
    has flu" says Ed does not have lung cancer, and then Pr(Ed has flu) = 2/3 > 10/19
    (even an antecedent about another male, "Dave has flu -> Ed has flu", gives 4/7)."""
    ed_flu, ed_lc = atom(ED, FLU), atom(ED, LUNG_CANCER)
    assert posterior_basic(FIGURE3, ed_flu, [((ed_lc,), (ed_flu,))]) == Fraction(2, 3)
    assert posterior_implications(FIGURE3, ed_flu, [ed_lc]) == Fraction(2, 3)
    assert posterior_implications(FIGURE3, ed_flu, [atom(DAVE, FLU)]) == Fraction(4, 7)

    result = max_disclosure_simple(FIGURE3, 1)
    assert result.value == Fraction(2, 3)
    assert result.value > Fraction(10, 19)
    # The argmax really attains it.
    assert posterior_implications(FIGURE3, result.target, result.atoms) == Fraction(2, 3)

    # Where 10/19 comes from: the best single implication A' -> A with A' about a person of
    # the other bucket.
    atoms = all_atoms(FIGURE3)
    cross = max(
        posterior_implications(FIGURE3, a, [b])
        for a, b in itertools.product(atoms, atoms)
        if a[0] != b[0] and FIGURE3[a[0]][a[2]] > 0
    )
    assert cross == Fraction(10, 19)


def test_more_knowledge_on_figure3() -> None:
    assert max_disclosure_simple(FIGURE3, 2).value == 1  # Ed: not mumps, not flu
    assert max_disclosure_simple(FIGURE3, 3).value == 1
    # Negated atoms: "Ed does not have lung cancer" gives Pr(Ed has flu) = 2/3 as well.
    assert max_disclosure_negations(FIGURE3, 0).value == Fraction(2, 5)
    assert max_disclosure_negations(FIGURE3, 1).value == Fraction(2, 3)
    assert max_disclosure_negations(FIGURE3, 2).value == 1


def test_theorem9_on_a_reduced_figure3() -> None:
    """The basic-implication oracle enumerates every basic implication; on the full Figure 3
    (10 people, 1800 worlds, every partial assignment of 10 people as an antecedent) that is
    out of reach, so Theorem 9 is checked on the male bucket together with a 3-person female
    bucket {Flu, Heart Disease, Ovarian Cancer} (180 worlds): the maximum over *all* single
    basic implications is still 2/3, the value of the best simple implication."""
    reduced = [[2, 2, 1, 0, 0], [1, 0, 0, 1, 1]]
    basic = max_disclosure_basic(reduced, 1)
    assert basic.value == Fraction(2, 3)
    assert basic.value == max_disclosure_simple(reduced, 1).value
    assert posterior_basic(reduced, basic.target, basic.implications) == basic.value
    # The male bucket alone.
    assert max_disclosure_basic([[2, 2, 1]], 1).value == Fraction(2, 3)
