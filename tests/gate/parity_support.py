"""What the parity tests share with the operator tests: a stand-in for Airflow's task
instance (:class:`FakeTI`) and an envelope without what must differ between two runs
(:func:`normal`); a command run in a folder (:func:`inside`, :func:`cli`)."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airflow_privacy.cli import main

VOLATILE = {
    "created_at",
    "updated_at",
    "decided_at",
    "published_at",
    "generated",
    "uuid",
    "release_uuid",
    "tool_version",
    "seconds",
    "elapsed_seconds",
}


class FakeTI:
    dag_id, run_id, task_id, try_number = "parity", "manual__1", "task", 1

    def __init__(self) -> None:
        self.pushed: dict[str, dict[str, Any]] = {}
        self.results: dict[str, Any] = {}

    def xcom_push(self, key: str, value: Any) -> None:
        self.pushed.setdefault(self.task_id, {})[key] = value

    def xcom_pull(self, task_ids: str, key: str = "return_value") -> Any:
        return self.results.get(task_ids)


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


def normal(value: Any) -> Any:
    """The envelope without what must differ between two runs (times, UUIDs)."""
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normal(v) for v in value]
    if isinstance(value, str):
        return STAMP.sub("<time>", UUID.sub("<uuid>", value))
    return value


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


def cli(argv: list[str]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = main([*argv, "--format", "json", "--quiet"], out)
    return code, json.loads(out.getvalue())
