"""Where the ledger is: resolved in one place for the CLI, the operators' hook and the UI.

Order (the first that applies wins):

1. an explicit location: the CLI's ``--ledger URL``, or an operator's
   ``privacy_ledger_conn_id`` naming another connection than the default one (a connection
   that does not exist is an error, never a silent fallback);
2. the environment variable ``AIRFLOW_PRIVACY_LEDGER_URL``;
2b. the option ``ledger_url`` of Airflow's ``[privacy]`` configuration section (inside
   Airflow from its configuration, on the command line from its environment form
   ``AIRFLOW__PRIVACY__LEDGER_URL``);
2c. the connection named by the option ``ledger_conn_id`` of that section
   (``$AIRFLOW_PRIVACY_LEDGER_CONN_ID`` overrides it): one name for the organization's
   ledger; a connection named there that does not exist is an error, never a fallback;
3. the connection ``privacy_ledger_default``: inside Airflow from its connection store, on
   the command line from Airflow's environment form ``AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT``
   (JSON or URI), so that both see the same ledger;
4. the SQLite file ``privacy_ledger.db`` in ``$AIRFLOW_HOME`` (``~/airflow`` when unset,
   as Airflow itself defaults).

A location is a SQLAlchemy URL plus the environment variable that holds the key of
identifier hashes (a connection's ``hmac_key_env`` extra). Resolving never opens or creates
anything. Connection fields: ``host``/``port``/``schema`` (database)/``login``/``password``
for PostgreSQL; extras ``dialect`` (``postgresql``, the default, or ``sqlite``), ``path``
(the SQLite file), ``url`` (a full SQLAlchemy URL, overriding the rest), ``hmac_key_env``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from airflow_privacy.errors import InputError, opt

URL_ENV = "AIRFLOW_PRIVACY_LEDGER_URL"
DEFAULT_CONN_ID = "privacy_ledger_default"
CONN_ID_ENV = "AIRFLOW_PRIVACY_LEDGER_CONN_ID"
"""Overrides the ``[privacy] ledger_conn_id`` setting (the connection used when none is
named)."""
DEFAULT_FILE = "privacy_ledger.db"
CONN_TYPE = "privacyledger"  # RFC 3986 scheme: no "_" (Airflow warns on every read)
DEFAULT_KEY_ENV = "AIRFLOW_PRIVACY_LEDGER_KEY"


@dataclass(frozen=True)
class ConnectionFields:
    """The fields of an Airflow connection that name a ledger."""

    conn_id: str
    host: str | None = None
    port: int | None = None
    schema: str | None = None
    login: str | None = None
    password: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LedgerLocation:
    """A resolved ledger: its URL (text, password included: never print it; use
    :attr:`display`), where the choice came from, and the key's environment variable."""

    url: str
    source: str
    key_env: str = DEFAULT_KEY_ENV

    @property
    def display(self) -> str:
        from airflow_privacy.ledger.engine import safe_url

        return safe_url(self.url)


Lookup = Callable[[str], ConnectionFields | None]


def default_path() -> Path:
    home = os.environ.get("AIRFLOW_HOME") or str(Path.home() / "airflow")
    return Path(home) / DEFAULT_FILE


def resolve(
    explicit: str | None = None,
    *,
    conn_id: str | None = None,
    lookup: Lookup | None = None,
    config: Callable[[str], str | None] | None = None,
) -> LedgerLocation:
    """The ledger to use (module doc). ``explicit``: a URL or path given by the user;
    ``conn_id``: a connection named by the user; ``lookup``: the connection store (Airflow's;
    default: Airflow's environment form of connections, without importing Airflow);
    ``config``: the ``[privacy]`` options (Airflow's configuration; default: their
    environment form, :func:`env_setting`)."""
    find = lookup or env_connection
    if explicit is not None:
        text = str(explicit).strip()
        if not text:
            raise InputError(f"{opt('ledger')} is empty: give a file path or a database URL")
        return LedgerLocation(text, f"{opt('ledger')}")
    if conn_id and conn_id != DEFAULT_CONN_ID:
        fields = find(conn_id)
        if fields is None:
            raise InputError(
                f"ledger connection {conn_id!r} does not exist (define it, or leave "
                f"{opt('ledger')} at its default to use ${URL_ENV} / {DEFAULT_CONN_ID})"
            )
        return from_connection(fields)
    env = os.environ.get(URL_ENV, "").strip()
    if env:
        return LedgerLocation(env, f"${URL_ENV}")
    read = config or env_setting
    configured = read("ledger_url")
    if configured:
        return LedgerLocation(configured, "[privacy] ledger_url")
    named = os.environ.get(CONN_ID_ENV, "").strip() or read("ledger_conn_id")
    if named:  # the organization's connection: missing is an error, never a fallback
        fields = find(named)
        if fields is None:
            raise InputError(
                f"ledger connection {named!r} (the [privacy] ledger_conn_id setting) does "
                "not exist: define it, or change the setting"
            )
        return from_connection(fields)
    fields = find(DEFAULT_CONN_ID)
    if fields is not None:
        return from_connection(fields)
    return LedgerLocation(f"sqlite:///{default_path()}", "the default file ($AIRFLOW_HOME)")


def from_connection(fields: ConnectionFields) -> LedgerLocation:
    """A connection's ledger URL (module doc for the fields)."""
    extra = dict(fields.extra or {})
    key_env = str(extra.get("hmac_key_env") or DEFAULT_KEY_ENV)
    source = f"connection {fields.conn_id!r}"
    if extra.get("url"):
        return LedgerLocation(str(extra["url"]), source, key_env)
    dialect = str(extra.get("dialect") or "postgresql").strip().lower()
    if dialect == "sqlite":
        path = extra.get("path") or fields.host
        if not path:
            raise InputError(
                f"connection {fields.conn_id!r}: dialect sqlite needs the extra 'path'"
            )
        return LedgerLocation(f"sqlite:///{Path(str(path)).expanduser()}", source, key_env)
    if dialect not in ("postgresql", "postgres"):
        raise InputError(
            f"connection {fields.conn_id!r}: unknown ledger dialect {dialect!r} "
            "(postgresql or sqlite)"
        )
    from sqlalchemy.engine import URL

    if not fields.host:
        raise InputError(f"connection {fields.conn_id!r}: a PostgreSQL ledger needs a host")
    url = URL.create(
        "postgresql+psycopg",
        username=fields.login or None,
        password=fields.password or None,
        host=fields.host,
        port=fields.port or None,
        database=fields.schema or None,
    )
    return LedgerLocation(url.render_as_string(hide_password=False), source, key_env)


def env_setting(option: str) -> str | None:
    """An option of Airflow's ``[privacy]`` section in Airflow's environment form
    (``AIRFLOW__PRIVACY__<OPTION>``), read without importing Airflow (the command line)."""
    value = os.environ.get(f"AIRFLOW__PRIVACY__{option.upper()}", "").strip()
    return value or None


def env_connection(conn_id: str) -> ConnectionFields | None:
    """A connection defined the way Airflow reads one from the environment
    (``AIRFLOW_CONN_<ID>``, JSON or URI), parsed without importing Airflow."""
    raw = os.environ.get(f"AIRFLOW_CONN_{conn_id.upper()}")
    if not raw or not raw.strip():
        return None
    text = raw.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"AIRFLOW_CONN_{conn_id.upper()} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise InputError(f"AIRFLOW_CONN_{conn_id.upper()} is not a JSON object")
        extra = data.get("extra") or {}
        if isinstance(extra, str):
            try:
                extra = json.loads(extra) if extra.strip() else {}
            except json.JSONDecodeError:
                raise InputError(
                    f"the extra of AIRFLOW_CONN_{conn_id.upper()} is not valid JSON"
                ) from None
        return ConnectionFields(
            conn_id=conn_id,
            host=data.get("host"),
            port=_port(data.get("port"), conn_id),
            schema=data.get("schema"),
            login=data.get("login"),
            password=data.get("password"),
            extra=extra if isinstance(extra, dict) else {},
        )
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InputError(f"AIRFLOW_CONN_{conn_id.upper()} is not a connection URI: {exc}") from None
    query: dict[str, Any] = dict(parse_qsl(parts.query))
    if "__extra__" in query:
        try:
            query = json.loads(query["__extra__"])
        except json.JSONDecodeError:
            raise InputError(f"the extra of AIRFLOW_CONN_{conn_id.upper()} is not JSON") from None
    return ConnectionFields(
        conn_id=conn_id,
        host=unquote(parts.hostname) if parts.hostname else None,
        port=port,
        schema=unquote(parts.path.lstrip("/")) or None,
        login=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        extra=query if isinstance(query, dict) else {},
    )


def _port(value: Any, conn_id: str) -> int | None:
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InputError(f"connection {conn_id!r}: port {value!r} is not a number") from None
