"""Shared test set-up: the project root on sys.path (for ``benchmarks.*`` baselines)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# CI runs property tests derandomized (the same examples every run), so a red CI always
# points at a reproducible failure; locally hypothesis explores with fresh random examples.
import os  # noqa: E402

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")
