"""Private temporary folders that do not outlive their process.

Every private copy the project makes (a release being published, a downloaded object, the
link and spill folder of a DuckDB count, a release written by DuckDB before it is re-checked)
lives in a folder named ``airflow-privacy-KIND-PID-RANDOM`` in the temporary folder, removed
when the work ends. A process killed with ``kill -9`` (or by a memory or CPU limit) cannot
remove its folder, and a DuckDB spill folder can hold gigabytes; so each new folder first
sweeps the leftovers: folders of this naming whose process is gone and in which nothing
changed for :data:`STALE_SECONDS` (a process of another PID namespace sharing the temporary
folder, e.g. another container, looks gone from here; its live folder keeps changing, or is
younger than that).

Folders made before this naming (``airflow-privacy-duckdb-XXXXXXXX``,
``airflow-privacy-duckdb-spill-XXXXXXXX``, ``airflow-privacy-release-XXXXXXXX``,
``airflow-privacy-XXXXXXXX``: the eight random characters of :func:`tempfile.mkdtemp`, no
PID) cannot say whether their process lives: they are swept once nothing in them changed
for :data:`LEGACY_STALE_SECONDS`, and only when they look like what ``mkdtemp`` made (this
user's, mode 0700), so that a folder of the user's that happens to match is kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PREFIX = "airflow-privacy-"
#: the kinds of private folder (the ``KIND`` of their name)
KINDS = ("publish", "download", "duckdb", "spill", "release")
#: A leftover is swept only when nothing in it changed for this long (module doc).
STALE_SECONDS = 3600.0
#: A leftover of the naming without a PID is swept when nothing in it changed for this long.
LEGACY_STALE_SECONDS = 86400.0

_NAME = re.compile(rf"^{re.escape(PREFIX)}(?P<kind>{'|'.join(KINDS)})-(?P<pid>\d{{1,10}})-[^/]+$")
_LEGACY = re.compile(rf"^{re.escape(PREFIX)}(?:duckdb-spill-|duckdb-|release-)?[a-z0-9_]{{8}}$")


def folder_prefix(kind: str) -> str:
    """The start of the name of a private folder of ``kind`` made by this process."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of private folder {kind!r}")
    return f"{PREFIX}{kind}-{os.getpid()}-"


def sweep(tmp: Path | None = None, now: float | None = None) -> int:
    """Remove the private folders left in ``tmp`` (default: the temporary folder) by
    processes that are gone, untouched for :data:`STALE_SECONDS`; the number removed."""
    tmp = Path(tempfile.gettempdir()) if tmp is None else tmp
    now = time.time() if now is None else now
    try:
        entries = list(tmp.glob(f"{PREFIX}*"))
    except OSError:
        return 0
    removed = 0
    for entry in entries:
        m = _NAME.match(entry.name)
        if m is None:
            if _LEGACY.match(entry.name) and _legacy_leftover(entry, now):
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
            continue
        pid = int(m.group("pid"))
        try:
            if pid == os.getpid() or entry.is_symlink() or not entry.is_dir():
                continue
            newest = max([entry.stat().st_mtime, *(f.lstat().st_mtime for f in entry.iterdir())])
            if now - newest < STALE_SECONDS:
                continue
            os.kill(pid, 0)
        except ProcessLookupError:  # no such process: its folder is a leftover
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
        except (OverflowError, OSError):
            continue  # alive (another user's), unreadable, or not a process number
    return removed


def _legacy_leftover(entry: Path, now: float) -> bool:
    """Whether a folder of the naming without a PID is a leftover (module doc)."""
    try:
        st = entry.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            return False
        if stat.S_IMODE(st.st_mode) != 0o700:
            return False
        newest = max([st.st_mtime, *(f.lstat().st_mtime for f in entry.iterdir())])
    except OSError:
        return False
    return now - newest >= LEGACY_STALE_SECONDS


def make(kind: str) -> Path:
    """A new private folder of ``kind`` (after sweeping the leftovers); the caller removes
    it (:func:`private_folder` does)."""
    sweep()
    return Path(tempfile.mkdtemp(prefix=folder_prefix(kind)))


@contextlib.contextmanager
def private_folder(kind: str) -> Iterator[Path]:
    """A new private folder of ``kind``, removed with everything in it when the block ends."""
    folder = make(kind)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
