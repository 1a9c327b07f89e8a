"""Which ledger the privacy UI reads, who may read it, and how it is opened: read-only,
never created nor migrated (:mod:`airflow_privacy.providers.airflow.plugin` describes the
UI)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from fastapi import Depends, HTTPException

from airflow_privacy.providers.airflow.urls import URL_PREFIX as URL_PREFIX  # re-exported

if TYPE_CHECKING:
    from airflow_privacy.ledger import ReleaseLedger
    from airflow_privacy.ledger.location import ConnectionFields, LedgerLocation

log = logging.getLogger(__name__)


RESOURCE_NAME = "Privacy Ledger"  # the custom view the auth manager authorizes
AUTH_ENV = "AIRFLOW_PRIVACY_UI_AUTH"
AUTH_MODES = ("airflow", "none")
RETRY_AFTER_S = 30
#: how to bring a ledger to this version's schema (the UI never does it: reading is read-only)
MIGRATE_HINT = (
    "airflow-privacy ledger list --ledger <its URL> (any airflow-privacy command that opens "
    "the ledger migrates it; so does the DAG's next run)"
)


# ------------------------------------------------------------------------ configuration
def auth_mode() -> str:
    """``airflow`` (the default) or ``none``. Anything else fails closed: it is logged as an
    error and read as ``airflow``, so a typo never opens the ledger nor stops the server."""
    from airflow_privacy.providers.airflow.config import setting

    raw = setting("ui_auth")  # $AIRFLOW_PRIVACY_UI_AUTH, else [privacy] ui_auth
    mode = (raw or "airflow").strip().lower()
    if mode not in AUTH_MODES:
        log.error(
            "%s=%r is not one of %s: authentication stays on (read as 'airflow')",
            AUTH_ENV,
            (raw or "")[:40],
            ", ".join(AUTH_MODES),
        )
        return "airflow"
    return mode


def airflow_connection(conn_id: str) -> ConnectionFields | None:
    """A connection as the API server sees it (Airflow's secrets backends and metadata
    database); None when it is not defined. A connection store that cannot be read is
    :class:`~airflow_privacy.errors.LedgerUnavailable` (retry later), never "not defined"."""
    from airflow.models.connection import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException

    from airflow_privacy.errors import LedgerUnavailable
    from airflow_privacy.ledger.location import ConnectionFields

    try:
        conn = Connection.get_connection_from_secrets(conn_id)
        extra = conn.extra_dejson or {}
        fields = ConnectionFields(
            conn_id=conn_id,
            host=conn.host,
            port=conn.port,
            schema=conn.schema,
            login=conn.login,
            password=conn.password,
            extra=extra if isinstance(extra, dict) else {},
        )
    except AirflowNotFoundException:
        return None
    except Exception as exc:  # the metadata database or a secrets backend is down
        log.warning("cannot read connection %r: %s", conn_id, type(exc).__name__, exc_info=True)
        raise LedgerUnavailable(
            f"Airflow's connection {conn_id!r} cannot be read now ({type(exc).__name__}); "
            "try again later"
        ) from None
    return fields


def ledger_location() -> LedgerLocation:
    """The ledger the UI reads (module doc): the one resolution of
    :func:`airflow_privacy.ledger.location.resolve`, over Airflow's connections."""
    from airflow_privacy.ledger.location import resolve
    from airflow_privacy.providers.airflow.config import setting

    return resolve(None, lookup=airflow_connection, config=setting)


def airflow_access() -> Callable[..., None]:
    """A FastAPI dependency: Airflow's authenticated user, authorized by the auth manager
    to GET the custom view ``Privacy Ledger`` (401 without a valid session or token, 403
    without the permission). Imports the API server's security module: call it there."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.core_api.security import get_user

    def require(user: Any = Depends(get_user)) -> None:  # noqa: B008  (FastAPI's idiom)
        allowed = get_auth_manager().is_authorized_custom_view(
            method="GET", resource_name=RESOURCE_NAME, user=user
        )
        if not allowed:
            raise HTTPException(status_code=403, detail="Forbidden")

    return require


# ----------------------------------------------------------------------------- reading
class NoLedger(Exception):
    """No ledger at the location yet (a missing SQLite file, a database without ledger
    tables): nothing has been recorded there."""

    def __init__(self, where: str) -> None:
        super().__init__(f"no ledger yet at {where}: nothing has been recorded there")
        self.where = where


_MISSING = ("holds no ledger yet", "does not exist: nothing has been recorded")


def _secrets(url: str) -> list[str]:
    """The passwords in a ledger URL (``user:pass@``, ``?password=``), to scrub from any
    message as a second line of defence (messages already use the masked URL)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # an unparsable URL: nothing we can pick out safely
        return []
    found = [str(parsed.password)] if parsed.password else []
    for key, value in parsed.query.items():
        if "pass" in key.lower() or "secret" in key.lower():
            found.extend([value] if isinstance(value, str) else list(value))
    return [s for s in found if s and len(s) >= 3]


def _scrub(text: str, secrets: Sequence[str]) -> str:
    for s in secrets:
        text = text.replace(s, "***")
    return text


class OutdatedLedger(Exception):
    """The ledger's schema is not this version's: the UI does not migrate it (a GET never
    runs DDL on the ledger). 503, without ``Retry-After``: waiting does not fix it."""


@contextmanager
def open_ledger(location: LedgerLocation) -> Iterator[ReleaseLedger]:
    """The ledger at ``location``, read-only and never migrated: :class:`NoLedger` when there
    is none yet (never created), :class:`OutdatedLedger` when its schema is not this
    version's."""
    from airflow_privacy.errors import InputError
    from airflow_privacy.ledger import ReleaseLedger
    from airflow_privacy.ledger.engine import sqlite_exists

    where = location.display
    try:
        exists = sqlite_exists(location.url)
    except InputError:
        exists = None  # not a URL we can read: opening says why
    if exists is False:
        raise NoLedger(where)
    try:
        db = ReleaseLedger(location.url, create=False, migrate=False, key_env=location.key_env)
    except InputError as exc:
        if any(m in str(exc) for m in _MISSING):
            raise NoLedger(where) from None
        raise
    with db:
        _check_schema(db, where)
        yield db


def _check_schema(db: ReleaseLedger, where: str) -> None:
    """Read the ledger's schema revision (no DDL): at this version's head, or why not."""
    from sqlalchemy import inspect

    from airflow_privacy.errors import InputError
    from airflow_privacy.ledger.engine import READ, classify, url_secrets
    from airflow_privacy.ledger.migrate import current, head, known_revisions

    try:
        with db.engine.connect().execution_options(**READ) as conn, conn.begin():
            has_tables = inspect(conn).has_table("ledger_releases")
            rev = current(conn)
    except Exception as exc:  # a database down, a file that is not a database
        mapped = classify(exc, db.url, url_secrets(db.engine.url))
        if mapped is None:
            raise
        raise mapped from None
    target = head()
    if rev == target:
        return
    if rev is None:
        if has_tables:
            raise InputError(
                f"{where} has tables named like a ledger's but no ledger revision: it is not "
                "a ledger airflow-privacy wrote"
            )
        raise NoLedger(where)
    if rev not in known_revisions():
        raise OutdatedLedger(
            f"the ledger at {where} is at schema revision {rev!r}, written by a newer "
            f"airflow-privacy than the API server's (newest known: {target!r}): upgrade "
            "airflow-privacy on the API server"
        )
    raise OutdatedLedger(
        f"the ledger at {where} is at schema revision {rev!r}, older than this "
        f"airflow-privacy's {target!r}: it must be migrated before the UI can read it, and "
        f"the UI never changes the ledger. Migrate it with {MIGRATE_HINT}"
    )
