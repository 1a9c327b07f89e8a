"""Keyed hashes of an identifier column, to know the overlap of releases exactly.

Ganta et al. 2008, Algorithm 1, line 2: ``P <- set of overlapping population``. Without
identifiers the audit assumes the worst (everyone locatable in a release is in it); with them
it knows who is in which release. Identifiers are never stored: only
``HMAC-SHA256(key, identifier)``, so whoever reads the ledger without the key cannot test a
guessed identifier.

The key must be strong (:func:`check_key`: at least 32 bytes, not a short pattern repeated):
a short key could be found by trying keys against a stored hash. Beside the hashes the ledger
keeps a *salted scrypt* fingerprint of the key (:func:`key_fingerprint`), so that hashes made
with different keys are never compared (they would silently report no overlap at all) while
the fingerprint, unlike a plain keyed hash of a constant, costs an attacker a memory-hard
scrypt evaluation per guess on top of the key's own strength.

**What the ledger stores is derived through scrypt** (:func:`derive_key`, :func:`wrap_hashes`).
A key of 32 characters can still be a guessable phrase, and a stored
``HMAC(key, identifier)`` lets whoever knows one identifier test a guessed key with one HMAC.
So the ledger keeps ``HMAC(K2, HMAC(key, identifier))``, where
``K2 = scrypt(key, salt of this ledger)``: testing one guess costs one scrypt evaluation
(16 MiB, about 50 ms), and no table computed for one ledger serves another. Everything
outside the ledger (a population hashed in this process or in a warehouse, the hashes given
to ``attempt --member-hashes``) stays ``HMAC(key, identifier)``: the ledger wraps them when it
stores or compares them. Hashes stored before (``HMAC(key, identifier)`` under a ``scrypt1``
or legacy fingerprint) are wrapped in place the first time the ledger is used with their key
(their fingerprint becomes ``kdf1$...``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable

from airflow_privacy.errors import InputError

DEFAULT_KEY_ENV = "AIRFLOW_PRIVACY_LEDGER_KEY"
MIN_KEY_BYTES = 32
MIN_DISTINCT_BYTES = 10
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}
_LEGACY_MESSAGE = b"airflow-privacy ledger key fingerprint v1"
_PREFIX = "scrypt1"
#: the prefix of the fingerprint of wrapped hashes (``kdf1$<digest>``)
DERIVED_PREFIX = "kdf1"
_DERIVED_MESSAGE = b"airflow-privacy derived identifier key fingerprint v1"
_cache: dict[tuple[bytes, str], str] = {}


def key_from_env(name: str = DEFAULT_KEY_ENV, required: bool = True) -> bytes | None:
    """The HMAC key held by environment variable ``name`` (UTF-8), checked for strength; None
    when unset and not ``required``."""
    if not name:
        raise InputError("the name of the key's environment variable is empty")
    raw = os.environ.get(name)
    if raw is None or raw == "":
        if required:
            raise InputError(
                f"environment variable {name} holds no key; set it to a secret of at least "
                f"{MIN_KEY_BYTES} random bytes to hash identifiers (the same secret for every "
                "release that is compared), e.g. the output of "
                '`python -c "import secrets; print(secrets.token_hex(32))"`'
            )
        return None
    key = raw.encode("utf-8")
    check_key(key, f"the key in {name}")
    return key


def period(key: bytes) -> int:
    """The length of the shortest unit the key repeats (``len(key)`` when it repeats none):
    ``b"0123456789" * 4`` has period 10, however long it is."""
    n = len(key)
    fail = [0] * n  # the prefix function (Knuth, Morris and Pratt)
    k = 0
    for i in range(1, n):
        while k and key[i] != key[k]:
            k = fail[k - 1]
        if key[i] == key[k]:
            k += 1
        fail[i] = k
    return n - fail[-1] if n else 0


def check_key(key: bytes, what: str = "the identifier hash key") -> None:
    """Refuse keys an attacker could guess: fewer than 32 bytes, too few distinct bytes, or
    a shorter unit repeated (its strength is the unit's: ``"0123456789" x 4``)."""
    if not isinstance(key, bytes) or len(key) == 0:
        raise InputError(f"{what} must be non-empty bytes")
    unit = period(key)
    if unit < MIN_KEY_BYTES:
        raise InputError(
            f"{what} is too weak: it repeats a unit of {unit} bytes (at least "
            f"{MIN_KEY_BYTES} random bytes are needed), e.g. "
            '`python -c "import secrets; print(secrets.token_hex(32))"`'
        )
    if len(key) < MIN_KEY_BYTES or len(set(key)) < MIN_DISTINCT_BYTES:
        raise InputError(
            f"{what} is too weak ({len(key)} bytes, {len(set(key))} distinct): use at least "
            f"{MIN_KEY_BYTES} random bytes, e.g. "
            '`python -c "import secrets; print(secrets.token_hex(32))"`'
        )


def hash_identifiers(values: Iterable[str], key: bytes) -> list[str]:
    """``HMAC-SHA256(key, value)`` in hex for every identifier (values are stripped)."""
    check_key(key)
    return [
        hmac.new(key, str(v).strip().encode("utf-8"), hashlib.sha256).hexdigest() for v in values
    ]


def _scrypt(key: bytes, salt_hex: str) -> str:
    cached = _cache.get((key, salt_hex))
    if cached is None:
        cached = hashlib.scrypt(key, salt=bytes.fromhex(salt_hex), **_SCRYPT).hex()
        _cache[(key, salt_hex)] = cached
    return cached


def key_fingerprint(key: bytes, salt_hex: str | None = None) -> str:
    """A salted scrypt fingerprint of the key: ``scrypt1$<salt>$<digest>`` (a new random
    salt unless one is given)."""
    check_key(key)
    salt = salt_hex or secrets.token_hex(16)
    return f"{_PREFIX}${salt}${_scrypt(key, salt)}"


def fingerprint_matches(fingerprint: str | None, key: bytes) -> bool:
    """Whether ``fingerprint`` (as stored beside hashes) was made from ``key``. Fingerprints of
    ledgers written before salted fingerprints existed (16 hex digits) are still compared."""
    if not fingerprint:
        return False
    parts = fingerprint.split("$")
    if len(parts) == 3 and parts[0] == _PREFIX:
        try:
            bytes.fromhex(parts[1])
        except ValueError:
            return False
        return hmac.compare_digest(_scrypt(key, parts[1]), parts[2])
    legacy = hmac.new(key, _LEGACY_MESSAGE, hashlib.sha256).hexdigest()[:16]
    return hmac.compare_digest(legacy, fingerprint)


def derive_key(key: bytes, salt_hex: str) -> bytes:
    """``K2 = scrypt(key, salt)`` (n = 2^14, r = 8, p = 1; 32 bytes): the key the ledger wraps
    stored hashes with (module doc). ``salt_hex`` is the ledger's own salt."""
    check_key(key)
    try:
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        raise InputError("the ledger's identifier key salt is not hexadecimal") from None
    if len(salt) < 16:
        raise InputError("the ledger's identifier key salt is shorter than 16 bytes")
    return bytes.fromhex(_scrypt(key, salt_hex))


def wrap_hashes(hashes: Iterable[str], derived: bytes) -> list[str]:
    """``HMAC-SHA256(K2, h)`` in hex of every identifier hash ``h`` (hex text, as
    :func:`hash_identifiers` writes it): what the ledger stores."""
    return [hmac.new(derived, str(h).encode("ascii"), hashlib.sha256).hexdigest() for h in hashes]


def derived_fingerprint(derived: bytes) -> str:
    """``kdf1$<digest>``: the fingerprint of wrapped hashes. Computing it from a guessed key
    costs the scrypt evaluation of :func:`derive_key`."""
    digest = hmac.new(derived, _DERIVED_MESSAGE, hashlib.sha256).hexdigest()
    return f"{DERIVED_PREFIX}${digest}"


def is_derived(fingerprint: str | None) -> bool:
    """Whether ``fingerprint`` belongs to wrapped hashes (else: hashes stored unwrapped)."""
    return bool(fingerprint) and str(fingerprint).startswith(f"{DERIVED_PREFIX}$")


def derived_matches(fingerprint: str | None, derived: bytes) -> bool:
    """Whether wrapped hashes of ``fingerprint`` were wrapped with ``derived``."""
    if not is_derived(fingerprint):
        return False
    return hmac.compare_digest(derived_fingerprint(derived), str(fingerprint))
