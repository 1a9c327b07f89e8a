"""Glue between the tiny releases of tests/maxent_oracle.py and the engine (building the
engine's inputs, reading its answer back as oracle vectors). No maximum-entropy logic."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.maxent import (
    Bound,
    BucketRelease,
    DistributionFact,
    IndividualFact,
    Knowledge,
    Person,
    Source,
)
from airflow_privacy.core.maxent.solver import Solution
from tests.maxent_oracle import Buckets, Dist, Indiv, Model, people

FloatArray = npt.NDArray[np.float64]


def qi_columns(buckets: Buckets) -> tuple[str, ...]:
    width = len(buckets[0][0][0])
    return tuple(f"a{j}" for j in range(width))


def release_of(buckets: Buckets) -> BucketRelease:
    return BucketRelease.from_records(
        qi_columns(buckets),
        [(q, str(b), s) for b, recs in enumerate(buckets) for q, s in recs],
        sensitive="s",
    )


def person_name(i: int) -> str:
    return f"p{i}"


def knowledge_of(
    buckets: Buckets, dist: Sequence[Dist] = (), indiv: Sequence[Indiv] = ()
) -> Knowledge:
    cols = qi_columns(buckets)
    persons = people(buckets)
    facts: list[DistributionFact | IndividualFact] = []
    for k, f in enumerate(dist):
        facts.append(
            DistributionFact(
                tuple((cols[pos], v) for pos, v in f.given),
                f.values,
                Bound(float(f.low), float(f.high)),
                Source(f"dist{k}", k + 1),
            )
        )
    named: dict[int, Person] = {}
    for k, g in enumerate(indiv):
        for i in g.people:
            named[i] = Person(person_name(i), tuple(zip(cols, persons[i], strict=True)))
        facts.append(
            IndividualFact(
                tuple(person_name(i) for i in g.people),
                g.values,
                Bound(float(g.low), float(g.high)),
                Source(f"indiv{k}", 100 + k),
            )
        )
    return Knowledge(tuple(facts), tuple(named.values()))


def joint_vector(solution: Solution, model: Model, offset: int = 0) -> FloatArray:
    """The engine's solution on the oracle's full-joint variables ``(q, s, b)`` (engine
    bucket label ``str(b + offset)`` is oracle bucket ``b``)."""
    sys_ = solution.system
    rel = sys_.release
    index = {v: j for j, v in enumerate(model.variables)}
    out = np.zeros(model.n)
    for q, s, b, x in zip(
        sys_.cell_q.tolist(),
        sys_.cell_s.tolist(),
        sys_.cell_b.tolist(),
        solution.probabilities.tolist(),
        strict=True,
    ):
        out[index[(rel.qi_values[q], rel.values[s], int(rel.buckets[b]) - offset)]] += x
    return out


def pseudonym_vector(
    solution: Solution,
    model: Model,
    buckets: Buckets,
    names: dict[str, int] | None = None,
    offset: int = 0,
) -> FloatArray:
    """The engine's solution on the oracle's pseudonym variables ``(i, s, b)``: a named
    person's cells go to that person, a rest group is shared equally by the unnamed people
    of its QI value."""
    sys_ = solution.system
    rel = sys_.release
    persons = people(buckets)
    named = names if names is not None else {person_name(i): i for i in range(len(persons))}
    index = {v: j for j, v in enumerate(model.variables)}
    out = np.zeros(model.n)
    for g, s, b, x in zip(
        sys_.cell_group.tolist(),
        sys_.cell_s.tolist(),
        sys_.cell_b.tolist(),
        solution.probabilities.tolist(),
        strict=True,
    ):
        grp = sys_.groups[g]
        q = rel.qi_values[grp.q]
        if grp.name is not None:
            owners = [named[grp.name]]
        else:
            taken = {named[gg.name] for gg in sys_.groups if gg.q == grp.q and gg.name}
            owners = [i for i, p in enumerate(persons) if p == q and i not in taken]
        for i in owners:
            out[index[(i, rel.values[s], int(rel.buckets[b]) - offset)]] += x / len(owners)
    return out


def frac(x: float) -> Fraction:
    return Fraction(x).limit_denominator(1000)
