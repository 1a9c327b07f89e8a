"""The consistency step against the definition: the least-squares fit of one table over the
union of the columns, built as a dense matrix and solved by numpy (a different method from
the closed form), on random small releases; the marginals it returns agree with each other;
and, with OpenDP's noise, it stays unbiased and shrinks each cell's variance by the stated
factor (thousands of draws, five standard errors)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.dp.consistency import MAX_WORK, project, variance_factors, work
from airflow_privacy.core.dp.noise import draw, plan


def margins_matrix(marginals: list[tuple[str, ...]], sizes: dict[str, int]) -> np.ndarray:
    """M: one row per cell of each marginal (first column slowest), one column per cell of
    the full table over every column; 1 where the full cell falls in the marginal's cell."""
    columns = list(sizes)
    full = list(itertools.product(*(range(sizes[c]) for c in columns)))
    rows = []
    for m in marginals:
        for cell in itertools.product(*(range(sizes[c]) for c in m)):
            rows.append([float(all(u[columns.index(c)] == v for c, v in zip(m, cell, strict=True)))
                         for u in full])  # fmt: skip
    return np.array(rows)


def split(
    y: np.ndarray, marginals: list[tuple[str, ...]], sizes: dict[str, int]
) -> list[np.ndarray]:
    out, i = [], 0
    for m in marginals:
        n = math.prod(sizes[c] for c in m)
        out.append(y[i : i + n])
        i += n
    return out


@st.composite
def releases(draw_: st.DrawFn) -> tuple[list[tuple[str, ...]], dict[str, int], list[float]]:
    n = draw_(st.integers(1, 4))
    columns = ["a", "b", "c", "d"][:n]
    sizes = {c: draw_(st.integers(1, 4)) for c in columns}
    sets = draw_(st.lists(st.sets(st.sampled_from(columns), min_size=1), min_size=1,
                          max_size=5, unique_by=frozenset))  # fmt: skip
    marginals = [tuple(draw_(st.permutations(sorted(s)))) for s in sets]
    used = {c for m in marginals for c in m}
    sizes = {c: v for c, v in sizes.items() if c in used}
    cells = sum(math.prod(sizes[c] for c in m) for m in marginals)
    y = draw_(st.lists(st.floats(-50, 200, allow_nan=False), min_size=cells, max_size=cells))
    return marginals, sizes, y


@settings(max_examples=300, deadline=None)
@given(releases())
@example(([("c",), ("a", "c"), ("a", "d")], {"a": 3, "c": 4, "d": 4}, [0.0] * 28))
def test_equals_the_least_squares_fit_over_the_full_table(
    case: tuple[list[tuple[str, ...]], dict[str, int], list[float]],
) -> None:
    marginals, sizes, values = case
    y = np.array(values)
    m = margins_matrix(marginals, sizes)
    x, *_ = np.linalg.lstsq(m, y, rcond=None)
    expected = m @ x
    got = np.concatenate(project(marginals, sizes, split(y, marginals, sizes)))
    assert np.allclose(got, expected, rtol=0, atol=1e-9 * max(1.0, float(np.abs(y).max())))
    # the variance factor is the projection's diagonal, the same for a marginal's cells: the
    # squared rows of an orthonormal basis of M's column space, its rank cut as numpy's
    # matrix_rank cuts it (np.linalg.pinv's default cut, 1e-15 of the largest singular value,
    # keeps rounding noise of 6e-15 as a direction, which made this oracle disagree with itself)
    u, s, _ = np.linalg.svd(m, full_matrices=False)
    rank = int((s > s.max() * max(m.shape) * np.finfo(float).eps).sum())
    diag = (u[:, :rank] ** 2).sum(axis=1)
    factors = variance_factors(marginals, sizes)
    for d, f in zip(split(diag, marginals, sizes), factors, strict=True):
        assert np.allclose(d, f, rtol=0, atol=1e-9) and 0 <= f <= 1 + 1e-12


def test_the_marginals_agree_with_each_other_and_a_consistent_input_is_kept() -> None:
    rng = np.random.default_rng(7)
    sizes = {"age": 5, "sex": 2, "edu": 4}
    marginals = [("age",), ("sex", "age"), ("edu", "sex"), ("age", "edu", "sex")]
    truth = rng.integers(0, 40, size=(5, 2, 4)).astype(float)  # age x sex x edu
    true = [truth.sum(axis=(1, 2)), truth.sum(axis=2).T.reshape(-1),
            truth.sum(axis=0).T.reshape(-1), truth.transpose(0, 2, 1).reshape(-1)]  # fmt: skip
    kept = project(marginals, sizes, true)
    for a, b in zip(kept, true, strict=True):
        assert np.allclose(a, b, rtol=0, atol=1e-9)
    noisy = [t + rng.normal(0, 5, size=t.shape) for t in true]
    est = project(marginals, sizes, noisy)
    age = est[0]
    assert np.allclose(est[1].reshape(2, 5).sum(axis=0), age, atol=1e-9)
    assert np.allclose(est[3].reshape(5, 4, 2).sum(axis=(1, 2)), age, atol=1e-9)
    assert np.allclose(est[2].reshape(4, 2).sum(axis=0), est[1].reshape(2, 5).sum(axis=1),
                       atol=1e-9)  # fmt: skip
    assert len({round(float(e.sum()), 6) for e in est}) == 1  # one total


def test_unbiased_and_the_variance_shrinks_by_the_stated_factor() -> None:
    sizes = {"a": 3, "b": 4}
    marginals = [("a",), ("b",), ("a", "b")]
    truth = np.arange(12, dtype=np.int64).reshape(3, 4) * 3
    true = [truth.sum(axis=1), truth.sum(axis=0), truth.reshape(-1)]
    noise = plan("gaussian", 0.5, 1, len(marginals))
    trials = 3000
    est = np.array([np.concatenate(project(marginals, sizes, [draw(noise, t) for t in true]))
                    for _ in range(trials)])  # fmt: skip
    expected = np.concatenate(true).astype(float)
    per_marginal = variance_factors(marginals, sizes)
    factors = np.concatenate([np.full(len(t), f) for t, f in zip(true, per_marginal, strict=True)])
    sd = noise.stddev * np.sqrt(factors)
    assert (np.abs(est.mean(axis=0) - expected) <= 5 * sd / math.sqrt(trials)).all()
    # the sample variance's standard error is about var * sqrt(2 / trials)
    var = est.var(axis=0, ddof=1)
    assert (np.abs(var - sd**2) <= 5 * sd**2 * math.sqrt(2 / trials)).all()
    assert (factors < 1).all()


def test_work_is_bounded() -> None:
    assert work([("a", "b")], {"a": 3, "b": 4}) == 4 * 12
    assert work([(c,) for c in "abcdefgh"], dict.fromkeys("abcdefgh", 100)) <= MAX_WORK
