"""A command's parser and its values, derived from its step's declaration
(:mod:`airflow_privacy.gate.steps`): one loop over the fields, the shared option groups
after them. Importing this module imports no engine."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from airflow_privacy.cli.common import (
    add_attempt_args,
    add_criterion_flags,
    add_input_args,
    add_ledger_arg,
    add_output_args,
    column_pairs,
    criteria_with_shorthand,
    number,
    ref,
)

if TYPE_CHECKING:
    from airflow_privacy.gate.steps.base import Step
    from airflow_privacy.gate.steps.fields import Field


def help_text(f: Field) -> str:
    """A field's help on the command line: its sentence, the command line's note, the
    default."""
    text = f.help
    if f.cli_note:
        text += f"; {f.cli_note}"
    if f.repeated and not f.positional:
        text += " (repeat for several)"
    if f.kind == "choice" and f.default is not None:
        text += f" (default: {f.default})"
    elif f.kind in ("number", "whole") and f.default is not None:
        text += f" (default: {f.default:g})"
    elif f.kind == "flag" and f.negatable:
        text += f" (default: {'on' if f.default else 'off'})"
    if f.kind == "criteria":
        from airflow_privacy.core.criteria.registry import CRITERIA

        text += f". Names: {', '.join(CRITERIA)}"
    return text


def add_field(p: Any, f: Field) -> None:
    """One field as an argument of ``p`` (a parser or a mutually exclusive group)."""
    flag = f.flag
    assert flag is not None
    if f.positional:
        extra: dict[str, Any] = {} if f.required else {"nargs": "?", "default": None}
        p.add_argument(f.attr, metavar=flag, help=help_text(f), **extra)
        return
    kw: dict[str, Any] = {"dest": f.attr, "help": help_text(f)}
    if f.metavar is not None and f.kind != "flag":
        kw["metavar"] = f.metavar
    if f.repeated:
        kw["action"] = "append"
        kw["default"] = [] if not f.required and f.default is not None else None
        kw["required"] = f.required
        if f.kind == "wholes":
            kw["type"] = number(int, flag)
    elif f.kind == "flag":
        if f.store_false:
            kw["action"] = "store_false"
        else:
            kw["action"] = argparse.BooleanOptionalAction if f.negatable else "store_true"
        kw["default"] = bool(f.default)
    elif f.kind == "choice":
        kw["choices"] = f.choices
        kw["default"] = f.default
        kw["required"] = f.required
    elif f.kind in ("number", "whole"):
        kw["type"] = number(int if f.kind == "whole" else float, flag)
        kw["default"] = f.default
        kw["required"] = f.required
    else:
        kw["default"] = f.default
        kw["required"] = f.required
    if f.parse is not None:
        kw["type"] = _parsed(f.parse)
    p.add_argument(flag, *f.aliases, **kw)


def _parsed(parse: Any) -> Any:
    """argparse ``type=`` from a field's reader (its ``ValueError`` is the message)."""

    def read(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return read


def register(sub: Any, step: Step, name: str | None = None) -> argparse.ArgumentParser:
    """The subcommand of ``step`` (called ``name``, default the step's: ``policy set`` is
    the policy step's): its fields, then its shared option groups."""
    from airflow_privacy.cli.report_option import add_report_arg

    p: argparse.ArgumentParser = sub.add_parser(
        name or step.name, help=step.summary, description=step.description
    )
    exclusive: dict[str, Any] = {}
    for f in step.fields:
        if f.flag is None:
            continue
        target: Any = p
        if f.exclusive:
            if f.exclusive not in exclusive:
                exclusive[f.exclusive] = p.add_mutually_exclusive_group()
            target = exclusive[f.exclusive]
        add_field(target, f)
        if f.kind == "criteria" and "criterion-flags" in step.cli_groups:
            add_criterion_flags(p)
    groups = step.cli_groups
    if "input" in groups:
        add_input_args(p)
    elif "input-files" in groups:
        add_input_args(p, tables=False)
    if "attempt" in groups:
        add_attempt_args(p, step.name)
    elif "ledger" in groups:
        add_ledger_arg(p)
    if "report" in groups:
        add_report_arg(p)
    if "output" in groups:
        add_output_args(p, json=step.json_output)
    return p


def values(step: Step, args: argparse.Namespace) -> dict[str, Any]:
    """The parsed command line as the step's values by field key (references resolved,
    the criteria with their flag shorthand), plus the shared ones (``attempt``, ``name``,
    ``ledger``, ``input_format``, ``delimiter``)."""
    out: dict[str, Any] = {}
    for f in step.fields:
        if f.flag is None:
            continue
        value = getattr(args, f.attr)
        if f.kind == "ref" and value is not None:
            value = ref(value, args)
        elif f.kind == "refs":
            value = [ref(v, args) for v in value or []]
        elif f.kind == "files":
            value = column_pairs(str(f.flag).lstrip("-"), value, "COL=FILE")
        elif f.kind == "intervals":
            value = interval_specs(str(f.flag).lstrip("-"), value)
        elif f.kind == "masks":
            value = mask_specs(str(f.flag).lstrip("-"), value)
        elif f.kind == "criteria":
            value = criteria_with_shorthand(args)
        out[f.key] = value
    for shared in ("attempt", "name", "ledger", "input_format", "delimiter", "conn"):
        if hasattr(args, shared):
            out[shared] = getattr(args, shared)
    return out


def interval_specs(option: str, specs: list[str] | None) -> dict[str, list[int]]:
    """``--OPTION COL=W1,W2,...`` (repeated) as ``{col: [widths]}``."""
    from airflow_privacy.errors import InputError

    out: dict[str, list[int]] = {}
    for col, widths in column_pairs(option, specs, "COL=W1,W2,...").items():
        try:
            out[col] = [int(w) for w in widths.split(",")]
        except ValueError:
            raise InputError(
                f"--{option} {col + '=' + widths!r}: widths must be whole numbers"
            ) from None
    return out


def mask_specs(option: str, specs: list[str] | None) -> dict[str, int | None]:
    """``--OPTION COL[=DEPTH]`` (repeated) as ``{col: depth or None}``."""
    from airflow_privacy.errors import InputError

    out: dict[str, int | None] = {}
    for col, depth in column_pairs(option, specs, "COL[=DEPTH]", need_value=False).items():
        try:
            out[col] = int(depth) if depth else None
        except ValueError:
            raise InputError(
                f"--{option} {col + '=' + depth!r}: the depth must be a whole number"
            ) from None
    return out
