"""The errors every layer raises, and what each front end makes of them.

One hierarchy, mapped once per front end (the CLI in :mod:`airflow_privacy.cli`, the
operators in :mod:`airflow_privacy.providers.airflow.adapter`):

=====================  =====================================  =========  ==================
error                  meaning                                CLI exit   Airflow task
=====================  =====================================  =========  ==================
:class:`ReleaseBlocked` a verdict: a check failed, the gate    1          fails, no retry
                       refused to publish
:class:`InputError`    bad input: a column, value, parameter  2          fails, no retry
                       or file the user got wrong
(any other exception)  a bug: never read as a verdict         3          fails (retries)
:class:`LedgerUnavailable` the ledger cannot be reached now,   4          fails, retried
                       a lock waited too long, a lost race
:class:`IllegalTransition` the ledger's state forbids the     5          fails, no retry
                       step (e.g. a decided attempt)
=====================  =====================================  =========  ==================

Messages name parameters through :func:`opt`, so that each front end shows them in its own
words: ``opt("id_column")`` reads ``--id-column`` on the command line and ``id_column`` in
Airflow (the operator's argument). A step's fields declare both spellings
(:mod:`airflow_privacy.gate.steps.fields`); the maps below cover the steps not declared that
way yet. The front end in effect is a context variable set by
each front end (:func:`speaking`); the default is the command line's.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

FrontEnd = Literal["cli", "airflow"]

EXIT_OK, EXIT_BLOCKED, EXIT_INPUT, EXIT_INTERNAL, EXIT_UNAVAILABLE, EXIT_TRANSITION = range(6)

_FRONT_END: contextvars.ContextVar[FrontEnd] = contextvars.ContextVar(
    "airflow_privacy_front_end", default="cli"
)
_MARK = re.compile(r"\x00opt:([A-Za-z0-9_\-]+)\x00")

# parameters whose name differs between the front ends beyond dashes and underscores
_AIRFLOW_NAMES: dict[str, str] = {
    "ledger": "privacy_ledger_conn_id",
    "group": "group_columns",
    "qi": "qis",
    "entity": "entity_column",
    "weight": "weight_column",
    "criterion": "criteria",
    "prior": "prior_files",
    "dataset": "datasets",
    "record": "dataset",
    "to": "publish_to",
    "out": "release",
    "input": "source",
    "point": "criteria (skyline points)",
    "c-threshold": "threshold",
    "hierarchy": "hierarchies",
    "interval": "intervals",
    "mask": "masks",
    "conn": "conn_id",
    "bucket": "bucket_column",
    "rule_width": "rule_widths",
    "benign": "benign_values",
    "report-out": "report_path",
}
_CLI_NAMES: dict[str, str] = {
    "c-threshold": "c",
    "report-out": "out",
}


def opt(name: str) -> str:
    """A parameter's name in a message, rendered by the front end that shows it."""
    return f"\x00opt:{name}\x00"


def _declared_spellings() -> dict[str, tuple[str | None, str | None]]:
    """The spellings the steps declare (:func:`airflow_privacy.gate.steps.fields.spellings`),
    read once; the maps above name the parameters of steps not declared that way yet."""
    global _SPELLINGS
    if _SPELLINGS is None:
        from airflow_privacy.gate.steps.fields import spellings

        _SPELLINGS = spellings()
    return _SPELLINGS


_SPELLINGS: dict[str, tuple[str | None, str | None]] | None = None


def render(text: str, front_end: FrontEnd | None = None) -> str:
    """``text`` with every :func:`opt` marker spelled for ``front_end`` (default: the one in
    effect)."""
    fe = front_end or _FRONT_END.get()

    declared = _declared_spellings()

    def spell(m: re.Match[str]) -> str:
        name = m.group(1)
        cli, airflow = declared.get(name, (None, None))
        if fe == "airflow":
            return airflow or _AIRFLOW_NAMES.get(name, name.replace("-", "_"))
        return cli or "--" + _CLI_NAMES.get(name, name).replace("_", "-")

    return _MARK.sub(spell, text)


@contextmanager
def speaking(front_end: FrontEnd) -> Iterator[None]:
    """Render messages in ``front_end``'s words inside the block."""
    token = _FRONT_END.set(front_end)
    try:
        yield
    finally:
        _FRONT_END.reset(token)


def front_end() -> FrontEnd:
    return _FRONT_END.get()


class PrivacyGateError(Exception):
    """Base of every error the project raises on purpose (module doc)."""

    exit_code: int = EXIT_INTERNAL
    retryable: bool = False
    kind: str = "error"

    def __str__(self) -> str:
        return render(super().__str__())


class InputError(PrivacyGateError, ValueError):
    """Bad input: the message names the column, value or parameter at fault."""

    exit_code = EXIT_INPUT
    kind = "bad input"


class LedgerMissing(InputError):
    """The ledger named does not exist (a missing SQLite file, a database without ledger
    tables): bad input, since reading never creates a ledger."""


class LedgerUnavailable(PrivacyGateError):
    """The ledger cannot be used right now (unreachable server, a lock held too long, a
    race lost to a concurrent writer): retrying later may succeed. Never a verdict and never
    bad input."""

    exit_code = EXIT_UNAVAILABLE
    retryable = True
    kind = "ledger unavailable"


class StorageUnavailable(LedgerUnavailable):
    """Writing the published files failed after the gate allowed the release (a full disk,
    an object store that refused): the ledger already counts the content as published and
    the attempt stays ``publishing``; running the publish step again copies the files."""

    kind = "storage unavailable"


class IllegalTransition(PrivacyGateError):
    """The ledger's state does not allow this step (recording a check on an attempt that was
    already decided, superseding a published attempt, ...)."""

    exit_code = EXIT_TRANSITION
    kind = "illegal transition"


class BudgetOverdrawn(PrivacyGateError):
    """OpenDP's privacy filter refused a query of a differentially private release: it would
    spend more than the budget left. The ledger reads it as a refusal (nothing recorded,
    nothing written); it never leaves the ledger's transaction."""

    exit_code = EXIT_BLOCKED
    kind = "blocked"


class ReleaseBlocked(PrivacyGateError):
    """A verdict: the release may not be published. ``envelope`` is the report (a
    :class:`airflow_privacy.gate.envelope.Envelope`) that says why."""

    exit_code = EXIT_BLOCKED
    kind = "blocked"

    def __init__(self, message: str, envelope: object | None = None) -> None:
        super().__init__(message)
        self.envelope = envelope
