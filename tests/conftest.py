"""Shared test set-up: the project root on sys.path (for ``benchmarks.*`` baselines)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# CI runs property tests derandomized (the same examples every run), so a red CI always
# points at a reproducible failure; locally hypothesis explores with fresh random examples.
# No per-example deadline in either profile: hypothesis's default (200 ms of wall-clock time)
# fails correct code on a machine running other work; speed belongs in benchmarks/.
import os  # noqa: E402

from hypothesis import settings  # noqa: E402

settings.register_profile("local", deadline=None)
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "local")
