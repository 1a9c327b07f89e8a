"""Algorithm-aware disclosure (Zhang, Jajodia, Brodsky, CCS 2007): what an adversary who
knows the disclosure algorithm and its candidate order learns, and a p-safe release mode.

* :mod:`.model` — people, candidates (generalizations), worlds;
* :mod:`.worlds` — blocks: enumeration and uniform sampling;
* :mod:`.predicate` — the safety predicate on a table and on a disclosure set;
* :mod:`.rules` — the naive and the safe deterministic disclosure functions;
* :mod:`.audit` — the audit (exact or sampled posterior) and the release choice;
* :mod:`.candidates` — candidate sequences from a table: named generalizations and the
  lattice search's order;
* :mod:`.lattice_mode` — the lattice anonymizer's safe mode, and :func:`anonymize` (the
  anonymizers of :mod:`airflow_privacy.core.anonymize` with that mode supplied);
* :mod:`.result` — JSON-ready result dataclasses.

docs/algorithm-aware.md states the definitions, the bound and the limits.
"""

from __future__ import annotations

from airflow_privacy.core.algorithm_aware.audit import (
    MODES,
    audit_algorithm,
    choose_release,
    make_rule,
)
from airflow_privacy.core.algorithm_aware.lattice_mode import anonymize, anonymize_histogram
from airflow_privacy.core.algorithm_aware.model import Candidate, Population
from airflow_privacy.core.algorithm_aware.predicate import POSTERIOR_FORMS, Predicate
from airflow_privacy.core.algorithm_aware.result import (
    AlgorithmAuditResult,
    PersonPosterior,
    ReleaseChoice,
    SamplingInfo,
)
from airflow_privacy.core.algorithm_aware.rules import EXACT_LIMIT, NaiveRule, SafeRule

__all__ = [
    "EXACT_LIMIT",
    "MODES",
    "POSTERIOR_FORMS",
    "AlgorithmAuditResult",
    "Candidate",
    "NaiveRule",
    "PersonPosterior",
    "Population",
    "Predicate",
    "ReleaseChoice",
    "SafeRule",
    "SamplingInfo",
    "anonymize",
    "anonymize_histogram",
    "audit_algorithm",
    "choose_release",
    "make_rule",
]
