"""A step's fields, declared once: what each front end derives from.

A :class:`Field` says what one input of a step is (its kind, range, default, whether it is
templated), how each front end spells it (a command-line flag or positional, an operator
argument), and one help sentence. From the declarations of a step
(:mod:`airflow_privacy.gate.steps.base`):

* the command line builds its subparser (:mod:`airflow_privacy.cli.steps`);
* the operators check their arguments when the DAG is parsed and when the task runs
  (:mod:`airflow_privacy.providers.airflow.steps`);
* messages name a field in the words of the front end that shows them
  (:func:`airflow_privacy.errors.opt` reads :func:`spellings`);
* the reference tables of ``docs/`` are generated (:mod:`airflow_privacy.reference_docs`),
  and a test fails when a page and its declaration drift apart.

This module imports no engine (the command line builds its parser from it on every start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal[
    "ref",  # a table reference: a file, URI, table:NAME (with --conn) or spark:NAME on the CLI
    "text",  # free text
    "column",  # one column name
    "columns",  # a non-empty list of column names (a repeated flag on the CLI)
    "values",  # a list of values (text), possibly empty (a repeated flag on the CLI)
    "choice",  # one of ``choices``
    "number",  # a real number in [low, high]
    "whole",  # a whole number in [low, high]
    "flag",  # true or false
    "criteria",  # a list of criteria (``NAME:PARAM=VALUE,...`` or mappings)
    "wholes",  # a list of whole numbers in [low, high] (a repeated flag on the CLI)
    "label",  # a name the ledger stores (dataset, version, check): text, at most 255 characters
    "files",  # {column: file} (``--FLAG COL=FILE``, repeated, on the CLI; a mapping in Airflow)
    "refs",  # a list of table references (a repeated flag on the CLI; a list of paths in Airflow)
    "intervals",  # {column: [width, ...]} (``--FLAG COL=W1,W2,...`` repeated on the CLI)
    "masks",  # {column: depth or None} (``--FLAG COL[=DEPTH]`` repeated on the CLI)
    "options",  # a mapping of named options (Airflow only: the CLI has a flag for each)
]

#: what each operator argument a ``ref`` field may stand for besides its own name (a path or
#: URI) holds: a table on the SQL connection ``conn_id``, a table of the Spark catalog
REF_VARIANTS: dict[str, str] = {
    "sql_table": "a table (`schema.name`) on the SQL connection `conn_id`, counted in the database",
    "spark_table": "a table of the Spark catalog (`db.name`), counted by Spark; no attempt",
}


def variant_kind(name: str) -> str:
    """What a ``ref`` field's variant argument names: ``spark_table`` (any argument ending so,
    e.g. ``source_spark_table``) or ``sql_table`` (any other, e.g. ``release_table``)."""
    return "spark_table" if name.endswith("spark_table") else "sql_table"


@dataclass(frozen=True)
class Field:
    """One input of a step (module doc).

    ``key`` names it in the step's values and in messages (``opt(key)``); ``cli`` is its
    flag (``"--group"``), a positional's metavar (``"RELEASE"``), ``""`` for ``--KEY`` or
    None when the command line does not have it; ``airflow`` is the operator argument
    (``""``: the key with underscores; None: the operators do not have it).
    """

    key: str
    kind: Kind
    help: str
    cli: str | None = ""
    airflow: str | None = ""
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    templated: bool = True
    metavar: str | None = None
    dest: str | None = None
    """The attribute of the parsed command line (default: the key with underscores)."""
    type_hint: str = ""
    """The operator argument's type as its signature declares it (the docs show it)."""
    cli_note: str = ""
    """A sentence only the command line's help has."""
    airflow_note: str = ""
    """A sentence only the operator's docs have."""
    variants: tuple[str, ...] = ()
    """A ``ref`` that the operators take as exactly one of several arguments: a path or URI
    under its own name, or one of these (:data:`REF_VARIANTS`: ``sql_table``,
    ``spark_table``). On the command line the reference's prefix says which
    (``table:NAME``, ``spark:NAME``)."""
    variant_help: tuple[str, ...] = ()
    """What each of ``variants`` holds, in the docs (default: :data:`REF_VARIANTS`)."""
    conn_arg: str = "conn_id"
    """The operator argument holding the connection of a ``ref``'s URI (and of its SQL table
    variant unless ``table_conn_arg`` says otherwise)."""
    table_conn_arg: str = ""
    """The operator argument holding the connection of a ``ref``'s SQL table variant, when
    it is not ``conn_arg`` (a release table is written in the database of the input)."""
    negatable: bool = False
    """A ``flag`` the command line spells ``--NAME`` / ``--no-NAME``."""
    exclusive: str = ""
    """Fields sharing this name are mutually exclusive: at most one is given (a mutually
    exclusive group on the command line, a rule in Airflow)."""
    open_low: bool = False
    open_high: bool = False
    aliases: tuple[str, ...] = ()
    """Other command-line spellings of the flag (kept for earlier scripts)."""
    explicit: bool = False
    """The operator has no default for it: a DAG must say the value (None included), so
    that leaving it out is never a silent choice (e.g. MaxEnt's ``threshold``)."""
    airflow_default: Any = None
    """The operator's default when the command line has none (the command line requires
    ``--method``; ``AnonymizeLatticeOperator`` defaults to ``lattice``)."""
    airflow_required: bool = False
    """The operator requires it (no default) though the command line may leave it out."""
    noun: str = ""
    """What each element of a list names, in messages (default: a column name)."""
    unique: bool = False
    """A list whose elements must differ."""
    store_false: bool = False
    """A ``flag`` that is true by default and the command line turns off with its flag
    (``--no-ledger`` for ``use_ledger``)."""
    parse: Callable[[str], Any] | None = None
    """How the command line reads the text of the flag (a ``ValueError`` names what is
    wrong), when its kind's reading is not enough (``--confidence 50%``)."""

    @property
    def flag(self) -> str | None:
        """The command-line spelling (``--group``, or a positional's ``RELEASE``)."""
        if self.cli is None:
            return None
        return self.cli or "--" + self.key.replace("_", "-")

    @property
    def table_conn(self) -> str:
        """The operator argument holding the connection of the SQL table variant."""
        return self.table_conn_arg or self.conn_arg

    @property
    def positional(self) -> bool:
        return self.flag is not None and not self.flag.startswith("-")

    @property
    def argument(self) -> str | None:
        """The operator argument's name."""
        if self.airflow is None:
            return None
        return self.airflow or self.key.replace("-", "_")

    @property
    def attr(self) -> str:
        """Where the parsed command line keeps the value."""
        return self.dest or self.key.replace("-", "_")

    @property
    def repeated(self) -> bool:
        """A list: on the command line, a flag given once per element."""
        return self.kind in (
            "columns", "values", "criteria", "wholes", "files", "refs", "intervals", "masks"
        )  # fmt: skip

    def range_text(self) -> str:
        """The valid values in words (docs and help)."""
        if self.kind == "choice":
            return "one of " + ", ".join(f"`{c}`" for c in self.choices)
        if self.kind in ("number", "whole") and (self.low is not None or self.high is not None):
            whole = self.kind == "whole"
            lo = "-inf" if self.low is None else _end(self.low, whole)
            hi = "inf" if self.high is None else _end(self.high, whole)
            left = "(" if self.open_low or self.low is None else "["
            right = ")" if self.open_high or self.high is None else "]"
            what = "a whole number" if self.kind == "whole" else "a number"
            return f"{what} in {left}{lo}, {hi}{right}"
        if self.kind == "flag":
            return "true or false"
        return ""


def _end(x: float, whole: bool) -> str:
    """A range's end in the docs: a whole number in full (``4294967295``)."""
    return str(int(x)) if whole else f"{x:g}"


def spellings() -> dict[str, tuple[str | None, str | None]]:
    """``{key: (command-line flag, operator argument)}`` over every declared step (a key
    is spelled the same way wherever a front end has it; a step whose front end lacks it
    leaves it None)."""
    from airflow_privacy.gate.steps import STEPS

    out: dict[str, tuple[str | None, str | None]] = {}
    for step in STEPS.values():
        for f in step.fields:
            cli, airflow = out.get(f.key, (None, None))
            out[f.key] = (cli or f.flag, airflow or f.argument)
    return out
