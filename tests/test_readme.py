"""The README is a front door: the two set-up commands first, under 15 KB, its DAG example
builds, and every page it links to exists (the reference lives once, under docs/)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_it_starts_with_the_two_set_up_commands() -> None:
    first_block = re.search(r"```\n(.*?)```", README, re.S)
    assert first_block is not None
    assert first_block.group(1).split("\n")[:2] == ["make demo", "make test"]
    assert README.index("make demo") < README.index("## The promise")


def test_it_is_a_front_door_not_a_reference() -> None:
    assert len(README.encode("utf-8")) < 15 * 1024


def test_every_link_names_a_file_of_the_repository() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    assert links
    missing = [x for x in links if "://" not in x and not (ROOT / x).exists()]
    assert not missing, missing


def test_the_dag_example_builds(tmp_path: Path) -> None:
    """The example parses as a DAG file (its operators check their arguments then)."""
    block = re.search(r"```python\n(.*?)```", README, re.S)
    assert block is not None
    dag = tmp_path / "readme_dag.py"
    dag.write_text(block.group(1), encoding="utf-8")
    code = (
        "import runpy, sys; ns = runpy.run_path(sys.argv[1]); "
        "from airflow.sdk import DAG; "
        "dags = [v for v in ns.values() if isinstance(v, DAG)]; "
        "print(sorted(t for d in dags for t in d.task_ids))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(dag)], capture_output=True, text=True, timeout=300,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "['check_safety', 'composition_audit', 'open_attempt', 'publish']" in proc.stdout
