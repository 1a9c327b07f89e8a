"""Oracles for k-map and delta-presence written from the definitions (Sweeney 2002, section 4;
Nergiz, Atzori & Clifton 2007, Definition 4): per-record loops over explicit sample and
population tables, with Fractions. Shared by the engine's tests and the anonymizers'."""

from __future__ import annotations

from fractions import Fraction


def _tables(f: list[int], extra: list[int]) -> tuple[list[int], list[int]]:
    """Explicit record tables: each record is its class label; the sample is ``f_j`` records
    of class ``j``, the population the sample plus ``extra_j`` more."""
    sample = [j for j, c in enumerate(f) for _ in range(c)]
    population = sample + [j for j, c in enumerate(extra) for _ in range(c)]
    return sample, population


def oracle_kmap(f: list[int], extra: list[int], k: int) -> tuple[bool, set[int], Fraction]:
    sample, population = _tables(f, extra)
    bad: set[int] = set()
    n_bad = 0
    for record in sample:  # each sample record must map to >= k population records
        matches = sum(1 for p in population if p == record)
        if matches < k:
            bad.add(record)
            n_bad += 1
    return not bad, bad, Fraction(n_bad, len(sample))


def oracle_presence(
    f: list[int], extra: list[int], lo: Fraction, hi: Fraction
) -> tuple[bool, set[int], Fraction, Fraction]:
    sample, population = _tables(f, extra)
    probs: dict[int, Fraction] = {}
    for person in population:  # P(person in sample | release) for every population record
        in_class = sum(1 for p in population if p == person)
        released = sum(1 for s in sample if s == person)
        probs[person] = Fraction(released, in_class)
    bad = {j for j, p in probs.items() if not lo <= p <= hi}
    return not bad, bad, min(probs.values()), max(probs.values())
