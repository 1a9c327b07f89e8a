"""The ``privacyledger`` connection type's form (no Airflow import: read by
``get_provider_info``). Airflow 3 renders these from provider metadata; no deprecated
form widgets."""

from __future__ import annotations

from typing import Any

CONN_FIELDS: dict[str, Any] = {
    "dialect": {
        "label": "Dialect",
        "schema": {
            "type": ["string", "null"],
            "default": "postgresql",
            "enum": ["postgresql", "sqlite"],
        },
        "description": "postgresql (host, port, schema = database, login, password) or sqlite",
    },
    "path": {
        "label": "SQLite file",
        "schema": {"type": ["string", "null"]},
        "description": "the ledger file when the dialect is sqlite",
    },
    "url": {
        "label": "SQLAlchemy URL",
        "schema": {"type": ["string", "null"]},
        "description": "a full SQLAlchemy URL; overrides the other fields",
    },
    "hmac_key_env": {
        "label": "Identifier key variable",
        "schema": {"type": ["string", "null"]},
        "description": "environment variable with the HMAC key for identifier hashes",
    },
}
UI_FIELD_BEHAVIOUR: dict[str, Any] = {
    "hidden-fields": ["extra"],
    "relabeling": {"schema": "Database"},
    "placeholders": {"host": "postgres.internal", "schema": "privacy_ledger", "port": "5432"},
}
