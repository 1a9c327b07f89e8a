"""Composition audit: what intersecting a candidate with earlier releases reveals.

Ganta, Kasiviswanathan, Smith, "Composition Attacks and Auxiliary Information in Data
Privacy" (KDD 2008): locate every individual of the candidate in every earlier
release from its QI values (:mod:`.locate`, :mod:`.descriptors`), intersect the groups'
sensitive value sets (:mod:`.attack`, Algorithm 1), report ``EA_ij``, ``EA-hat_i``,
``Anon_Drop_i``, ``C_i``, ``VP``, ``VP_C``, ``PVP_C`` and a frequency-aware posterior
(:mod:`.posterior`), and gate on ``PVP_C`` (:func:`.result.gate`).
"""

from airflow_privacy.core.composition.attack import (
    DEFAULT_CONFIDENCES,
    check_releases,
    composition_audit,
)
from airflow_privacy.core.composition.identifiers import (
    DEFAULT_KEY_ENV,
    check_key,
    fingerprint_matches,
    hash_identifiers,
    key_fingerprint,
    key_from_env,
)
from airflow_privacy.core.composition.locate import Location, Population, locate
from airflow_privacy.core.composition.release import KINDS, PublishedRelease
from airflow_privacy.core.composition.result import Breach, CompositionResult, gate

__all__ = [
    "DEFAULT_CONFIDENCES",
    "DEFAULT_KEY_ENV",
    "KINDS",
    "Breach",
    "CompositionResult",
    "Location",
    "Population",
    "PublishedRelease",
    "check_key",
    "check_releases",
    "composition_audit",
    "fingerprint_matches",
    "gate",
    "hash_identifiers",
    "key_fingerprint",
    "key_from_env",
    "locate",
]
