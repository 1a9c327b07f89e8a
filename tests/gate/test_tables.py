"""Writing releases: one atomic writer for every step (gzip included), nothing left behind
by a failure or by ``kill -9``, and every output readable by the project's own reader."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_privacy.core.io import read_release
from airflow_privacy.errors import InputError
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.tables import sweep_stale, write_outputs

ROOT = Path(__file__).resolve().parents[2]


def table(n: int = 50) -> pa.Table:
    return pa.table({"g": [str(i % 7) for i in range(n)], "s": [f"v{i % 3}" for i in range(n)]})


@pytest.mark.parametrize("name", ["r.csv", "r.csv.gz", "r.parquet", "r.tsv"])
def test_every_format_round_trips_through_the_reader(tmp_path: Path, name: str) -> None:
    t = table()
    write_outputs({ReleaseRef(path=str(tmp_path / name)): t}, GateContext())
    back = read_release(tmp_path / name)
    assert back.column("g").to_pylist() == t.column("g").to_pylist()
    if name.endswith(".gz"):  # really gzip, not plain text under a .gz name
        assert (tmp_path / name).read_bytes()[:2] == b"\x1f\x8b"
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left


def test_a_failure_changes_nothing_and_leaves_nothing(tmp_path: Path) -> None:
    old = tmp_path / "r.parquet"
    old.write_bytes(b"old")
    outputs = {
        ReleaseRef(path=str(old)): table(),
        ReleaseRef(path=str(tmp_path / "m.json")): {"bad": object()},  # cannot serialize
    }
    with pytest.raises(TypeError):
        write_outputs(outputs, GateContext())
    assert old.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]


def test_outputs_are_checked_before_anything_is_written(tmp_path: Path) -> None:
    good = ReleaseRef(path=str(tmp_path / "ok.parquet"))
    for bad, message in (
        (ReleaseRef(path=str(tmp_path / "nope" / "r.csv")), "does not exist"),
        (ReleaseRef(path=str(tmp_path)), "is a folder"),
        (ReleaseRef(path=str(tmp_path / "r.xlsx")), "cannot tell the format"),
    ):
        with pytest.raises(InputError, match=message):
            write_outputs({good: table(), bad: table()}, GateContext())
        assert not (tmp_path / "ok.parquet").exists()


WRITER = """
import sys, time
import pyarrow as pa
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate import tables

real = tables._serialize
def slow(content, name, sink):
    real(content, name, sink)
    sys.stdout.write("written\\n"); sys.stdout.flush()
    time.sleep(30)  # killed here, with the temporary file written
tables._serialize = slow
t = pa.table({"g": [str(i) for i in range(20000)]})
tables.write_outputs({ReleaseRef(path=sys.argv[1]): t}, GateContext())
"""


def test_kill_9_while_writing_leaves_no_temporary_files(tmp_path: Path) -> None:
    """50 writers killed with SIGKILL in the middle of writing: no ``.tmp`` left (unnamed
    temporary files vanish with their process), and the old file is intact."""
    target = tmp_path / "release.csv.gz"
    write_outputs({ReleaseRef(path=str(target)): table()}, GateContext())
    before = target.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(50):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, env=env
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"written"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release.csv.gz"]
    assert target.read_bytes() == before


def test_stale_named_temporaries_of_dead_writers_are_swept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = tmp_path / f".r.parquet.{dead.stdout.strip()}.0123abcd.tmp"
    stale.write_bytes(b"half")
    mine = tmp_path / f".r.parquet.{os.getpid()}.0123abcd.tmp"
    mine.write_bytes(b"in progress")
    time.sleep(0.01)
    assert sweep_stale(tmp_path) == 1
    assert not stale.exists() and mine.exists()
