"""Keyed hashes of identifiers computed where the data lives, so raw identifiers never leave
the database.

The ledger stores people as ``HMAC-SHA256(key, strip(id))`` in hex
(:func:`airflow_privacy.core.composition.identifiers.hash_identifiers`). HMAC is two
SHA-256 calls (RFC 2104, section 2): ``H((K0 ^ opad) || H((K0 ^ ipad) || m))`` where ``K0``
is the key padded with zero bytes to the block size (64 bytes; a longer key is hashed
first). The two padded keys are computed here and sent as bound parameters; the database
evaluates the two SHA-256 calls with its own function (PostgreSQL 11+ ``sha256(bytea)``), so
only the hashes come back. SQLite has no
SHA-256: its database is a local file read in this process, and the same HMAC is registered
as an SQL function on the connection.

``strip`` is Python's :meth:`str.strip` (every Unicode whitespace character). The databases
strip the six ASCII whitespace characters; an identifier that starts or ends with any other
whitespace character (``U+00A0``, ``U+2003``...) is refused, counted in the database, so the
hashes always equal the in-process ones.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    import sqlalchemy as sa

BLOCK = 64
ASCII_SPACE = " \t\n\r\x0b\x0c"
OTHER_SPACE = (
    "\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""The whitespace characters :meth:`str.strip` removes beyond ASCII's (an identifier that
starts or ends with one is refused by the database path)."""


def pads(key: bytes) -> tuple[bytes, bytes]:
    """``(K0 ^ ipad, K0 ^ opad)`` of RFC 2104 for SHA-256."""
    k0 = hashlib.sha256(key).digest() if len(key) > BLOCK else key
    k0 = k0.ljust(BLOCK, b"\x00")
    return bytes(b ^ 0x36 for b in k0), bytes(b ^ 0x5C for b in k0)


def _sqlite_hmac(key: bytes) -> Any:
    def fn(value: object) -> str | None:
        if value is None:
            return None
        return hmac.new(key, str(value).strip().encode("utf-8"), hashlib.sha256).hexdigest()

    return fn


def hashed_column(engine: sa.Engine, column: Any, key: bytes) -> tuple[Any, dict[str, Any]]:
    """The SQL expression of ``column``'s keyed hash (hex) on ``engine``'s dialect, and the
    bound parameters it needs."""
    import sqlalchemy as sa

    dialect = engine.dialect.name
    ipad, opad = pads(key)
    text = sa.cast(column, sa.Text)
    if dialect == "postgresql":
        trimmed = sa.func.btrim(text, sa.literal(ASCII_SPACE))
        inner = sa.func.sha256(
            sa.bindparam("ap_ipad", ipad, type_=sa.LargeBinary).op("||")(
                sa.func.convert_to(trimmed, sa.literal("UTF8"))
            )
        )
        outer = sa.func.sha256(sa.bindparam("ap_opad", opad, type_=sa.LargeBinary).op("||")(inner))
        return sa.func.encode(outer, sa.literal("hex")), {}
    if dialect == "sqlite":
        return sa.func.airflow_privacy_hmac(text), {"sqlite_function": _sqlite_hmac(key)}
    raise InputError(
        f"keyed identifier hashes are computed in PostgreSQL and SQLite; the {dialect} "
        f"database of {opt('population')} is not supported yet: export the population's "
        f"{opt('id_column')} with its QI columns to a file, or hash it in the warehouse with "
        "HMAC-SHA256 and the ledger's key (docs/warehouses.md)"
    )


def refuse_other_space(conn: sa.Connection, table: Any, column: Any, where: str) -> None:
    """Refuse identifiers that start or end with whitespace other than ASCII's (module doc),
    and missing identifiers; only counts are read."""
    import sqlalchemy as sa

    nulls = conn.execute(
        sa.select(sa.func.count()).select_from(table).where(column.is_(None))
    ).scalar_one()
    if nulls:
        raise InputError(
            f"column {column.name!r} of {where} has {nulls} missing value(s); fill or drop them "
            "first"
        )
    # the identifier as the database strips it: what must not start or end with more space
    text = sa.func.trim(sa.cast(column, sa.Text), sa.literal(ASCII_SPACE))
    if conn.dialect.name == "postgresql":
        text = sa.func.btrim(sa.cast(column, sa.Text), sa.literal(ASCII_SPACE))
    conds = []
    for ch in OTHER_SPACE:
        conds.append(text.like(sa.literal(ch) + "%"))
        conds.append(text.like("%" + sa.literal(ch)))
    odd = conn.execute(
        sa.select(sa.func.count()).select_from(table).where(sa.or_(*conds))
    ).scalar_one()
    if odd:
        raise InputError(
            f"{odd} identifier(s) of column {column.name!r} of {where} start or end with a "
            "non-ASCII whitespace character; strip them in the database first"
        )
