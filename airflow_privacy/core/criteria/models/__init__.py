"""The built-in criteria, one class per module (:mod:`airflow_privacy.core.criteria.base`).

:data:`BUILT_IN` is their order everywhere (the registry, the command line's list of names,
the README's table). Importing this package is cheap: the engines are imported by the
classes' methods.
"""

from __future__ import annotations

from airflow_privacy.core.criteria.base import Criterion
from airflow_privacy.core.criteria.models.alpha_k_anonymity import AlphaKAnonymity
from airflow_privacy.core.criteria.models.beta_likeness import (
    BasicBetaLikeness,
    EnhancedBetaLikeness,
)
from airflow_privacy.core.criteria.models.ck_safety import CKSafety
from airflow_privacy.core.criteria.models.delta_disclosure import DeltaDisclosure
from airflow_privacy.core.criteria.models.delta_presence import DeltaPresence
from airflow_privacy.core.criteria.models.distinct_l_diversity import DistinctLDiversity
from airflow_privacy.core.criteria.models.entropy_l_diversity import EntropyLDiversity
from airflow_privacy.core.criteria.models.k_anonymity import KAnonymity
from airflow_privacy.core.criteria.models.k_map import KMap
from airflow_privacy.core.criteria.models.negation_safety import NegationSafety
from airflow_privacy.core.criteria.models.prosecutor_risk import ProsecutorRisk
from airflow_privacy.core.criteria.models.recursive_cl_diversity import RecursiveCLDiversity
from airflow_privacy.core.criteria.models.skyline import Skyline
from airflow_privacy.core.criteria.models.t_closeness import TCloseness

BUILT_IN: tuple[type[Criterion], ...] = (
    KAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
    TCloseness,
    CKSafety,
    NegationSafety,
    Skyline,
    AlphaKAnonymity,
    BasicBetaLikeness,
    EnhancedBetaLikeness,
    DeltaDisclosure,
    ProsecutorRisk,
    KMap,
    DeltaPresence,
)

__all__ = [
    "BUILT_IN",
    "AlphaKAnonymity",
    "BasicBetaLikeness",
    "CKSafety",
    "DeltaDisclosure",
    "DeltaPresence",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "KAnonymity",
    "KMap",
    "NegationSafety",
    "ProsecutorRisk",
    "RecursiveCLDiversity",
    "Skyline",
    "TCloseness",
]
