"""The report counts a big release file with DuckDB (only the per-group counts come back),
and the report is the same as the in-process reader's."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from airflow_privacy.core.datasets import load_adult
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.report import ReportRequest, run_report


@pytest.mark.parametrize(("row_group", "counter"), [(None, "duckdb"), (1000, "arrow")])
def test_a_big_file_is_counted_without_reading_it_whole_with_the_same_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row_group: int | None, counter: str
) -> None:
    """A big file is counted by the backend ``auto`` picks (DuckDB for one row group, Arrow
    one row group at a time for several), and the report is the one of the file read
    whole."""
    import airflow_privacy.core.backends as backends

    path = tmp_path / "release.parquet"
    pq.write_table(load_adult().slice(0, 4000).select(["age", "sex", "occupation"]), path,
                   row_group_size=row_group)  # fmt: skip
    lines: list[str] = []

    def report(name: str) -> dict[str, object]:
        env = run_report(
            ReportRequest(release=ReleaseRef(path=str(path)), sensitive="occupation",
                          group_columns=["age", "sex"], out=ReleaseRef(path=str(tmp_path / name))),
            GateContext(progress=lines.append),
        )  # fmt: skip
        d = env.to_dict()
        d.pop("outputs")
        d.pop("created_at", None)
        d["details"].pop("generated", None)
        return d

    small = report("a.html")
    assert not any("without reading it whole" in x for x in lines)
    monkeypatch.setattr(backends, "DUCKDB_MIN_CELLS", 3 * 1000 + 1)  # every file is "big"
    assert backends.choose("auto", path, columns=["age", "sex", "occupation"]) == counter
    big = report("b.html")
    assert any("without reading it whole" in x for x in lines)
    assert small == big


def test_a_gzip_release_is_never_given_to_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB writes .parquet and .csv releases: under ``auto`` a big input written to
    ``.csv.gz`` is anonymized in process; ``backend`` duckdb with it is bad input before
    any work (nothing written)."""
    import airflow_privacy.core.backends as backends
    from airflow_privacy.errors import InputError
    from airflow_privacy.gate.anonymize import AnonymizeRequest, run_anonymize

    src = tmp_path / "input.parquet"
    pq.write_table(load_adult().slice(0, 500).select(["age", "sex", "occupation"]), src)
    monkeypatch.setattr(backends, "DUCKDB_MIN_CELLS", 1)  # every Parquet file is "big"

    def run(backend: str, out: str) -> dict[str, object]:
        env = run_anonymize(
            AnonymizeRequest(source=ReleaseRef(path=str(src)),
                             release=ReleaseRef(path=str(tmp_path / out)), qis=["age", "sex"],
                             sensitive="occupation", method="mondrian",
                             criteria=["k-anonymity:k=5"], backend=backend),
            GateContext(),
        )  # fmt: skip
        return env.details

    assert run("auto", "big.csv")["backend"] == "duckdb"
    assert run("auto", "big.csv.gz")["backend"] == "arrow"
    with pytest.raises(InputError, match=r"--out .*x\.csv\.gz: backend duckdb writes"):
        run("duckdb", "x.csv.gz")
    assert not list(tmp_path.glob("x.csv.gz*"))
