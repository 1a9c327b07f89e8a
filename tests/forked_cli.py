"""Many CLI commands at once, as separate processes that start together (a helper module,
never a test module).

``run_at_once(commands)`` starts ``python -m tests.forked_cli``, which imports the CLI and
the modules the commands will need once, then forks one child per command: each sets its
own environment, waits until every child is forked, runs ``airflow_privacy.cli.main`` on
its arguments and exits with its code. The children are real processes with their own
database connections, as sixteen ``airflow-privacy`` processes would be, without each paying
the interpreter and its imports (about 1 s of CPU per process: the concurrency tests started
about fifty).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WARM = (
    "airflow_privacy.cli",
    "airflow_privacy.ledger",
    "airflow_privacy.gate.steps.dp_release",
    "airflow_privacy.core.dp.marginals",
    "airflow_privacy.core.dp.noise",
    "opendp.prelude",
    "duckdb",
    "pandas",
    "pyarrow.csv",
)


@dataclass(frozen=True)
class Command:
    argv: list[str]
    env: dict[str, str | None]  # set in the child before it runs; None: removed


@dataclass(frozen=True)
class Outcome:
    code: int
    stderr: str


def run_at_once(commands: list[Command], cwd: Path, timeout: float = 600) -> list[Outcome]:
    """Each command's exit code and standard error, in order (module doc)."""
    payload = json.dumps([{"argv": c.argv, "env": c.env} for c in commands])
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "tests.forked_cli"], input=payload, env=env,
                          capture_output=True, text=True, timeout=timeout, cwd=cwd)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [Outcome(int(o["code"]), str(o["stderr"])) for o in json.loads(proc.stdout)]


def _child(item: dict[str, Any], err: Path, gate: int) -> None:
    """Run in the forked child: never returns."""
    code = 70
    try:
        with open(err, "wb") as fh:
            os.dup2(fh.fileno(), 2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        for key, value in item["env"].items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        os.read(gate, 1)  # returns when the parent closes the pipe: every child is forked
        from airflow_privacy.cli import main

        code = main(item["argv"])
    except BaseException as exc:  # pragma: no cover - reported through stderr and the code
        os.write(2, f"{type(exc).__name__}: {exc}\n".encode())
    finally:
        os._exit(code)


def _main() -> None:
    items = json.loads(sys.stdin.read())
    for name in WARM:
        importlib.import_module(name)
    with tempfile.TemporaryDirectory() as tmp:
        read, write = os.pipe()
        children = []
        for i, item in enumerate(items):
            err = Path(tmp) / f"{i}.err"
            pid = os.fork()
            if pid == 0:
                os.close(write)
                _child(item, err, read)
            children.append((pid, err))
        os.close(read)
        os.close(write)  # every child starts now
        out = []
        for pid, err in children:
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            out.append({"code": code, "stderr": err.read_text(errors="replace")})
    print(json.dumps(out))


if __name__ == "__main__":
    _main()
