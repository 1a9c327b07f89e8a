"""Shared fixtures of the gate tests: a workspace with Adult slices, a strong identifier key,
an isolated AIRFLOW_HOME (so the default ledger is never the user's)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_privacy.gate.context import GateContext

KEY = "tests-only-key-0123456789abcdefghijklmnopqrstuv"


@dataclass
class Workspace:
    root: Path
    ledger: str

    def slice(self, name: str, first: int, n: int) -> Path:
        """Adult records ``first .. first+n-1`` with an ``id`` column (the row number)."""
        from airflow_privacy.core.datasets import load_adult

        table = load_adult().slice(first, n)
        ids = pa.array([f"person-{first + i}" for i in range(table.num_rows)])
        path = self.root / f"{name}.parquet"
        pq.write_table(table.append_column("id", ids), path)
        return path


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    home = tmp_path / "airflow-home"
    home.mkdir()
    monkeypatch.setenv("AIRFLOW_HOME", str(home))
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_URL", raising=False)
    monkeypatch.delenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", raising=False)
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_KEY", KEY)
    yield Workspace(tmp_path, f"sqlite:///{tmp_path / 'ledger.db'}")


@pytest.fixture
def ctx() -> GateContext:
    return GateContext()
