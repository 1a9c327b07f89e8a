"""Pieces the test DAG folders share (imported by the DAG files; ``PYTHONPATH`` holds the
repository in every DAG test): a run's own output folder and the Adult slices the prepare
tasks write."""

from __future__ import annotations

import os
from pathlib import Path


def run_folder() -> tuple[Path, str]:
    """This run's folder under ``$AIRFLOW_PRIVACY_OUTPUT_DIR`` (created) and the run's id as
    a file name (its ``:`` and ``+`` replaced)."""
    from airflow.sdk import get_current_context

    run = str(get_current_context()["run_id"]).replace(":", "_").replace("+", "_")
    folder = Path(os.environ["AIRFLOW_PRIVACY_OUTPUT_DIR"]) / run
    folder.mkdir(parents=True, exist_ok=True)
    return folder, run


def write_adult(path: Path, first: int, n: int, *, ids: bool = False) -> str:
    """Adult records ``first .. first + n - 1`` as Parquet at ``path`` (with ``ids``: an
    identifier column ``id``, ``person-<record number>``); the path as text."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from airflow_privacy.core.datasets import load_adult

    table = load_adult().slice(first, n)
    if ids:
        table = table.append_column(
            "id", pa.array([f"person-{first + i}" for i in range(table.num_rows)])
        )
    pq.write_table(table, path)
    return str(path)
