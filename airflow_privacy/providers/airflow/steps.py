"""An operator's argument checks and its call of the service, derived from its step's
declaration (:mod:`airflow_privacy.gate.steps`).

:func:`check_arguments` is the operator's one check, run when the DAG is parsed (templates
wait) and when the task runs (every value, rendered): each field by its kind through
:class:`~airflow_privacy.providers.airflow.params.Args`, a release reference as exactly one
of its arguments, at most one field of an exclusive set, then the step's own cross-field
rules on the values known so far. :func:`execute` turns the checked values into the
service's request and runs it under the operator's attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError
from airflow_privacy.gate.steps.base import Known
from airflow_privacy.providers.airflow.params import Args, templated

if TYPE_CHECKING:
    from airflow_privacy.gate.steps.base import Step
    from airflow_privacy.gate.steps.fields import Field


def _check_field(a: Args, f: Field, name: str) -> Any:
    # None is a value only where it is the default: a given None elsewhere is bad input
    optional = not (f.required or f.airflow_required) and f.default is None
    if f.kind in ("text", "ref", "column"):
        return a.text(name, optional=optional)
    if f.kind == "label":
        return a.label(name, optional=optional)
    if f.kind == "columns":
        return a.names(name, optional=optional, noun=f.noun or "column name", unique=f.unique)
    if f.kind == "refs":
        return a.names(name, optional=optional, noun=f.noun or "path")
    if f.kind == "files":
        return a.files(name)
    if f.kind == "intervals":
        from airflow_privacy.providers.airflow.params import intervals

        return intervals(getattr(a.op, name), name)
    if f.kind == "masks":
        from airflow_privacy.providers.airflow.params import masks

        return masks(getattr(a.op, name), name)
    if f.kind == "options":
        from airflow_privacy.providers.airflow.params import option_values

        return option_values(getattr(a.op, name), name)
    if f.kind == "values":
        return a.values(name)
    if f.kind == "choice":
        return a.choice(name, f.choices, optional=optional)
    if f.kind == "criteria":
        return a.criteria(name)
    if f.kind == "number":
        lo = -float("inf") if f.low is None else f.low
        hi = float("inf") if f.high is None else f.high
        return a.number(name, lo, hi, optional=optional, open_low=f.open_low, open_high=f.open_high)
    if f.kind == "whole":
        lo_w = -(2**63) if f.low is None else int(f.low)
        hi_w = 2**63 - 1 if f.high is None else int(f.high)
        return a.whole(name, lo_w, hi_w, optional=optional)
    if f.kind == "flag":
        return a.flag(name)
    if f.kind == "wholes":
        return a.wholes(
            name, int(f.low or 0), int(f.high if f.high is not None else 2**63 - 1),
            optional=optional,
        )  # fmt: skip
    raise AssertionError(f"no operator check for kind {f.kind}")


def _one_of(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _release_ref(op: Any, f: Field, args: dict[str, Any]) -> Any:
    """The reference of a ``ref`` field with variants: exactly one of its arguments (a path
    or URI, ``sql_table`` on ``conn_id``, ``spark_table``); None while it is a template."""
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.steps.fields import variant_kind

    names = [str(f.argument), *f.variants]
    given = [n for n in names if getattr(op, n, None) is not None]
    if len(given) != 1:
        raise InputError(f"give exactly one of {_one_of(names)}")
    which = given[0]
    kind = variant_kind(which) if which != f.argument else "path"
    if kind == "sql_table" and getattr(op, f.table_conn, None) is None:
        raise InputError(f"{which} needs {f.table_conn}: the SQL connection of the table")
    value = args[which]
    if templated(value):
        return None
    if kind == "sql_table":
        return ReleaseRef(sql_table=value, conn=args.get(f.table_conn))
    if kind == "spark_table":
        return ReleaseRef(spark_table=value)
    return ReleaseRef(path=value, conn=args.get(f.conn_arg))


def _exclusive(op: Any, step: Step) -> None:
    """At most one field of each exclusive set is given, templated or not (the layer's
    :meth:`~airflow_privacy.gate.steps.base.Step.check` sees only the values known)."""
    from airflow_privacy.gate.steps.values import at_most_one

    sets: dict[str, list[Field]] = {}
    for f in step.fields:
        if f.exclusive and f.argument is not None:
            sets.setdefault(f.exclusive, []).append(f)
    for fields in sets.values():
        at_most_one(
            [f.key for f in fields],
            [f.key for f in fields if getattr(op, str(f.argument), None) is not None],
        )


def check_arguments(op: Any, step: Step, parsing: bool) -> dict[str, Any]:
    """Every argument of ``op`` checked (module doc); returns the step's values by field key
    (when parsing, a templated value is left out of the rules and returned as written)."""
    from airflow_privacy.gate.refs import ReleaseRef

    a = Args(op, parsing)
    args: dict[str, Any] = {}
    values: dict[str, Any] = {}
    known: dict[str, Any] = {}
    conn = a.text("conn_id", optional=True) if hasattr(op, "conn_id") else None
    args["conn_id"] = conn
    for f in step.fields:  # the connections of the references (source_conn_id, ...)
        if f.kind in ("ref", "refs"):
            for conn_arg in (f.conn_arg, f.table_conn):
                if conn_arg not in args and hasattr(op, conn_arg):
                    args[conn_arg] = a.text(conn_arg, optional=True)
    _exclusive(op, step)
    for f in step.fields:
        name = f.argument
        if name is None:
            continue
        if f.kind == "ref" and f.variants:
            for n in (name, *f.variants):
                args[n] = a.text(n, optional=True)
            value = _release_ref(op, f, args)
            values[f.key] = value
            if value is not None:
                known[f.key] = value
            continue
        raw = getattr(op, name)
        value = _check_field(a, f, name)
        waiting = parsing and templated(raw)
        if f.kind == "ref" and value is not None and not waiting:
            value = ReleaseRef(path=value, conn=args.get(f.conn_arg))
        if f.kind == "refs" and value is not None and not waiting:
            value = [ReleaseRef(path=v, conn=args.get(f.conn_arg)) for v in value]
        if value is None and f.default is not None:
            value = f.default
        values[f.key] = value
        if not waiting:
            known[f.key] = value
    for name, value in args.items():  # the connections, for the request (the manifest's)
        if name.endswith("conn_id") and name != "conn_id":
            values.setdefault(name, value)
    attempt = getattr(op, "attempt", None)
    if attempt is not None or getattr(op, "attempt_task_id", None) is not None:
        known["attempt"] = attempt or "(from attempt_task_id)"
    else:
        known["attempt"] = None
    step.check(Known(known))
    return values


def execute(op: Any, step: Step, context: Mapping[str, Any]) -> dict[str, Any]:
    """Run ``step``'s service with ``op``'s checked arguments under its attempt."""

    def service(ctx: Any, attempt: str | None) -> Any:
        values = check_arguments(op, step, parsing=False)
        values.update(attempt=attempt, name=instance_name(op.name, context))
        return step.run(step.request(values), ctx)

    result: dict[str, Any]
    if step.takes_attempt:
        result = op.attempt_service(context, service)
    else:
        result = op.run_service(context, lambda ctx: service(ctx, None))
    return result


def instance_name(name: str, context: Mapping[str, Any]) -> str:
    """A check's name in its attempt: its own, or for an instance of a mapped task
    ``name[map index]`` (one verdict per instance; the gate reads them all:
    :func:`airflow_privacy.gate.rules.reasons`)."""
    ti = context.get("ti")
    index = getattr(ti, "map_index", -1) if ti is not None else -1
    if isinstance(index, int) and index >= 0:
        return f"{name}[{index}]"
    return name
