"""Fields several steps declare alike (the sensitive column, benign values, blank sensitive
cells, the connection of URIs): one constructor each, so that every step spells and explains
them the same way."""

from __future__ import annotations

from airflow_privacy.gate.steps.fields import Field

BENIGN_HELP = (
    "a sensitive value whose disclosure is not a breach (e.g. 'none'): the criteria protect "
    "every other value and ignore this one as a target; a value absent from the release is "
    "noted, not an error"
)


def sensitive(help: str = "the sensitive column", *, required: bool = True) -> Field:
    return Field("sensitive", "column", help, required=required, metavar="COL",
                 type_hint="str" if required else "str | None")  # fmt: skip


def benign(help: str = BENIGN_HELP, *, aliases: tuple[str, ...] = ()) -> Field:
    return Field(
        "benign", "values", help, cli="--benign", airflow="benign_values", default=(),
        metavar="VALUE", dest="benign", aliases=aliases, type_hint="list[str]",
    )  # fmt: skip


def missing_as(note: str = "") -> Field:
    return Field(
        "missing_as", "text", "count blank sensitive cells as this value" + note + " (default: "
        "a blank sensitive cell is bad input)", cli="--missing-as", metavar="VALUE",
        type_hint="str | None",
    )  # fmt: skip


def conn(help: str = "the connection of URIs (s3://...)", *, cli: str | None = None) -> Field:
    """The connection of a step's URIs or SQL tables: ``conn_id`` in Airflow; on the command
    line ``--conn URL`` (in the input options, or the step's own when ``cli`` names it)."""
    return Field(
        "conn", "text", help, cli=cli, airflow="conn_id" if cli is None else None,
        metavar="URL", templated=False, type_hint="str | None",
    )  # fmt: skip


def release(help: str, *, required: bool = True, extra_note: str = "") -> Field:
    """A release read from a file, a URI or a SQL table: ``RELEASE`` on the command line
    (``table:NAME`` with ``--conn``), one of ``release`` and ``sql_table`` (with
    ``conn_id``) in Airflow."""
    return Field(
        "release", "ref", help, cli="RELEASE", required=required, type_hint="str | None",
        variants=("sql_table",), cli_note="table:SCHEMA.NAME with --conn URL" + extra_note,
        airflow_note="exactly one of release and sql_table (with conn_id)",
    )  # fmt: skip
