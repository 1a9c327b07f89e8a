"""Privacy-MaxEnt: disclosure risk under probabilistic background knowledge (Du, Teng and
Zhu, SIGMOD 2008).

The published buckets give linear *invariants* of the unknown joint ``P(q, s, b)``; the
adversary's knowledge gives more linear constraints (distributional ``P(s | Q_v)``,
association rules, knowledge about pseudonymous individuals, intervals). The least-biased
estimate of ``P(s | q)`` is the maximum-entropy distribution satisfying all of them.

Modules: :mod:`.release` (the bucketized release), :mod:`.knowledge` (statements),
:mod:`.knowledge_file` (YAML/JSON), :mod:`.rules` (Top-(K+, K-) association rules),
:mod:`.constraints` (invariants and knowledge rows), :mod:`.zeros` and :mod:`.phase1`
(forced zeros, feasibility, conflicts), :mod:`.solver` (closed form + dual Newton),
:mod:`.result` and :mod:`.accuracy` (posteriors, risk, weighted KL), :mod:`.estimate` (end
to end), :mod:`.diverse_buckets` (the section 7 Adult fixture).
"""

from airflow_privacy.core.maxent.estimate import estimate
from airflow_privacy.core.maxent.knowledge import (
    Bound,
    DistributionFact,
    IndividualFact,
    Knowledge,
    Person,
    Source,
)
from airflow_privacy.core.maxent.knowledge_file import load_knowledge, parse_knowledge
from airflow_privacy.core.maxent.release import BucketRelease
from airflow_privacy.core.maxent.result import MaxEntResult
from airflow_privacy.core.maxent.solver import InfeasibleKnowledge, SolverOptions

__all__ = [
    "Bound",
    "BucketRelease",
    "DistributionFact",
    "IndividualFact",
    "InfeasibleKnowledge",
    "Knowledge",
    "MaxEntResult",
    "Person",
    "SolverOptions",
    "Source",
    "estimate",
    "load_knowledge",
    "parse_knowledge",
]
