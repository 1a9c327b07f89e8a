"""An Airflow metadata database for a test's ``AIRFLOW_HOME`` (a helper module, never a test
module): ``airflow db migrate`` runs once per test process, into a home of its own, and every
home that asks gets a copy of that SQLite file. A migration costs about 3.5 s of CPU; the
DAG and live-Airflow tests made one per module (about fifteen per run)."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

AIRFLOW = str(Path(sys.executable).with_name("airflow"))
_template: list[Path] = []  # the migrated home of this process, once made


def _migrated_template() -> Path:
    if _template:
        return _template[0]
    home = Path(tempfile.mkdtemp(prefix="airflow-privacy-metadata-"))
    atexit.register(shutil.rmtree, home, True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update({"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False"})
    proc = subprocess.run([AIRFLOW, "db", "migrate"], env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (home / "airflow.db").is_file(), f"no airflow.db in {home}"
    _template.append(home)
    return home


def migrated_home(home: Path) -> Path:
    """``home`` (created if missing) holding ``airflow.db`` migrated to Airflow's head, as
    ``airflow db migrate`` with the default SQLite connection leaves it."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_migrated_template() / "airflow.db", home / "airflow.db")
    return home
