"""Private temporary folders do not outlive their process (issue 27): every kind is named
``airflow-privacy-KIND-PID-RANDOM`` and swept by the next one made once its process is gone;
a DuckDB count leaves nothing and sweeps a killed count's spill folder."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from airflow_privacy.core import private_folders
from airflow_privacy.core.private_folders import KINDS, PREFIX, STALE_SECONDS


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _leftover(tmp: Path, kind: str, pid: int, age: float, tag: str = "x1y2z3") -> Path:
    folder = tmp / f"{PREFIX}{kind}-{pid}-{tag}"
    folder.mkdir()
    (folder / "spilled.bin").write_bytes(b"\0" * 16)
    then = time.time() - age
    for p in (folder / "spilled.bin", folder):
        os.utime(p, (then, then))
    return folder


@pytest.fixture
def tmp(tmp_path: Path) -> Iterator[Path]:
    old = tempfile.tempdir
    tempfile.tempdir = str(tmp_path)
    try:
        yield tmp_path
    finally:
        tempfile.tempdir = old


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_is_named_with_its_process_and_removed(tmp: Path, kind: str) -> None:
    with private_folders.private_folder(kind) as folder:
        assert folder.parent == tmp
        assert folder.name.startswith(f"{PREFIX}{kind}-{os.getpid()}-")
        (folder / "a").write_text("x")
    assert not folder.exists()


def test_a_leftover_of_every_kind_is_swept_when_its_process_is_gone(tmp: Path) -> None:
    dead = _dead_pid()
    stale = [_leftover(tmp, kind, dead, STALE_SECONDS + 60) for kind in KINDS]
    young = _leftover(tmp, "spill", dead, STALE_SECONDS - 60, tag="young")
    mine = _leftover(tmp, "duckdb", os.getpid(), STALE_SECONDS + 60)
    with private_folders.private_folder("release"):
        pass
    assert not any(p.exists() for p in stale)
    assert young.exists() and mine.exists()
    assert private_folders.sweep(tmp, now=time.time() + 2 * STALE_SECONDS) == 1  # young
    assert mine.exists()


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        private_folders.folder_prefix("other")


def test_a_duckdb_count_leaves_nothing_and_sweeps_a_killed_counts_folders(tmp: Path) -> None:
    from airflow_privacy.core.backends.duck import DuckDBBackend
    from airflow_privacy.core.model import ReleaseSpec

    release = tmp / "r.csv"
    release.write_text("g,s\na,x\na,y\nb,x\n")
    dead = _dead_pid()
    spill = _leftover(tmp, "spill", dead, STALE_SECONDS + 60)
    link = _leftover(tmp, "duckdb", dead, STALE_SECONDS + 60)
    counts = DuckDBBackend().count(release, ReleaseSpec(group_columns=("g",), sensitive="s"))
    assert counts.n_records == 3
    assert not spill.exists() and not link.exists()
    assert sorted(p.name for p in tmp.iterdir()) == ["r.csv"]


LEGACY_NAMES = (
    "airflow-privacy-duckdb-ab12cd_3",
    "airflow-privacy-duckdb-spill-zz99yy00",
    "airflow-privacy-release-q1w2e3r4",
    "airflow-privacy-k9j8h7g6",
)


def _legacy(tmp: Path, name: str, age: float, mode: int = 0o700) -> Path:
    folder = tmp / name
    folder.mkdir(mode=0o700)
    (folder / "part.parquet").write_bytes(b"\0" * 16)
    folder.chmod(mode)
    then = time.time() - age
    for p in (folder / "part.parquet", folder):
        os.utime(p, (then, then))
    return folder


def test_leftovers_named_without_a_pid_are_swept_after_a_day(tmp: Path) -> None:
    day = private_folders.LEGACY_STALE_SECONDS
    stale = [_legacy(tmp, name, day + 60) for name in LEGACY_NAMES]
    young = _legacy(tmp, "airflow-privacy-duckdb-young000", day - 60)
    # a folder of the user's that happens to match the naming: not what mkdtemp makes
    shared = _legacy(tmp, "airflow-privacy-releases", day + 60, mode=0o755)
    other = tmp / "airflow-privacy-notes"
    other.write_text("a file, not a folder")
    os.utime(other, (time.time() - 2 * day, time.time() - 2 * day))
    longer = _legacy(tmp, "airflow-privacy-release-abcdefghi", day + 60)  # 9 characters
    with private_folders.private_folder("duckdb"):
        pass
    assert not any(p.exists() for p in stale)
    assert young.exists() and shared.exists() and other.exists() and longer.exists()
