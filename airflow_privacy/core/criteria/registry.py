"""Every criterion a release can be checked against, by name: generated from the classes.

The built-in criteria are the classes of :mod:`airflow_privacy.core.criteria.models`
(:data:`~airflow_privacy.core.criteria.models.BUILT_IN`); third parties add theirs through
the entry-point group ``airflow_privacy.criteria`` (each entry point names a
:class:`~airflow_privacy.core.criteria.base.Criterion` subclass, under the criterion's own
name; docs/criteria.md). The CLI, the Airflow operators and the anonymizers look criteria up
here, so a criterion has one name, one parameter list and one implementation everywhere.

Plug-ins are loaded lazily: only when a name is not built-in, or when every name is listed
(:func:`names`), since scanning the installed distributions costs start-up time. A plug-in
that does not load, is not a criterion, or takes a built-in's name (a plug-in never shadows
a built-in) is bad input naming the entry point.

Importing this module is cheap: it imports neither numpy, scipy, pandas nor pyarrow (the
CLI builds its argument parser from :data:`CRITERIA` before it reads any data);
``tests/core/test_thresholds.py`` checks this in a fresh interpreter.

Parameter errors name the criterion and the parameter in neutral words
(``ck-safety: c must be in (0, 1], got 2``), because the same parameters arrive as CLI
options (``--c``), Airflow arguments (``criteria=[{"name": ..., "c": ...}]``) and the
anonymizer's ``NAME:c=...,k=...`` syntax.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from airflow_privacy.core.criteria.base import Criterion, Kind, Parameter
from airflow_privacy.core.criteria.limits import MAX_K, MAX_K_CURVE
from airflow_privacy.core.criteria.models import BUILT_IN
from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization

__all__ = [
    "CRITERIA",
    "ENTRY_POINT_GROUP",
    "MAX_K",
    "MAX_K_CURVE",
    "create",
    "evaluate",
    "lookup",
    "names",
    "validate",
]

#: The entry-point group third-party criteria register under.
ENTRY_POINT_GROUP: Final[str] = "airflow_privacy.criteria"

#: Every criterion known so far by name: the built-ins, then plug-ins as they are loaded.
CRITERIA: dict[str, type[Criterion]] = {cls.name: cls for cls in BUILT_IN}
_BUILT_IN_NAMES: Final[frozenset[str]] = frozenset(CRITERIA)
_scanned = False


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def _load(ep: Any) -> type[Criterion]:
    """The criterion class an entry point names, checked; errors name the entry point."""
    import inspect

    where = f"criterion plug-in {ep.name!r} ({ep.value}, entry-point group {ENTRY_POINT_GROUP})"
    if ep.name in _BUILT_IN_NAMES:
        raise InputError(f"{where} takes the name of a built-in criterion")
    try:
        cls = ep.load()
    except Exception as exc:  # any failure of third-party code is the plug-in's
        raise InputError(f"{where} does not load: {type(exc).__name__}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Criterion)):
        raise InputError(f"{where} is not a Criterion subclass")
    if inspect.isabstract(cls):
        raise InputError(f"{where} does not implement evaluate")
    if getattr(cls, "name", None) != ep.name:
        raise InputError(
            f"{where} defines criterion {getattr(cls, 'name', None)!r}: the entry point must "
            "be named after the criterion"
        )
    if not isinstance(getattr(cls, "summary", None), str) or not all(
        isinstance(p, Parameter) for p in cls.parameters
    ):
        raise InputError(f"{where} needs a summary and Parameter declarations")
    known = CRITERIA.get(ep.name)
    if known is not None and known is not cls:
        raise InputError(f"{where}: another plug-in already registers criterion {ep.name!r}")
    return cls


def _plugin(name: str) -> type[Criterion] | None:
    """The plug-in criterion ``name``, loading only its entry points."""
    found = [ep for ep in _entry_points() if ep.name == name]
    if len(found) > 1:
        raise InputError(
            f"criterion {name!r} is registered by {len(found)} plug-ins "
            f"({', '.join(sorted(str(ep.value) for ep in found))}): uninstall all but one"
        )
    if not found:
        return None
    cls = _load(found[0])
    CRITERIA[name] = cls
    return cls


def names() -> list[str]:
    """Every criterion's name: the built-ins, then every plug-in (all of them loaded)."""
    global _scanned
    if not _scanned:
        eps = _entry_points()
        seen: dict[str, str] = {}
        for ep in eps:
            if ep.name in seen:
                raise InputError(
                    f"criterion {ep.name!r} is registered by two plug-ins ({seen[ep.name]}, "
                    f"{ep.value}): uninstall one"
                )
            seen[ep.name] = str(ep.value)
        for ep in eps:
            CRITERIA[ep.name] = _load(ep)
        _scanned = True
    return list(CRITERIA)


def forget_plugins() -> None:
    """Drop the plug-ins loaded so far (a test that installs or removes one calls this)."""
    global _scanned
    for name in [n for n in CRITERIA if n not in _BUILT_IN_NAMES]:
        del CRITERIA[name]
    _scanned = False


def lookup(name: str) -> type[Criterion]:
    """The class of criterion ``name``; an unknown name is bad input listing the known."""
    cls = CRITERIA.get(name)
    if cls is None and isinstance(name, str) and not _scanned:
        cls = _plugin(name)
    if cls is None:
        raise InputError(f"unknown criterion {name!r} (known: {', '.join(names())})")
    return cls


def known(name: str) -> type[Criterion] | None:
    """The class of criterion ``name`` if there is one (plug-ins loaded for it), else None."""
    try:
        return lookup(name)
    except InputError:
        return None


def parameter_named(name: str) -> Parameter | None:
    """A parameter called ``name`` of any criterion known so far (the first declaring it):
    how the grammar reads a parameter the named criterion does not declare, so that the
    error names it (``point does not apply to criterion k-anonymity``)."""
    for cls in CRITERIA.values():
        p = cls.parameter(name)
        if p is not None:
            return p
    return None


def create(name: str, params: Mapping[str, Any]) -> Criterion:
    """Criterion ``name`` with ``params``, validated (errors name the parameter)."""
    return lookup(name)(params)


def validate(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that apply to criterion ``name``, checked; errors name the parameter.

    ``None`` values count as not given. Cheap: callers validate before reading data.
    Messages are neutral (module doc): ``criterion ck-safety needs k``, ``t does not apply
    to criterion k-anonymity``, ``ck-safety: c must be in (0, 1], got 2``.
    """
    return lookup(name).validate(params)


def evaluate(b: Bucketization, name: str, params: Mapping[str, Any]) -> CriterionResult:
    """Check criterion ``name`` with ``params``; unknown names or bad parameters are errors."""
    return create(name, params).evaluate(b)


def flags() -> dict[str, tuple[Parameter, list[str]]]:
    """The command-line flags of the built-in criteria's parameters: for each parameter
    name (in order of first declaration) the declaration that sets the flag's type and the
    criteria that take it. A parameter that is a whole number for one criterion and a real
    number for another is read as a real number (``--l``)."""
    out: dict[str, tuple[Parameter, list[str]]] = {}
    for cls in BUILT_IN:
        for p in cls.parameters:
            if p.name not in out:
                out[p.name] = (p, [cls.name])
                continue
            first, users = out[p.name]
            users.append(cls.name)
            if first.kind is Kind.WHOLE and p.kind is Kind.REAL:
                out[p.name] = (p, users)
    return out
