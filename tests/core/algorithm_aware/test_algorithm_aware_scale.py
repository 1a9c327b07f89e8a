"""The sampled audit on real table sizes: a 1,000-record Adult slice has a released block of
about 10^926 worlds. The audit must finish, report the sizes as powers of ten (Python will not
print integers of more than 4,300 digits, JSON readers lose precision past 2**53), and its
sampled posteriors must keep the one invariant that holds in every world of the block: the
people of a group hold, between them, exactly the group's released multiset."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from airflow_privacy.cli import main
from airflow_privacy.core.algorithm_aware import audit_algorithm
from airflow_privacy.core.algorithm_aware.candidates import Generalizer
from airflow_privacy.core.algorithm_aware.worlds import (
    EXACT_COUNT_LIMIT,
    block_size,
    format_count,
    json_count,
    log10_count,
)
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.datasets import adult_hierarchies, adult_hierarchy_path, load_adult

QIS = ["age", "sex", "race"]
SENSITIVE = "occupation"
RECORDS = 1_000
ENTROPY2 = CriteriaSet.parse([("entropy-l-diversity", {"l": 2})])


@pytest.fixture(scope="module")
def adult_slice() -> pa.Table:
    return load_adult().slice(0, RECORDS).select([*QIS, SENSITIVE])


def test_counts_beyond_what_python_prints_are_powers_of_ten() -> None:
    huge = math.factorial(3_000)  # ~10^9,130: str() of it raises ValueError
    assert format_count(huge) == f"~10^{math.log10(huge):,.1f}"
    assert json_count(huge) is None and json_count(EXACT_COUNT_LIMIT) == EXACT_COUNT_LIMIT
    assert format_count(1_234_567) == "1,234,567"
    assert abs(log10_count(huge) - sum(math.log10(i) for i in range(1, 3_001))) < 1e-6
    assert log10_count(0) == float("-inf")


def test_sampled_audit_of_a_thousand_adult_records(adult_slice: pa.Table) -> None:
    gen = Generalizer(adult_slice, QIS, SENSITIVE, {"age": adult_hierarchies()["age"]})
    cands = [gen.candidate(node) for node in gen.lattice_sequence(ENTROPY2)]
    pop = gen.population
    result = audit_algorithm(pop, cands, ENTROPY2, samples=300, seed=1, people_limit=pop.n)
    assert result.method == "sampling" and result.sampling is not None
    r = result.released_index
    assert r > 0  # the first node fails: the audit has earlier candidates to reject on
    key = cands[r].counts(pop.truth[None, :], pop.n_values)[0]
    block = block_size(key)
    assert result.consistent_worlds is None
    assert abs(result.log10_consistent_worlds - math.log10(block)) < 1e-9
    assert result.log10_consistent_worlds > 300  # beyond a float
    assert result.sampling.estimated_set_size is None
    lo, hi = result.sampling.log10_estimated_set_size
    assert hi is not None and hi <= result.log10_consistent_worlds + 1e-9
    assert lo is None or lo <= hi
    json.dumps(result.to_dict(), allow_nan=False)  # strict JSON, no giant integers

    accepted = result.sampling.accepted
    assert accepted > 0
    assert len(result.people) == pop.n
    col = {v: j for j, v in enumerate(pop.values)}
    row = {p: i for i, p in enumerate(pop.people)}
    counts = np.zeros((pop.n, pop.n_values), dtype=np.int64)
    for p in result.people:
        assert sum(p.worlds.values()) == accepted  # one value per person per world
        for value, c in p.worlds.items():
            counts[row[p.person], col[value]] = c
            assert abs(p.posterior[value] - c / accepted) < 1e-9
    groups = cands[r].groups
    for g in range(cands[r].n_groups):
        members = groups == g
        # every accepted world shows the released multiset in every group
        assert (counts[members].sum(axis=0) == accepted * key[g]).all()


def test_cli_reports_astronomical_blocks_readably(
    adult_slice: pa.Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "adult_1000.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(adult_slice.column_names)
        writer.writerows(row.values() for row in adult_slice.to_pylist())
    argv = ["audit-algorithm", str(path), *[a for q in QIS for a in ("--qi", q)],
            "--sensitive", SENSITIVE, "--criterion", "entropy-l-diversity:l=2",
            "--hierarchy", f"age={adult_hierarchy_path('age')}", "--samples", "200",
            "--threshold", "0.5", "--quiet"]  # fmt: skip
    out = io.StringIO()
    code = main([*argv, "--format", "json"], out)
    assert code in (0, 1), capsys.readouterr().err
    payload = json.loads(out.getvalue())["details"]
    assert payload["method"] == "sampling" and payload["consistent_worlds"] is None
    assert payload["log10_consistent_worlds"] > 300
    assert payload["sampling"]["samples"] == 200
    out = io.StringIO()
    assert main(argv, out) == code
    text = out.getvalue()
    assert f"~10^{payload['log10_consistent_worlds']:,.1f} consistent with the release" in text
