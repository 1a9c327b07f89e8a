"""Start-up: building the command's argument parser imports no engine, so every command
starts in the time of its own imports (``--help`` and bad usage answer at once)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "scipy", "pandas", "pyarrow", "sqlalchemy", "airflow", "great_expectations")


def test_building_the_parser_imports_no_engine() -> None:
    code = (
        "import sys, json\n"
        "from airflow_privacy.cli import build_parser\n"
        "build_parser()\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_help_of_every_command_imports_no_engine() -> None:
    from airflow_privacy.cli import COMMANDS

    names = [m.rsplit(".", 1)[1].replace("_", "-") for m in COMMANDS]
    code = (
        "import sys, json, io, contextlib\n"
        "from airflow_privacy.cli import main\n"
        f"for name in {names!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        main([name, '--help'])\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
