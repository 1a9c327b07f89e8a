#!/usr/bin/env bash
# Create (idempotently) the isolated virtualenv that runs pyCANON for the cross-checks.
#
# pyCANON 1.3.6 pins pandas 2.3.3, numpy 2.0.2 and tabulate 0.8.10, which conflict with the
# project's own environment, so it lives in its own venv and is only ever run as a
# subprocess (benchmarks/pycanon_runner.py). It must never be installed into .venv.
#
# Usage: bash benchmarks/pycanon_env.sh        -> prints the venv's python path on stdout
# Env:   PYCANON_VENV  override the venv location (default: <repo>/.venv-pycanon)
#        PYTHON        interpreter used to create the venv (default: python3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${PYCANON_VENV:-$ROOT/.venv-pycanon}"
PY="${PYTHON:-python3}"
PIN="pycanon==1.3.6"

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV" >&2
fi
# Install only when the pinned version is not already there (keeps re-runs fast and offline).
if ! "$VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("pycanon") != "1.3.6")' 2>/dev/null; then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$PIN" >&2
fi
"$VENV/bin/python" -c 'import pycanon' >&2
echo "$VENV/bin/python"
