#!/usr/bin/env bash
# Create (idempotently) the isolated virtualenv that runs anonypy's Mondrian for the
# side-by-side benchmark (benchmarks/bench_mondrian.py).
#
# anonypy 0.2.1 declares no dependencies (installing it into .venv would change no version),
# but it imports pandas at run time, and its other modules import scikit-learn,
# category_encoders and matplotlib without declaring them. As a peer library used only for
# comparison it lives in its own venv, with the same pandas / numpy versions as the
# project's .venv so the comparison is like for like, and is only ever run as a subprocess
# (benchmarks/bench_mondrian_anonypy.py). It must never be installed into .venv.
#
# Usage: bash benchmarks/anonypy_env.sh        -> prints the venv's python path on stdout
# Env:   ANONYPY_VENV  override the venv location (default: <repo>/.venv-anonypy)
#        PYTHON        interpreter used to create the venv (default: python3)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${ANONYPY_VENV:-$ROOT/.venv-anonypy}"
PY="${PYTHON:-python3}"
PINS=("anonypy==0.2.1" "pandas==3.1.1" "numpy==2.4.6")

if [ ! -x "$VENV/bin/python" ]; then
    "$PY" -m venv "$VENV" >&2
fi
# Install only when the pinned versions are not already there (keeps re-runs fast and offline).
if ! "$VENV/bin/python" - <<'PYCHECK' 2>/dev/null
import importlib.metadata as m, sys
want = {"anonypy": "0.2.1", "pandas": "3.1.1", "numpy": "2.4.6"}
sys.exit(any(m.version(k) != v for k, v in want.items()))
PYCHECK
then
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}" >&2
fi
"$VENV/bin/python" -c 'from anonypy import mondrian' >&2
echo "$VENV/bin/python"
