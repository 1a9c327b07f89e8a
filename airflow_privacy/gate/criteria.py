"""Criteria as users write them, parsed once for every front end.

One spelling everywhere: ``NAME:PARAM=VALUE,...`` (``ck-safety:c=0.7,k=3``,
``skyline:points=1;2;2;0.9``), or a mapping ``{"name": "ck-safety", "c": 0.7, "k": 3}``
(parameters beside the name, or under ``"parameters"``), or a ``(name, parameters)`` pair.
Values arrive as text from the command line and from Airflow templates; each is read by its
parameter's declared kind (``Parameter.from_text``: skyline points ``l,k,m,c`` separated by
``;``, numbers, ``true``/``false``) and checked by the criterion's class, and every
mistake is one :class:`InputError` naming the criterion and the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow_privacy.core.criteria.base import Parameter, scalar_from_text
from airflow_privacy.errors import InputError, opt

Criterion = tuple[str, dict[str, Any]]


def _declared(name: str, key: str) -> Parameter | None:
    """How parameter ``key`` of criterion ``name`` is written: the criterion's declaration,
    else any criterion's of that name (an unknown criterion or a parameter it does not take
    is then refused by name, after the syntax)."""
    from airflow_privacy.core.criteria.registry import known, parameter_named

    cls = known(name)
    declared = cls.parameter(key) if cls is not None else None
    return declared or parameter_named(key)


def _value(text: str, spec: str, key: str, declared: Parameter | None) -> Any:
    raw = text.strip()
    if not raw:
        raise InputError(f"criterion {spec!r}: parameter {key!r} has no value")
    return declared.from_text(raw) if declared is not None else scalar_from_text(raw)


def _takes_rest(name: str, rest: str) -> bool:
    """Is the first parameter of ``rest`` one whose value holds commas (skyline points,
    ``l,k,m,c;...``)? It is then the only parameter."""
    key = rest.partition("=")[0].strip()
    declared = _declared(name, key) if key else None
    return declared is not None and declared.takes_rest


def parse_spec(spec: str) -> Criterion:
    """``NAME`` or ``NAME:key=value,key=value`` -> ``(name, params)``."""
    text = spec.strip()
    if text.startswith("-"):
        raise InputError(
            f"{text[:60]!r} looks like command-line options: a criterion is written "
            "NAME:PARAM=VALUE,... (e.g. ck-safety:c=0.7,k=3)"
        )
    name, sep, rest = text.partition(":")
    name = name.strip()
    if not name:
        raise InputError(f"criterion {spec!r} has no name")
    if "=" in name:
        raise InputError(
            f"criterion {spec!r}: the name comes first, then ':' and the parameters "
            "(e.g. k-anonymity:k=5)"
        )
    params: dict[str, Any] = {}
    if sep and not rest.strip():
        raise InputError(f"criterion {spec!r}: nothing after ':' (expected PARAM=VALUE)")
    # a value with commas (skyline's points l,k,m,c) is then the only parameter
    items = [rest.strip()] if _takes_rest(name, rest) else [x.strip() for x in rest.split(",")]
    for item in filter(None, items):
        key, eq, val = item.partition("=")
        if not eq or not key.strip():
            raise InputError(f"criterion {spec!r}: expected PARAM=VALUE, got {item!r}")
        if ":" in val:
            raise InputError(f"criterion {spec!r}: unexpected ':' in {item!r}")
        key = key.strip()
        if key in params:
            raise InputError(f"criterion {spec!r}: parameter {key!r} is given twice")
        params[key] = _value(val, spec, key, _declared(name, key))
    return name, params


def parse_criteria(items: Any, what: str = "criteria") -> list[Criterion]:
    """Every criterion of ``items`` (a list of specs / mappings / pairs), validated."""
    from airflow_privacy.core.criteria.registry import validate

    if isinstance(items, str | Mapping) or not isinstance(items, Sequence):
        raise InputError(
            f"{opt(what)} must be a list of criteria, got {type(items).__name__}"
            + (f" {items[:60]!r}" if isinstance(items, str) else "")
            + " (e.g. [{'name': 'ck-safety', 'c': 0.7, 'k': 3}] or ['ck-safety:c=0.7,k=3'])"
        )
    out: list[Criterion] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            name, params = parse_spec(item)
        elif isinstance(item, Mapping):
            d = dict(item)
            name = d.pop("name", None)
            if not isinstance(name, str) or not name.strip():
                raise InputError(f"criterion {i + 1} of {opt(what)} has no 'name'")
            nested = d.pop("parameters", None)
            if nested is not None:
                if not isinstance(nested, Mapping):
                    raise InputError(f"criterion {name!r}: 'parameters' must be a mapping")
                d.update(nested)
            params = {k: _coerce(v) for k, v in d.items()}
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Mapping):
            name, params = str(item[0]), dict(item[1])
        else:
            raise InputError(
                f"criterion {i + 1} of {opt(what)} is a {type(item).__name__}; write "
                "'NAME:PARAM=VALUE,...' or {'name': NAME, PARAM: VALUE, ...}"
            )
        out.append((name.strip(), checked(name.strip(), params, validate)))
    if not out:
        raise InputError(f"{opt(what)} is empty: name at least one criterion")
    return out


def checked(name: str, params: Mapping[str, Any], validate: Any) -> dict[str, Any]:
    """The registry's validation, with any type error turned into bad input."""
    try:
        result: dict[str, Any] = validate(name, params)
    except InputError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputError(f"criterion {name}: bad parameter value ({exc})") from None
    return result


def _coerce(value: Any) -> Any:
    """Templated parameters arrive as text ("0.7"): numbers and booleans become themselves."""
    if isinstance(value, str):
        text = value.strip()
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                continue
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        return value
    if isinstance(value, list):
        return [_coerce(v) if not isinstance(v, str) or "," not in v else v for v in value]
    return value
