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


def test_a_command_builds_only_its_own_parser() -> None:
    """``airflow-privacy check ...`` imports the check command and its step, not the other
    twelve commands nor their steps; with no command (``--help``) every one is built."""
    code = (
        "import sys, json, io, contextlib\n"
        "from airflow_privacy.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['check', '--help'])\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(\n"
        "    ('airflow_privacy.cli.', 'airflow_privacy.gate.steps.')))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    assert {"airflow_privacy.cli.check", "airflow_privacy.gate.steps.check"} <= loaded
    others = {"airflow_privacy.cli.anonymize", "airflow_privacy.cli.ledger",
              "airflow_privacy.gate.steps.audit", "airflow_privacy.gate.steps.risk"}  # fmt: skip
    assert not loaded & others, loaded & others
    import argparse

    from airflow_privacy.cli import COMMANDS, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert len(sub.choices) == len(COMMANDS)


def test_an_anonymization_imports_no_scipy_stats(tmp_path: object) -> None:
    """A lattice anonymization of Adult runs without ``scipy.stats`` (about 0.7 s of import,
    half the command's CPU): only a sampled algorithm-aware audit computes an interval."""
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "airflow_privacy" / "data" / "adult"
    out = Path(str(tmp_path)) / "release.csv"
    argv = ["anonymize", str(data / "adult.csv.gz"), "--qi", "age", "--qi", "sex",
            "--sensitive", "occupation", "--method", "lattice",
            "--criterion", "k-anonymity:k=5",
            "--hierarchy", f"age={data / 'adult_hierarchy_age.csv'}",
            "--hierarchy", f"sex={data / 'adult_hierarchy_sex.csv'}",
            "--out", str(out), "--quiet"]  # fmt: skip
    code = (
        "import sys, json\n"
        "from airflow_privacy.cli import main\n"
        f"rc = main({argv!r})\n"
        "print(json.dumps([rc, 'scipy.stats' in sys.modules]))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout.strip().splitlines()[-1]) == [0, False]
    assert out.exists()


def test_a_risk_analysis_imports_neither_scipy_nor_acero_nor_pandas() -> None:
    """The risk step on Adult with a sampling fraction (every population model, SUDA2)
    runs without SciPy (0.3 s of import: the models' special functions are numpy), Arrow's
    Acero engine (0.35 s: the classes are counted in numpy) or pandas (0.13 s)."""
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "airflow_privacy" / "data" / "adult"
    argv = ["risk", str(data / "adult.csv.gz"), "--qi", "age", "--qi", "sex", "--qi", "race",
            "--qi", "education", "--sampling-fraction", "0.01", "--format", "json",
            "--quiet"]  # fmt: skip
    code = (
        "import sys, json, io\n"
        "from airflow_privacy.cli import main\n"
        f"rc = main({argv!r}, io.StringIO())\n"
        "heavy = ('scipy', 'pyarrow.acero', 'pyarrow.dataset', 'pandas')\n"
        "print(json.dumps([rc, [m for m in heavy if m in sys.modules]]))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(run.stdout.strip().splitlines()[-1]) == [0, []]


def test_the_command_sets_the_collector_for_its_process_and_main_does_not() -> None:
    """The installed command and ``python -m`` run :func:`console`, which raises the garbage
    collector's first threshold for its own process; :func:`main` (which also runs inside
    an Airflow worker or a test) leaves the host's setting alone."""
    import tomllib
    from pathlib import Path

    from airflow_privacy.cli import GC_THRESHOLD

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["airflow-privacy"] == "airflow_privacy.cli:console"
    code = (
        "import gc, runpy, sys, io, contextlib\n"
        "before = gc.get_threshold()\n"
        "from airflow_privacy.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['check', '--help'])\n"
        "assert gc.get_threshold() == before, gc.get_threshold()\n"
        "sys.argv = ['airflow-privacy', '--version']\n"
        "try:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        runpy.run_module('airflow_privacy.cli', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "print(gc.get_threshold()[0], before[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == str(GC_THRESHOLD)
