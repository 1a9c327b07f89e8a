"""Theorems 1-3 of Du et al. 2008 on the engine's constraint rows, checked by enumerating
possible worlds (Definitions 5.2-5.4): the invariants hold in every world (soundness), their
solution space is exactly the affine hull of the worlds (completeness), and with one row per
bucket dropped they are linearly independent (conciseness). The same for the pseudonym
model of section 6 (whose invariants the paper omits)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import numpy.typing as npt
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.maxent import Bound, IndividualFact, Knowledge, Person, Source
from airflow_privacy.core.maxent.constraints import build_system
from tests import maxent_oracle as oracle
from tests.maxent_engine import person_name, qi_columns, release_of


@st.composite
def tiny_release(draw: st.DrawFn, max_records: int = 7) -> oracle.Buckets:
    n_buckets = draw(st.integers(1, 3))
    buckets = []
    for _ in range(n_buckets):
        size = draw(st.integers(1, 4))
        recs = [
            ((draw(st.sampled_from("xyz")),), draw(st.sampled_from("abc"))) for _ in range(size)
        ]
        buckets.append(recs)
    assume(oracle.n_records(buckets) <= max_records)
    return buckets


def _exact_rank(mat: npt.NDArray[np.int64] | npt.NDArray[np.float64]) -> int:
    return oracle.rank_fraction([[Fraction(int(v)) for v in row] for row in mat])


def _world_counts(
    buckets: oracle.Buckets, cells: dict[tuple[object, str, int], int], pseudonyms: bool
) -> list[npt.NDArray[np.int64]]:
    """Worlds as count vectors over the engine's cells (keys ``(q or person, s, b)``)."""
    n = oracle.n_records(buckets)
    if pseudonyms:
        model = oracle.pseudonym_model(buckets)
        vecs = oracle.pseudonym_world_vectors(buckets, model)
    else:
        model = oracle.full_joint(buckets)
        vecs = oracle.world_vectors(buckets, model)
    out = []
    for vec in vecs:
        v = np.zeros(len(cells), dtype=np.int64)
        for key, val in zip(model.variables, vec, strict=True):
            if val:
                assert key in cells, f"a world puts mass on a zero-invariant term {key}"
                v[cells[key]] = int(val * n)
        out.append(v)
    return out


def _check(buckets: oracle.Buckets, pseudonyms: bool) -> None:
    rel = release_of(buckets)
    know = None
    persons = oracle.people(buckets)
    if pseudonyms:  # name everybody (a vacuous statement makes them all pseudonyms)
        cols = qi_columns(buckets)
        people_ = tuple(
            Person(person_name(i), tuple(zip(cols, q, strict=True))) for i, q in enumerate(persons)
        )
        fact = IndividualFact(
            tuple(p.name for p in people_), (rel.values[0],), Bound(0, len(people_)), Source("all")
        )
        know = Knowledge((fact,), people_)
    sys_ = build_system(rel, know)
    cells: dict[tuple[object, str, int], int] = {}
    for c, (g, s, b) in enumerate(zip(sys_.cell_group, sys_.cell_s, sys_.cell_b, strict=True)):
        grp = sys_.groups[g]
        owner: object = int(grp.name[1:]) if grp.name is not None else rel.qi_values[grp.q]
        cells[(owner, rel.values[s], int(rel.buckets[b]))] = c
    a = sys_.invariants.toarray()
    rhs = sys_.invariant_rhs
    worlds = _world_counts(buckets, cells, pseudonyms)
    # Theorem 1 (soundness): every world satisfies every invariant
    for w in worlds:
        np.testing.assert_array_equal(a @ w, rhs)
    # Theorem 2 (completeness): the solution space is the worlds' affine hull
    hull = _exact_rank(np.array([w - worlds[0] for w in worlds])) if len(worlds) > 1 else 0
    rank = _exact_rank(a)
    assert hull == len(cells) - rank
    # Theorem 3 (conciseness): the rows kept (one per bucket dropped) are independent
    assert rank == a.shape[0]


@settings(max_examples=40, deadline=None)
@given(tiny_release())
def test_invariants_are_sound_complete_and_concise(buckets: oracle.Buckets) -> None:
    _check(buckets, pseudonyms=False)


@settings(max_examples=25, deadline=None)
@given(tiny_release(max_records=6))
def test_pseudonym_invariants_are_sound_complete_and_concise(buckets: oracle.Buckets) -> None:
    _check(buckets, pseudonyms=True)


def test_all_rows_of_a_bucket_have_exactly_one_dependency() -> None:
    """Figure 3's matrix: bucket 1 of Figure 1 (q1 q1 q2 q3 / s1 s2 s2 s3) with all six QI and
    SA rows has rank 5 (C1 + C2 + C3 - C4 - C5 - C6 = 0); the engine keeps 5 rows."""
    bucket = [(("q1",), "s1"), (("q1",), "s2"), (("q2",), "s2"), (("q3",), "s3")]
    model = oracle.full_joint([bucket])
    qi_sa_rows = [r for r in model.eq_rows if len(r) > 1]
    mat = [[Fraction(r.get(j, 0)) for j in range(model.n)] for r in qi_sa_rows]
    assert len(mat) == 6 and oracle.rank_fraction(mat) == 5
    sys_ = build_system(release_of([bucket]))
    assert sys_.invariants.shape[0] == 5
