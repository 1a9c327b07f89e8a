"""Pieces every ``airflow-privacy`` subcommand shares: parsing, progress, the gate context,
and showing an envelope. Importing this module imports no engine (the parser is built on
every start: ``--help`` and bad usage answer at once)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from airflow_privacy.errors import (
    EXIT_BLOCKED,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
)

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef

EXIT_SAFE, EXIT_UNSAFE = EXIT_OK, EXIT_BLOCKED
__all__ = ["EXIT_INPUT", "EXIT_INTERNAL", "EXIT_SAFE", "EXIT_UNSAFE"]

LEDGER_HELP = (
    "the ledger: a file path, sqlite:///PATH or postgresql+psycopg://USER:PASS@HOST/DB "
    "(default: $AIRFLOW_PRIVACY_LEDGER_URL, else the connection privacy_ledger_default "
    "from $AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT, else $AIRFLOW_HOME/privacy_ledger.db)"
)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {one_line(message)}\n")
        raise SystemExit(EXIT_INPUT)


class Progress:
    """Timestamped progress lines on stderr (stdout stays clean for JSON)."""

    def __init__(self, quiet: bool, stream: TextIO | None = None) -> None:
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()

    def __call__(self, message: str) -> None:
        if not self.quiet:
            elapsed = time.perf_counter() - self.start
            self.stream.write(f"[{elapsed:6.2f}s] {clean(message)}\n")
            self.stream.flush()


def clean(text: str) -> str:
    """Text for a terminal: control characters (escape sequences) shown, not obeyed."""
    return "".join(
        ch
        if ch in "\n\t" or (ord(ch) >= 32 and ord(ch) != 127 and not 0x80 <= ord(ch) < 0xA0)
        else f"\\x{ord(ch):02x}"
        for ch in text
    )


def one_line(text: str) -> str:
    """:func:`clean` text on one line: line breaks shown as ``\\n`` (an error is one line
    on stderr, whatever names or values it quotes)."""
    return clean(text).replace("\r", "\\r").replace("\n", "\\n")


def number(kind: type[int] | type[float], name: str) -> Any:
    """argparse ``type=`` that names the option in its error."""

    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {text!r}") from None
        if isinstance(value, float) and value != value:
            raise argparse.ArgumentTypeError(f"{name} must be a number, got {text!r}")
        return value

    return parse


def boolean(text: str) -> bool:
    low = text.lower()
    if low in ("true", "yes", "1"):
        return True
    if low in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def add_output_args(p: argparse.ArgumentParser, json: str = "the report envelope") -> None:
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help=f"text (default) or json: {json}")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")


def add_input_args(p: argparse.ArgumentParser, *, tables: bool = True) -> None:
    """--input-format, --delimiter and, for a command whose step reads SQL tables,
    --conn (the others refuse ``table:NAME``: :func:`ref`)."""
    p.add_argument(
        "--input-format", choices=("csv", "parquet"), default=None,
        help="file format (default: from the extension)",
    )  # fmt: skip
    p.add_argument("--delimiter", default=None, help="CSV delimiter (default: detected)")
    if tables:
        p.add_argument(
            "--conn", default=None, metavar="URL",
            help="database URL of a table:SCHEMA.NAME reference (the GROUP BY runs there)",
        )  # fmt: skip


def add_ledger_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ledger", metavar="URL", default=None, help=LEDGER_HELP)


def add_attempt_args(p: argparse.ArgumentParser, step: str) -> None:
    """``--attempt UUID --name NAME``: record the envelope as a check of an attempt."""
    p.add_argument(
        "--attempt", metavar="UUID", default=None,
        help="record the result in the ledger as a check of this attempt "
        "(from `airflow-privacy attempt`); a decided attempt takes no more checks",
    )  # fmt: skip
    p.add_argument(
        "--name", default=step, metavar="NAME",
        help=f"the check's name within the attempt (default: {step})",
    )  # fmt: skip
    add_ledger_arg(p)


def add_missing_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--missing-as", default=None, metavar="VALUE",
        help="publish blank sensitive cells as VALUE (default: blank cells are an error)",
    )  # fmt: skip


def ref(text: str, args: argparse.Namespace) -> ReleaseRef:
    """A positional RELEASE as a reference (path, URI, or table:NAME with --conn; a command
    without --conn reads files only and refuses table:NAME)."""
    from airflow_privacy.gate.refs import ReleaseRef

    return ReleaseRef.parse(text, getattr(args, "conn", None), tables=hasattr(args, "conn"))


def population_ref(args: argparse.Namespace) -> ReleaseRef | None:
    """``--population``: a file or URI, or ``table:NAME`` on ``--conn`` (its identifiers are
    hashed in the database)."""
    from airflow_privacy.gate.refs import ReleaseRef

    if args.population is None:
        return None
    if str(args.population).startswith("table:"):
        return ref(args.population, args)
    return ReleaseRef(path=args.population)


# --------------------------------------------------------------- criteria, hierarchies
def criterion_flags() -> list[tuple[str, Any]]:
    """``(parameter name, its declaration)`` of every flag :func:`add_criterion_flags` adds:
    one per parameter name over the built-in criteria (generated from their classes)."""
    from airflow_privacy.core.criteria.registry import flags

    return [(name, p) for name, (p, _) in flags().items()]


def add_criterion_flags(p: argparse.ArgumentParser) -> None:
    """The parameter flags of a single ``--criterion`` given without parameters (``--k``,
    ``--l``, ``--c``, ``--t``, ``--ordered``, ``--point``, ...), generated from the
    criteria's parameter declarations: a flag per parameter name, its type from the kind
    (a real number when any criterion takes a real one), its help naming the criteria that
    use it."""
    from airflow_privacy.core.criteria.base import Kind
    from airflow_privacy.core.criteria.registry import CRITERIA, flags

    for name, (param, users) in flags().items():
        sentences = list(dict.fromkeys(
            d.help for cls in CRITERIA.values() if cls.name in users
            if (d := cls.parameter(name)) is not None
        ))  # fmt: skip
        text = f"{name} ({', '.join(users)}): {'; or '.join(sentences)}"
        flag = f"--{param.option}"
        if param.kind is Kind.POINTS:
            p.add_argument(flag, action="append", default=None, dest=name, metavar="l,k,m,c",
                           help=f"{text} (repeat for several)")  # fmt: skip
        elif param.kind is Kind.BOOLEAN:
            p.add_argument(flag, type=boolean, default=None, dest=name, help=text)
        elif param.kind is Kind.CHOICE:
            p.add_argument(flag, choices=param.choices, default=None, dest=name, help=text)
        elif param.kind is Kind.TEXT:
            p.add_argument(flag, default=None, dest=name, metavar="VALUE", help=text)
        else:
            kind = int if param.kind is Kind.WHOLE else float
            p.add_argument(flag, type=number(kind, flag), default=None, dest=name, help=text)


def criteria_with_shorthand(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """The criteria of ``--criterion NAME[:PARAM=VALUE,...]`` (repeatable), with the
    parameter flags of :func:`add_criterion_flags` (``--k``, ``--l``, ``--c``, ``--t``,
    ``--ordered``, ``--point``) as the parameters of a single bare name (check, anonymize,
    audit-algorithm)."""
    from airflow_privacy.errors import InputError
    from airflow_privacy.gate.criteria import parse_spec

    parsed = [parse_spec(s) for s in getattr(args, "criteria", None) or []]
    declared = criterion_flags()
    shorthand = {k: getattr(args, k) for k, _ in declared if getattr(args, k, None) is not None}
    if shorthand:
        if len(parsed) != 1 or parsed[0][1]:
            option = {k: p.option for k, p in declared}
            used = " ".join(f"--{option[k]}" for k in shorthand)
            raise InputError(
                f"{used} apply to a single --criterion given without parameters; "
                "with several criteria write NAME:PARAM=VALUE,..."
            )
        parsed = [(parsed[0][0], shorthand)]
    return parsed


def column_pairs(
    option: str, specs: list[str] | None, form: str = "COL=FILE", need_value: bool = True
) -> dict[str, str]:
    """``--OPTION COL=VALUE`` (repeatable; ``form`` as the usage shows it) as
    ``{col: value}``: both sides stripped, neither empty (``COL`` alone when not
    ``need_value``: value ``""``), a column at most once (a repeated column is refused, not
    silently replaced)."""
    from airflow_privacy.errors import InputError

    out: dict[str, str] = {}
    for text in specs or []:
        col, eq, val = text.partition("=")
        col, val = col.strip(), val.strip()
        if not col or (need_value and (not eq or not val)):
            raise InputError(f"--{option} expects {form}, got {text!r}")
        if col in out:
            raise InputError(f"--{option} is given twice for column {col!r}")
        out[col] = val
    return out


def context(args: argparse.Namespace) -> GateContext:
    from airflow_privacy.gate.context import GateContext

    return GateContext(progress=Progress(bool(getattr(args, "quiet", False))))


def write_json(payload: Any, out: TextIO) -> None:
    from airflow_privacy.serialization import json_safe

    json.dump(json_safe(payload), out, indent=2, allow_nan=False)
    out.write("\n")


def emit(
    env: Envelope,
    args: argparse.Namespace,
    out: TextIO,
    text: Callable[[Envelope], str],
    code: int | None = None,
) -> int:
    """Show the envelope (``--format json``: the envelope itself; text: ``text(env)``) and
    return the exit code: 1 when its verdict is False, else 0 (or ``code``)."""
    if getattr(args, "format", "text") == "json":
        write_json(env.to_dict(), out)
    else:
        out.write(clean(text(env)))
    if code is not None:
        return code
    return EXIT_UNSAFE if env.safe is False else EXIT_SAFE


def wrap(text: str, width: int = 88, indent: int = 11) -> str:
    """Text folded to ``width`` with continuation lines indented."""
    import textwrap

    lines = textwrap.wrap(text, width=width - indent, break_long_words=False) or [""]
    return ("\n" + " " * indent).join(lines)


# ------------------------------------------------------------------ explorations
def add_release_args(p: argparse.ArgumentParser) -> None:
    """RELEASE, --sensitive, --group..., --missing-as, input options, --format, --quiet
    (the exploration commands: disclosure, skyline)."""
    p.add_argument("release", metavar="RELEASE", help="the release (file, URI or table:NAME)")
    p.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    p.add_argument(
        "--group", action="append", required=True, metavar="COL", dest="groups",
        help="a column that defines the QI-groups (repeat for several)",
    )  # fmt: skip
    add_missing_arg(p)
    add_input_args(p)
    add_output_args(p)


def load_bucketization(args: argparse.Namespace, progress: Progress) -> Any:
    """Read the release named by :func:`add_release_args` and count it (through the gate's
    readers: the same checks of the input as every other command)."""
    from airflow_privacy.core.model import ReleaseSpec
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.tables import read_counts

    spec = ReleaseSpec(sensitive=args.sensitive, group_columns=tuple(args.groups))
    ctx = GateContext(progress=progress)
    b = read_counts(ref(args.release, args), spec, ctx, fmt=args.input_format,
                    delimiter=args.delimiter, missing_as=args.missing_as)  # fmt: skip
    progress(f"{b.n_records:,} records in {b.n_groups:,} groups, {len(b.values)} sensitive values")
    return b


def release_info(args: argparse.Namespace, b: Any) -> dict[str, Any]:
    return {"path": str(args.release), "records": b.n_records, "groups": b.n_groups}
