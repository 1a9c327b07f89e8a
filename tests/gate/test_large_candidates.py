"""A large generalized release is recorded from DuckDB's per-group counts, not read whole
(issue 27: a 2.6 MB Parquet file of 2 x 10^8 rows took 8 GB in ``attempt``): the same groups
as the in-process reading, in bounded memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_privacy.core.composition.files import read_release_file
from tests.peak_memory import run_measured


def _groups(release: Any) -> dict[tuple[str, ...], dict[str, int]]:
    out: dict[tuple[str, ...], dict[str, int]] = {}
    for key, row in zip(release.keys, release.counts.tolist(), strict=True):
        out[tuple(key)] = {v: int(n) for v, n in zip(release.values, row, strict=True) if n}
    return out


@pytest.mark.parametrize(("suffix", "counter"), [(".parquet", "duckdb"), (".csv", "duckdb"),
                                                 (".parquet", "arrow")])  # fmt: skip
def test_counted_out_of_core_are_the_groups_read_whole(
    tmp_path: Path, suffix: str, counter: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forced through the out-of-core path (the file taken for a large one, counted by
    DuckDB or by Arrow one row group at a time), the recorded groups equal the in-process
    reading's, labels and counts, text and numbers (a float QI with both zeros, a missing
    label refused alike)."""
    rng = np.random.default_rng(7)
    n = 5_000
    table = pa.table({
        "age": pa.array([f"{20 + 5 * int(x)}-{24 + 5 * int(x)}" for x in rng.integers(0, 6, n)]),
        "zip": pa.array([float(x) if x else (-0.0 if i % 2 else 0.0)
                         for i, x in enumerate(rng.integers(0, 4, n))]),
        "disease": pa.array([f"d{int(x)}" for x in rng.integers(0, 5, n)]),
    })  # fmt: skip
    path = tmp_path / f"r{suffix}"
    if suffix == ".parquet":
        pq.write_table(table, path, row_group_size=700)
    else:
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, path)
    cols = {"qis": ["age", "zip"], "sensitive": "disease", "kind": "generalized"}
    whole = read_release_file(path, **cols)  # type: ignore[arg-type]
    from airflow_privacy.core import backends

    monkeypatch.setattr(backends, "large", lambda *_a, **_k: True)
    # the Arrow path streams a file large by its cells whose row groups (700 rows of three
    # columns) are each under the limit
    monkeypatch.setattr(backends, "DUCKDB_MIN_CELLS", 3 * 700 + 1)
    monkeypatch.setattr(backends, "choose", lambda *_a, **_k: counter)
    import airflow_privacy.core.parquet_stream as stream

    streamed: list[int] = []
    real = stream.count_parquet

    def counting(*a: Any, **k: Any) -> Any:
        streamed.append(1)
        return real(*a, **k)

    monkeypatch.setattr(stream, "count_parquet", counting)
    said: list[str] = []
    large = read_release_file(path, **cols, progress=said.append)  # type: ignore[arg-type]
    assert any("without reading it whole" in line for line in said)
    assert streamed == ([1] if counter == "arrow" else [])  # one row group at a time
    assert _groups(large.release) == _groups(whole.release)
    assert large.release.qis == whole.release.qis and large.release.kind == "generalized"
    assert large.spec() == whole.spec()
    # a bucketized release lists its members: always read whole
    bucketized = read_release_file(path, qis=["zip"], sensitive="disease", kind="bucketized",
                                   bucket="age", progress=said.append)  # fmt: skip
    assert bucketized.release.members is not None
    assert sum("without reading it whole" in line for line in said) == 1


def test_a_parquet_bomb_is_recorded_in_bounded_memory(tmp_path: Path) -> None:
    """6 x 10^7 rows in a Parquet file of 0.7 MB (read whole, as before: 1,131 MiB peak):
    ``attempt`` records it in under 1 GiB of its own peak memory (199 MiB measured; in its
    process, not its time)."""
    from tests.policy_setup import record_policy

    rows = 60_000_000
    codes = pa.array(np.zeros(rows, dtype=np.int8))
    table = pa.table({
        "age": pa.DictionaryArray.from_arrays(codes, pa.array(["30-39"])),
        "disease": pa.DictionaryArray.from_arrays(
            pa.array(np.tile(np.array([0, 1], dtype=np.int8), rows // 2)),
            pa.array(["flu", "cold"]),
        ),
    })  # fmt: skip
    bomb = tmp_path / "bomb.parquet"
    pq.write_table(table, bomb, row_group_size=10_000_000)
    del table, codes
    assert bomb.stat().st_size < 2 << 20
    url = f"sqlite:///{tmp_path / 'l.db'}"
    record_policy(url, "d")
    out, err, peak, code = run_measured(
        ["attempt", str(bomb), "--dataset", "d", "--require", "chk", "--qi", "age",
         "--sensitive", "disease", "--first-release", "--ledger", url, "--format", "json",
         "--quiet"],
    )  # fmt: skip
    assert code == "0", err[-2000:]
    assert str(rows) in out.replace(",", "")
    assert peak < 1024 * 1024, f"{peak / 1024:.0f} MiB"
