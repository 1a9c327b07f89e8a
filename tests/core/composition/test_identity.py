"""The identity risk every attempt records, checked against a count over the original
records (pandas, written from the definitions): for a bucketized release the classes are
the exact QI tuples; for a generalized one, the groups."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pyarrow as pa

from airflow_privacy.core.composition.identity import identity_risk
from airflow_privacy.core.composition.release import PublishedRelease
from airflow_privacy.core.datasets import load_adult

QIS = ["age", "marital-status", "race", "sex"]


def _oracle(frame: pd.DataFrame, qis: list[str], threshold: float) -> dict[str, object]:
    sizes = frame.groupby(qis).size()
    n = int(sizes.sum())
    return {
        "records": n,
        "classes": len(sizes),
        "highest": Fraction(1, int(sizes.min())),
        "average": Fraction(len(sizes), n),
        "records_at_risk": int(sum(int(s) for s in sizes if Fraction(1, int(s)) > threshold)),
        "sample_uniques": int((sizes == 1).sum()),
    }


def _check(risk: object, want: dict[str, object]) -> None:
    for key in ("records", "classes", "records_at_risk", "sample_uniques"):
        assert getattr(risk, key) == want[key], key
    for key in ("highest", "average"):
        assert abs(getattr(risk, key) - float(want[key])) < 1e-9, key  # type: ignore[arg-type]


def test_a_bucketized_release_is_counted_on_its_exact_qis() -> None:
    table = load_adult().slice(0, 600)
    buckets = pa.array([str(i // 5) for i in range(table.num_rows)])
    release = PublishedRelease.from_arrow(
        table.append_column("bucket", buckets), QIS, "occupation", "bucketized", bucket="bucket"
    )
    risk = identity_risk(release)
    _check(risk, _oracle(table.to_pandas().astype(str), QIS, 0.2))
    assert risk.sample_uniques > 0  # k=5 buckets, yet people stand out on their QIs


def test_a_generalized_release_is_counted_on_its_groups() -> None:
    table = load_adult().slice(0, 600).select(["sex", "race", "occupation"])
    release = PublishedRelease.from_arrow(table, ["sex", "race"], "occupation", "generalized")
    risk = identity_risk(release, threshold=0.1)
    _check(risk, _oracle(table.to_pandas().astype(str), ["sex", "race"], 0.1))
