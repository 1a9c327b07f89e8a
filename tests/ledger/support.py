"""Shared pieces of the ledger tests: the database fixture (SQLite file and a real
PostgreSQL), sample releases, strong identifier keys, and helpers that run the child
processes of :mod:`tests.ledger_worker` and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.core.composition import PublishedRelease

ROOT = Path(__file__).resolve().parents[2]
# identifier keys: at least 32 bytes of varied characters (check_key refuses weaker ones)
KEY = b"ledger-test-key-7f3a9c1e5b2d8046-QvXkLmNpRsTu"
OTHER_KEY = b"another-ledger-key-0b1c2d3e4f5a6978-HgJkWzYx"

INJECTIONS = [
    "x'; DROP TABLE ledger_releases; --",
    'a" OR "1"="1',
    "a' OR '1'='1",
    "Robert'); DELETE FROM ledger_groups WHERE ('1'='1",
    "%; \\'; SELECT pg_sleep(5); --",
    "naïve ✓ 'quoted' \"double\" \\backslash\\ ;semicolon",
    "tab\tnew\nline \\N \\. \r end",  # what COPY's text format escapes
]


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: a SQLite file, or a database on a real PostgreSQL server
    (the module must import ``pg_server`` and ``pg_url`` from :mod:`tests.conftest_pg`)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        yield request.getfixturevalue("pg_url")


def sample(kind: str = "generalized") -> PublishedRelease:
    if kind == "bucketized":
        return PublishedRelease.from_groups(
            ("age", "zip"),
            "disease",
            [(("1",), {"flu": 2, "cancer": 1}), (("2",), {"aids": 1, "flu": 1})],
            kind="bucketized",
            members=[
                [(("28", "13012"), 2), (("35", "13053"), 1)],
                [(("40", "14850"), 1), (("28", "13012"), 1)],
            ],
            name="b",
        )
    if kind == "microaggregated":
        return PublishedRelease.from_groups(
            ("age", "income"),
            "disease",
            [(("31.5", "40000"), {"flu": 2}), (("52.25", "61000.5"), {"cancer": 1, "flu": 1})],
            kind="microaggregated",
        )
    return PublishedRelease.from_groups(
        ("age", "zip"),
        "disease",
        [(("<30", "130**"), {"aids": 1, "flu": 3}), ((">=30", "130**"), {"cancer": 4})],
    )


def env(**extra: str) -> dict[str, str]:
    """The environment of a child process: the project on the path, no ledger settings of
    the user's, plus ``extra``."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW_PRIVACY_")}
    out.pop("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", None)
    return {**out, "PYTHONPATH": str(ROOT), **extra}


def worker(*args: str, **extra: str) -> subprocess.Popen[str]:
    """A :mod:`tests.ledger_worker` child, started (read it with ``communicate``)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.ledger_worker", *args],
        cwd=ROOT,
        env=env(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_worker(*args: str, timeout: float = 600) -> Any:
    """Run a :mod:`tests.ledger_worker` command to its end; its JSON answer."""
    proc = worker(*args)
    stdout, stderr = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, stderr[-3000:]
    return json.loads(stdout)


def cli(
    *args: str, extra_env: Mapping[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``airflow-privacy ARGS`` in its own process (exit code, stdout, stderr)."""
    return subprocess.run(
        [sys.executable, "-m", "airflow_privacy.cli", *args],
        cwd=ROOT,
        env=env(**dict(extra_env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def gate_rules(info: Any, policy: Any = None) -> list[str]:
    """The gate's blocking rules with no failed task (what ``ledger.decide`` is given by the
    publish step)."""
    from airflow_privacy.gate.rules import reasons

    return reasons(info, {}, policy)


#: a content digest for attempts opened through the ledger's API in tests (their checks
#: pass the same one: they "read" the same bytes)
DIGEST = "sha256:" + "0" * 64
