"""Reading a bucketized release (Ganta et al. 2008, Definition 3): every bucket lists its
members' exact QI tuples, whatever the type of the bucket column; a population read from the
same values locates every member."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_privacy.core.composition.files import read_release_file
from airflow_privacy.core.composition.locate import Population, locate
from airflow_privacy.core.composition.release import PublishedRelease

BUCKETS = {
    "float": [1.0, 2.0, 2.0, 1.0, -0.0, 0.0],
    "int": [1, 2, 2, 1, 3, 4],
    "string": ["1", "2", "2", "1", "x", "y"],
    "dictionary": pa.array(["a", "b", "b", "a", "c", "d"]).dictionary_encode(),
}


def _table(bucket: object) -> pa.Table:
    return pa.table(
        {
            "zip": pa.array([1.5, 2.0, 2.0, 1.5, 3.25, 4.0]),
            "age": [30, 40, 41, 30, 50, 60],
            "b": bucket,
            "s": ["x", "y", "x", "y", "x", "y"],
        }
    )


@pytest.mark.parametrize("kind", sorted(BUCKETS))
def test_every_bucket_lists_its_members(kind: str, tmp_path: Path) -> None:
    table = _table(BUCKETS[kind])
    path = tmp_path / "release.parquet"
    pq.write_table(table, path)
    release = read_release_file(
        path, qis=["zip", "age"], sensitive="s", kind="bucketized", bucket="b"
    ).release
    assert release.members is not None
    rows = table.to_pylist()
    for g, key in enumerate(release.keys):
        mine = [r for r in rows if str(r["b"]) == key[0]]
        assert mine, key
        assert int(release.sizes[g]) == len(mine)
        expected = Counter(
            (pa.scalar(r["zip"]).cast(pa.string()).as_py(), str(r["age"])) for r in mine
        )
        assert dict(release.members[g]) == dict(expected)
    assert sum(int(n) for n in release.sizes) == table.num_rows


def test_a_float_bucket_release_locates_its_population() -> None:
    table = _table(BUCKETS["float"])
    release = PublishedRelease.from_arrow(table, ["zip", "age"], "s", "bucketized", bucket="b")
    population = Population.from_arrow(table, ["zip", "age"])
    where = locate(population, release)
    assert where.located.all()
    # -0.0 and 0.0 are two buckets, as the counts keep them apart
    assert {k[0] for k in release.keys} == {"1.0", "2.0", "-0.0", "0.0"}
