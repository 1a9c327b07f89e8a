"""Keyed hashes of an identifier column, to know the overlap of releases exactly.

Ganta et al. 2008 (papers/003_*), Algorithm 1, line 2: ``P <- set of overlapping
population``. Without identifiers the audit assumes the worst (everyone locatable in a
release is in it); with them it knows who is in which release. Identifiers are never
stored: only ``HMAC-SHA256(key, identifier)``, so whoever reads the ledger without the key
cannot test a guessed identifier. The key comes from an environment variable (its name is
configurable) or, in Airflow, from a connection; its fingerprint is stored beside the hashes
so that hashes made with different keys are never compared (they would silently report no
overlap at all).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Iterable

from airflow_privacy.errors import InputError

DEFAULT_KEY_ENV = "AIRFLOW_PRIVACY_LEDGER_KEY"
_FINGERPRINT_MESSAGE = b"airflow-privacy ledger key fingerprint v1"


def key_from_env(name: str = DEFAULT_KEY_ENV, required: bool = True) -> bytes | None:
    """The HMAC key held by environment variable ``name`` (UTF-8), or None when unset and not
    ``required``."""
    if not name:
        raise InputError("the name of the key's environment variable is empty")
    raw = os.environ.get(name)
    if raw is None or raw == "":
        if required:
            raise InputError(
                f"environment variable {name} holds no key; set it to a secret to hash "
                "identifiers (the same secret for every release that is compared)"
            )
        return None
    return raw.encode("utf-8")


def _check_key(key: bytes) -> None:
    if not isinstance(key, bytes) or len(key) == 0:
        raise InputError("the identifier hash key must be non-empty bytes")


def hash_identifiers(values: Iterable[str], key: bytes) -> list[str]:
    """``HMAC-SHA256(key, value)`` in hex for every identifier (values are stripped)."""
    _check_key(key)
    return [
        hmac.new(key, str(v).strip().encode("utf-8"), hashlib.sha256).hexdigest() for v in values
    ]


def key_fingerprint(key: bytes) -> str:
    """A short public fingerprint of the key (does not reveal it): hashes are comparable only
    between releases whose fingerprints are equal."""
    _check_key(key)
    return hmac.new(key, _FINGERPRINT_MESSAGE, hashlib.sha256).hexdigest()[:16]
