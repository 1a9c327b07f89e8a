"""No private copy outlives its publishing process (issue 27): ``publish`` copies the
release to a private folder before it decides; ``kill -9`` skips the clean-up, so the next
``publish`` sweeps the copies whose process is gone (and that nothing touched for an hour:
a process of another PID namespace sharing the folder looks gone too)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from airflow_privacy.core.private_folders import PREFIX, STALE_SECONDS, sweep

SNAPSHOT_PREFIX = f"{PREFIX}publish-"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _leftover(tmp: Path, pid: int, age: float) -> Path:
    folder = tmp / f"{SNAPSHOT_PREFIX}{pid}-abc123"
    folder.mkdir()
    (folder / "release.csv").write_text("a,b\n1,2\n")
    then = time.time() - age
    for p in (folder / "release.csv", folder):
        os.utime(p, (then, then))
    return folder


def test_only_stale_copies_of_gone_processes_are_swept(tmp_path: Path) -> None:
    dead = _dead_pid()
    stale = _leftover(tmp_path, dead, STALE_SECONDS + 60)
    recent = tmp_path / f"{SNAPSHOT_PREFIX}{dead}-recent"
    recent.mkdir()
    (recent / "release.csv").write_text("x\n")  # touched now: maybe another namespace's
    alive = _leftover(tmp_path, os.getpid(), STALE_SECONDS + 60)
    other = tmp_path / "airflow-privacy-publish-notapid"
    other.mkdir()
    unknown = tmp_path / f"{PREFIX}other-{dead}-abc123"  # not a kind of ours
    unknown.mkdir()
    then = time.time() - STALE_SECONDS - 60
    os.utime(unknown, (then, then))
    assert sweep(tmp_path) == 1
    assert not stale.exists()
    assert recent.exists() and alive.exists() and other.exists() and unknown.exists()


@pytest.mark.skipif(sys.platform != "linux", reason="kill -9 of a child process")
def test_a_killed_publish_leaves_a_copy_the_next_publish_sweeps(tmp_path: Path) -> None:
    """A real ``kill -9`` while the copy exists (a publish held inside the snapshot), then the
    sweep of the next publish, run as an hour later."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    release = tmp_path / "r.csv"
    release.write_text("g,s\na,x\na,y\n")
    code = (
        "import sys, time, tempfile\n"
        f"tempfile.tempdir = {str(tmp)!r}\n"
        "from airflow_privacy.gate.attempts import _snapshot\n"
        "from airflow_privacy.gate.context import GateContext\n"
        "from airflow_privacy.gate.refs import ReleaseRef\n"
        f"with _snapshot(ReleaseRef(path={str(release)!r}), GateContext()):\n"
        "    print('copied', flush=True)\n"
        "    time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "copied"
        left = list(tmp.glob(f"{SNAPSHOT_PREFIX}*"))
        assert len(left) == 1 and (left[0] / "r.csv").exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert left[0].exists()  # kill -9: no clean-up
    sweep(tmp, now=time.time() + STALE_SECONDS + 1)
    assert not left[0].exists()
