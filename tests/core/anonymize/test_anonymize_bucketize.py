"""Bucketization (Anatomy): exact QIs, sensitive values permuted within buckets, the QIT / ST
forms consistent with the one-table form, deterministic given a seed, QI-local buckets."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.anonymize.dimensions import dimensions, group_costs
from airflow_privacy.core.anonymize.encoding import encode
from airflow_privacy.core.criteria.registry import evaluate
from airflow_privacy.core.datasets import adult_hierarchies, load_adult
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import (
    CRITERIA_LISTS,
    Criteria,
    Problem,
    bucketization,
    problems,
)


def _buckets(result: Any, qis: list[str]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for row in result.release.to_pylist():
        out.setdefault(row["bucket"], []).append(row)
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=problems(max_rows=30), criteria=CRITERIA_LISTS)
def test_bucketization_forms_agree_and_keep_every_record(p: Problem, criteria: Criteria) -> None:
    try:
        result = anonymize(p.table, p.qis, "s", "bucketize", criteria, p.hierarchies)
    except InputError:
        whole = bucketization({("all",): [r["s"] for r in p.rows]}, ["g"])
        assert not all(evaluate(whole, n, prm).safe for n, prm in criteria)
        return
    rel = result.release
    assert rel.column_names == [*p.qis, "bucket", "s"]
    assert result.group_columns == ("bucket",)
    assert sorted(result.source_rows.tolist()) == list(range(len(p.rows)))
    rows = rel.to_pylist()
    # QIs exactly as in the source row; the bucket's sensitive multiset is its members'
    members: dict[int, list[int]] = {}
    for row, src in zip(rows, result.source_rows.tolist(), strict=True):
        assert all(row[q] == p.rows[src][q] for q in p.qis)
        members.setdefault(row["bucket"], []).append(src)
    for b, group in _buckets(result, p.qis).items():
        assert Counter(r["s"] for r in group) == Counter(p.rows[i]["s"] for i in members[b])
    # QIT = the one-table form without the sensitive column; ST = the per-bucket counts
    qit = result.tables["qit"]
    assert qit.equals(rel.drop_columns(["s"]))
    st_counts = {(r["bucket"], r["s"]): r["count"] for r in result.tables["st"].to_pylist()}
    assert st_counts == dict(Counter((r["bucket"], r["s"]) for r in rows))
    assert sorted(set(rel.column("bucket").to_pylist())) == list(
        range(1, result.manifest.groups + 1)
    )
    assert all(r.safe for r in result.manifest.criteria_results)


def test_anatomy_buckets_hold_distinct_values() -> None:
    """Distinct 3-diversity on Adult: buckets of three records with three different
    occupations (Anatomy's l-diverse groups), except the few that took a residue."""
    t = load_adult()
    qis = [c for c in t.column_names if c != "occupation"]
    h = adult_hierarchies()
    result = anonymize(t, qis, "occupation", "bucketize", [("distinct-l-diversity", {"l": 3})],
                       {q: h[q] for q in qis})  # fmt: skip
    d = result.manifest.details
    assert (d["l"], d["rounds_per_bucket"]) == (3, 1)
    counts = Counter(r["count"] for r in result.tables["st"].to_pylist())
    assert set(counts) <= {1, 2}
    sizes = Counter(result.release.column("bucket").to_pylist())
    assert sum(1 for s in sizes.values() if s > 3) <= d["residues"]
    assert result.manifest.utility["reconstruction-error"] == pytest.approx(2 / 3, abs=0.01)


def test_buckets_are_qi_local() -> None:
    """Buckets spread over far fewer QI values than the same bucket sizes drawn at random."""
    t = load_adult()
    qis = [c for c in t.column_names if c != "occupation"]
    h = {q: hier for q, hier in adult_hierarchies().items() if q in qis}
    result = anonymize(t, qis, "occupation", "bucketize", [("ck-safety", {"c": 0.7, "k": 3})], h)
    enc = encode(t, qis, "occupation")
    bucket = np.empty(t.num_rows, dtype=np.int64)
    bucket[result.source_rows] = np.asarray(result.release.column("bucket").to_pylist()) - 1
    shuffled = np.random.default_rng(0).permutation(bucket)
    sizes = np.bincount(bucket)
    spread, _ = group_costs(dimensions(enc, h), shuffled, int(sizes.shape[0]))
    random_spread = float(sizes @ spread.sum(axis=1) / (t.num_rows * len(qis)))
    ours = result.manifest.utility["qi-spread"]
    assert ours is not None and ours < 0.75 * random_spread


def test_reconstruction_error_is_xiao_and_tao_definition() -> None:
    """RCE = sum over tuples of sum_v (1[v = t.s] - n_b(v) / n_b)^2 (Anatomy, section 4)."""
    rows = [("1", "a"), ("2", "b"), ("3", "a"), ("4", "c"), ("5", "a"), ("6", "b"), ("7", "c")]
    t = pa.table({"q": [r[0] for r in rows], "s": [r[1] for r in rows]})
    result = anonymize(t, ["q"], "s", "bucketize", [("distinct-l-diversity", {"l": 2})])
    bucket_of = {
        src: row["bucket"]
        for row, src in zip(result.release.to_pylist(), result.source_rows.tolist(), strict=True)
    }
    counts: dict[int, Counter[str]] = {}
    for src, b in bucket_of.items():
        counts.setdefault(b, Counter())[rows[src][1]] += 1
    rce = 0.0
    for src, b in bucket_of.items():
        n_b = sum(counts[b].values())
        rce += sum(((v == rows[src][1]) - counts[b][v] / n_b) ** 2 for v in "abc")
    assert result.manifest.utility["reconstruction-error"] == pytest.approx(rce / len(rows))


def test_seed_only_changes_the_permutations() -> None:
    t = load_adult().slice(0, 1000)
    crit = [("distinct-l-diversity", {"l": 3})]

    def run(seed: int) -> Any:
        return anonymize(t, ["age", "sex", "race"], "occupation", "bucketize", crit, seed=seed)

    a, b, c = run(5), run(5), run(6)
    assert a.release.equals(b.release) and a.tables["st"].equals(b.tables["st"])
    assert a.tables["st"].equals(c.tables["st"])  # same buckets ...
    assert not a.release.equals(c.release)  # ... other permutations


def test_bucket_column_may_not_clash_with_an_input_column() -> None:
    t = pa.table({"bucket": ["1", "2"], "s": ["x", "y"]})
    with pytest.raises(InputError, match="bucket column 'bucket' is also an input column"):
        anonymize(t, ["bucket"], "s", "bucketize", [("k-anonymity", {"k": 1})])
    result = anonymize(t, ["bucket"], "s", "bucketize", [("k-anonymity", {"k": 1})],
                       bucket_column="bid")  # fmt: skip
    assert result.group_columns == ("bid",)


def test_impossible_criterion_names_itself() -> None:
    t = load_adult().slice(0, 200)
    with pytest.raises(
        InputError, match=r"no bucketization passes criterion k-anonymity \(k=500\)"
    ):
        anonymize(t, ["age"], "occupation", "bucketize", [("k-anonymity", {"k": 500})])
