"""The closed word sets both front ends offer (methods, metrics, backends, statuses, ...),
without importing the engines that define them.

The command line builds its parser from these on every start (``--help`` included) and the
operators check their arguments with them when a DAG is parsed, so this module imports
nothing: no numpy, scipy, pandas, pyarrow or SQLAlchemy. Each tuple equals its engine's (or
the ledger's) own constant; tests/test_vocabulary.py keeps them equal. Neither front end
imports the other: both import this.
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
CATEGORICAL_SPLITS: tuple[str, ...] = ("auto", "hierarchy", "halving")
# airflow_privacy.core.algorithm_aware.intervals.METHODS
INTERVAL_METHODS: tuple[str, ...] = ("clopper-pearson", "wilson")
# airflow_privacy.ledger.models.STATUSES (what a release is shown as)
LEDGER_STATUSES: tuple[str, ...] = ("candidate", "published", "blocked", "superseded")
# airflow_privacy.ledger.models.RELEASE_STATUSES (what `ledger import` records)
RELEASE_STATUSES: tuple[str, ...] = ("candidate", "published")
# airflow_privacy.core.algorithm_aware.lattice_mode.DISCLOSURE_MODES
DISCLOSURE_MODES: tuple[str, ...] = ("naive", "safe")
# airflow_privacy.core.backends.BACKENDS
BACKENDS: tuple[str, ...] = ("auto", "arrow", "duckdb", "spark")
# airflow_privacy.gate.pushdown.ANONYMIZE_BACKENDS
ANONYMIZE_BACKENDS: tuple[str, ...] = ("auto", "arrow", "duckdb", "sql", "spark")
# airflow_privacy.core.composition.release.KINDS (how a release publishes its QIs)
RELEASE_KINDS: tuple[str, ...] = ("generalized", "bucketized", "microaggregated")
# airflow_privacy.ledger.models.DP_KIND (a differentially private release: noisy marginals)
DP_KIND = "dp-marginals"
# airflow_privacy.core.dp.noise.MECHANISMS
DP_MECHANISMS: tuple[str, ...] = ("gaussian", "laplace")
