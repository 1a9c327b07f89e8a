"""Choices the argument parser shows, without importing the engines that define them.

Building the parser runs on every start of the command (``--help`` included), so it must not
import numpy, scipy, pandas, pyarrow or SQLAlchemy. Each tuple here equals its engine's (or
the ledger's) own constant; tests/test_cli_startup.py keeps them equal.
"""

from __future__ import annotations

# airflow_privacy.core.anonymize.METHODS
METHODS: tuple[str, ...] = ("bucketize", "lattice", "mondrian")
# airflow_privacy.core.anonymize.utility.METRICS
METRICS: tuple[str, ...] = (
    "loss",
    "discernibility",
    "average-class-size",
    "precision",
    "non-uniform-entropy",
)
# airflow_privacy.core.anonymize.dimensions.CATEGORICAL_SPLITS
CATEGORICAL_SPLITS: tuple[str, ...] = ("hierarchy", "halving")
# airflow_privacy.core.algorithm_aware.intervals.METHODS
INTERVAL_METHODS: tuple[str, ...] = ("clopper-pearson", "wilson")
# airflow_privacy.ledger.models.STATUSES (what a release is shown as)
LEDGER_STATUSES: tuple[str, ...] = ("candidate", "published", "blocked", "superseded")
# airflow_privacy.ledger.models.RELEASE_STATUSES (what `ledger import` records)
RELEASE_STATUSES: tuple[str, ...] = ("candidate", "published")
