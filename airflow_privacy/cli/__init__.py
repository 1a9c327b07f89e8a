"""The ``airflow-privacy`` command: a thin adapter over the gate layer
(:mod:`airflow_privacy.gate`): it parses arguments into the services' requests and shows the
report envelope they return.

Exit codes: 0 = safe / pass / published, 1 = unsafe / blocked (a verdict), 2 = bad input or
usage (a one-line reason on stderr, nothing written), 3 = internal error (a bug: one line
on stderr naming the exception's type and where it was raised, never its message, which can
quote cell values; with ``AIRFLOW_PRIVACY_DEBUG=1`` also the full traceback; never
confused with a verdict), 4 = the ledger is unavailable (unreachable, locked too long, a
lost race: try again), 5 = an illegal transition (the ledger's state forbids the step).
``--format json`` prints the envelope on stdout; progress goes to stderr (silence it with
``--quiet``).

Each subcommand is a module of this package with ``NAME``, ``register(subparsers)`` and
``run(args, out) -> exit code``; :data:`COMMANDS` lists them.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import TextIO

from airflow_privacy import __version__
from airflow_privacy.cli.common import EXIT_INPUT, EXIT_INTERNAL, Parser, one_line
from airflow_privacy.errors import PrivacyGateError, ReleaseBlocked, speaking

COMMANDS = (
    "airflow_privacy.cli.check",
    "airflow_privacy.cli.disclosure",
    "airflow_privacy.cli.demo",
    "airflow_privacy.cli.anonymize",
    "airflow_privacy.cli.ledger",
    "airflow_privacy.cli.audit",
    "airflow_privacy.cli.maxent",
    "airflow_privacy.cli.risk",
    "airflow_privacy.cli.skyline",
    "airflow_privacy.cli.audit_algorithm",
    "airflow_privacy.cli.report",
    "airflow_privacy.cli.attempt",
    "airflow_privacy.cli.publish",
    "airflow_privacy.cli.policy",
    "airflow_privacy.cli.dp_release",
    "airflow_privacy.cli.record_check",
)


def _modules(command: str | None = None) -> list[ModuleType]:
    """The subcommands' modules: only ``command``'s when it names one (a run of a command
    builds its own parser, not the thirteen others'), else all of them."""
    names = [m for m in COMMANDS if _command(m) == command] or list(COMMANDS)
    return [importlib.import_module(name) for name in names]


def _command(module: str) -> str:
    """The command a module of :data:`COMMANDS` registers (``audit_algorithm`` is
    ``audit-algorithm``)."""
    return module.rpartition(".")[2].replace("_", "-")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or only of ``command`` (a name of :data:`COMMANDS`;
    anything else builds all, so that ``--help`` and a misspelt command list every one)."""
    parser = Parser(
        prog="airflow-privacy",
        description="Decide whether a table may be published: worst-case background "
        "knowledge, classic criteria.",
    )
    parser.add_argument("--version", action="version", version=f"airflow-privacy {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for module in _modules(command):
        module.register(sub)
    return parser


GC_THRESHOLD = 50_000
"""The cyclic garbage collector's first-generation threshold in an ``airflow-privacy``
process (:func:`console`; Python's default is 700). A command allocates its containers in
bulk and frees them at exit (the imports' modules and functions; a table's 100,000 group
label tuples), and at 700 the collector ran about every 700 of them, walking the older ones
again and again: 30-90 ms of a 0.55 s (c,k)-safety check (docs/benchmarks.md). Cyclic
garbage is still collected, 50,000 allocations later. :func:`main` itself leaves the
threshold alone: it also runs inside other processes (the tests, an Airflow worker)."""


def console() -> int:
    """The ``airflow-privacy`` command (``[project.scripts]``) and ``python -m
    airflow_privacy.cli``: a process of its own, so the garbage collector is set for it
    (:data:`GC_THRESHOLD`) before the work starts; then :func:`main`."""
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    return main()


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point; returns the exit code (also used by the tests)."""
    stream = out or sys.stdout
    words = list(sys.argv[1:] if argv is None else argv)
    # the top level has no option that takes a value: the first word is the command
    parser = build_parser(next((w for w in words if not w.startswith("-")), None))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else EXIT_INPUT
    undecodable = _not_utf8(parser, args)
    if undecodable is not None:
        sys.stderr.write(
            f"airflow-privacy: error: {undecodable} holds bytes that are not UTF-8 text; "
            "give it as UTF-8\n"
        )
        return EXIT_INPUT
    runners = {m.NAME: m.run for m in _modules(args.command)}
    try:
        with speaking("cli"):
            code: int = runners[args.command](args, stream)
        return code
    except ReleaseBlocked as exc:
        sys.stderr.write(f"airflow-privacy: blocked: {one_line(str(exc))}\n")
        return exc.exit_code
    except PrivacyGateError as exc:
        with speaking("cli"):
            message = one_line(str(exc))
        label = "error" if exc.exit_code == EXIT_INPUT else exc.kind
        sys.stderr.write(f"airflow-privacy: {label}: {message}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("airflow-privacy: interrupted\n")
        return 130
    except BrokenPipeError:
        # the reader went away (``| head``): stop quietly, as other Unix tools do; point
        # stdout at devnull so the interpreter's final flush does not raise again
        if out is None:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:  # a bug: say so, and do not let it read as "unsafe" (exit 1)
        # the message (and the traceback, which repeats it) can quote cell values: one line
        # with the type and the place by default; the traceback with AIRFLOW_PRIVACY_DEBUG=1
        debug = os.environ.get(DEBUG_ENV, "").strip() not in ("", "0")
        if debug:
            traceback.print_exc(file=sys.stderr)
        hint = "" if debug else f" (set {DEBUG_ENV}=1 for the traceback)"
        sys.stderr.write(
            f"airflow-privacy: internal error (a bug, not a verdict): "
            f"{type(exc).__name__} at {where(exc)}{hint}\n"
        )
        return EXIT_INTERNAL


def _not_utf8(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str | None:
    """The first argument (as the command line names it: ``--dataset``, ``RELEASE``) whose
    text came from bytes that are not UTF-8 (Python keeps them as lone surrogates, which no
    database, JSON document or terminal can take), or None."""

    def bad(value: object) -> bool:
        if isinstance(value, str):
            return any("\ud800" <= ch <= "\udfff" for ch in value)
        if isinstance(value, (list, tuple)):
            return any(bad(v) for v in value)
        return False

    actions: list[argparse.Action] = []
    todo = [parser]
    while todo:  # the command's parser, and a subcommand's (``policy set``)
        current = todo.pop()
        for action in current._actions:
            actions.append(action)
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(str(getattr(args, action.dest, None) or ""))
                if chosen is not None:
                    todo.append(chosen)
    for action in actions:
        if action.dest and bad(getattr(args, action.dest, None)):
            if action.option_strings:
                return max(action.option_strings, key=len)
            return str(action.metavar or action.dest.upper())
    return None


#: Set to 1 to print the traceback of an internal error (it can quote cell values).
DEBUG_ENV = "AIRFLOW_PRIVACY_DEBUG"


def where(exc: BaseException) -> str:
    """``file:line`` of the innermost frame that raised ``exc`` (paths from the package
    down, other files by name), and the innermost frame of this package when that is a
    different one: ``a.py:3 (called from airflow_privacy/core/b.py:40)``."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "an unknown place"

    def name(f: traceback.FrameSummary) -> tuple[str, bool]:
        parts = f.filename.replace("\\", "/").split("/")
        if "airflow_privacy" in parts:
            at = len(parts) - 1 - parts[::-1].index("airflow_privacy")
            return f"{'/'.join(parts[at:])}:{f.lineno}", True
        return f"{parts[-1]}:{f.lineno}", False

    last, ours = name(frames[-1])
    if ours:
        return last
    for f in reversed(frames):
        text, inside = name(f)
        if inside:
            return f"{last} (called from {text})"
    return last
