"""The section 7 set-up on the bundled Adult data (Du et al. 2008): Education sensitive, the
8 other attributes as QIs, 2,842 buckets of 5 records with 5 distinct Education values; and
the estimate on it, checked against quantities computed here from their definitions."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd
import pytest

from airflow_privacy.core.maxent import BucketRelease, SolverOptions, estimate
from airflow_privacy.core.maxent.diverse_buckets import (
    ADULT_QIS,
    ADULT_SENSITIVE,
    PAPER_BUCKETS,
    adult_section7,
    bucketize_diverse,
)
from airflow_privacy.errors import InputError


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, pd.DataFrame, BucketRelease]:
    original, release = adult_section7()
    rel = BucketRelease.from_arrow(release, ADULT_QIS, ADULT_SENSITIVE, "bucket")
    return original.to_pandas(), release.to_pandas(), rel


def test_the_paper_setup(adult: tuple[pd.DataFrame, pd.DataFrame, BucketRelease]) -> None:
    original, release, rel = adult
    assert len(original) == len(release) == 14_210 == 5 * PAPER_BUCKETS
    assert rel.n_buckets == PAPER_BUCKETS and len(ADULT_QIS) == 8
    sizes = original.groupby("bucket")[ADULT_SENSITIVE].agg(["size", "nunique"])
    assert (sizes["size"] == 5).all() and (sizes["nunique"] == 5).all()  # 5-diverse
    # the release keeps every record's QIs and bucket, and each bucket's multiset of values
    pd.testing.assert_frame_equal(original[[*ADULT_QIS, "bucket"]], release[[*ADULT_QIS, "bucket"]])
    key = ["bucket", ADULT_SENSITIVE]
    pd.testing.assert_frame_equal(
        original.sort_values(key)[key].reset_index(drop=True),
        release.sort_values(key)[key].reset_index(drop=True),
    )
    assert (original[ADULT_SENSITIVE] != release[ADULT_SENSITIVE]).any()  # pairing hidden


def test_accuracy_without_knowledge_is_the_closed_form_kl(
    adult: tuple[pd.DataFrame, pd.DataFrame, BucketRelease],
) -> None:
    """Section 7.1's estimation accuracy at K = 0, recomputed with pandas from eq. (9)."""
    original, release, rel = adult
    import pyarrow as pa

    res = estimate(rel, original=pa.Table.from_pandas(original.drop(columns="bucket")))
    q = original[list(ADULT_QIS)].astype(str).agg("|".join, axis=1)
    rq = release[list(ADULT_QIS)].astype(str).agg("|".join, axis=1)
    # P*(s | q) = sum_b n(q, b) n(s, b) / n_b / n(q)
    nqb = rq.groupby([rq, release["bucket"]]).size().rename("nqb").reset_index()
    nqb.columns = pd.Index(["q", "bucket", "nqb"])
    nsb = release.groupby(["bucket", ADULT_SENSITIVE]).size().rename("nsb").reset_index()
    cells = nqb.merge(nsb, on="bucket")
    cells["mass"] = cells["nqb"] * cells["nsb"] / 5.0
    est = cast(
        dict[tuple[str, str], float],
        cells.groupby(["q", ADULT_SENSITIVE])["mass"].sum().to_dict(),
    )
    nq = cast(dict[str, int], rq.value_counts().to_dict())
    truth = cast(
        dict[tuple[str, str], int], q.groupby([q, original[ADULT_SENSITIVE]]).size().to_dict()
    )
    total = 0.0
    n = len(original)
    for (qq, s), c in truth.items():
        p = c / nq[qq]
        total += c / n * float(np.log(p / (est[(qq, s)] / nq[qq])))
    assert res.accuracy == pytest.approx(total, rel=1e-12)
    best = max(m / nq[qq] for (qq, _), m in est.items())
    assert res.max_posterior == pytest.approx(best, abs=1e-12)


def test_mined_rules_hold_in_the_estimate_and_split_equals_joint(
    adult: tuple[pd.DataFrame, pd.DataFrame, BucketRelease],
) -> None:
    original, _, rel = adult
    import pyarrow as pa

    orig = pa.Table.from_pandas(original.drop(columns="bucket"))
    res = estimate(rel, original=orig, top_positive=15, top_negative=15)
    assert len(res.rules) == 30
    assert res.solution.stats.residual <= 1e-8
    assert 0 < res.solution.stats.buckets_solved < rel.n_buckets
    counts = rel.qi_counts
    for rule in res.rules:  # P*(s | Q_v) = the rule's P(s | Q_v), via the posterior table
        mask = rel.matching(rule.given)
        j = rel.values.index(rule.value)
        got = float((res.posterior[mask, j] * counts[mask]).sum() / counts[mask].sum())
        assert got == pytest.approx(rule.probability, abs=1e-9)
    joint = estimate(
        rel, original=orig, top_positive=15, top_negative=15, options=SolverOptions(split=False)
    )
    np.testing.assert_allclose(joint.posterior, res.posterior, atol=1e-9)
    assert joint.accuracy == pytest.approx(res.accuracy, abs=1e-9)
    assert res.accuracy is not None and res.accuracy < 1.2


def test_bucketizer_refuses_what_it_cannot_do() -> None:
    import pyarrow as pa

    table = pa.table({"q": ["a", "b", "c"], "s": ["x", "x", "y"]})
    with pytest.raises(InputError, match="only 1 buckets"):
        bucketize_diverse(table, "s", l=2, n_buckets=2)
    with pytest.raises(InputError, match="fewer than 3 distinct"):
        bucketize_diverse(table, "s", l=3)


def test_warm_start_gives_the_same_answer_in_fewer_steps(
    adult: tuple[pd.DataFrame, pd.DataFrame, BucketRelease],
) -> None:
    """Adding rules to a solved problem: starting from the previous multipliers."""
    original, _, rel = adult
    import pyarrow as pa

    orig = pa.Table.from_pandas(original.drop(columns="bucket"))
    first = estimate(rel, original=orig, top_positive=10, top_negative=10, rule_widths=[1])
    cold = estimate(rel, original=orig, top_positive=20, top_negative=20, rule_widths=[1])
    warm = estimate(rel, original=orig, top_positive=20, top_negative=20, rule_widths=[1],
                    warm_start=first.solution)  # fmt: skip
    np.testing.assert_allclose(warm.posterior, cold.posterior, atol=1e-9)
    assert warm.solution.stats.residual <= 1e-8
    assert warm.solution.stats.newton_iterations < cold.solution.stats.newton_iterations
