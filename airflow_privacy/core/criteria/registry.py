"""One table of every criterion a release can be checked against, by its CLI name.

The CLI, the Airflow operators and the anonymizers look criteria up here, so a criterion
has one name, one parameter list and one implementation everywhere.

Importing this module is cheap: it imports neither numpy, scipy, pandas nor pyarrow (the
CLI builds its argument parser from :data:`CRITERIA` before it reads any data). The engines
are imported by the runners when a criterion is run, and the types they exchange only
under ``TYPE_CHECKING``; ``tests/test_thresholds.py`` checks this in a fresh interpreter.

Parameter errors name the criterion and the parameter in neutral words
(``ck-safety: c must be in (0, 1], got 2``), because the same parameters arrive as CLI
options (``--c``), Airflow arguments (``criteria=[{"name": ..., "c": ...}]``) and the
anonymizer's ``NAME:c=...,k=...`` syntax.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization

Runner = Callable[["Bucketization", Mapping[str, Any]], "CriterionResult"]

#: Largest ``k`` accepted for (c,k)-safety and negation-safety. The engines clamp ``k`` to
#: the saturation point (``worst_case.saturation_point``: fewest distinct values in a group,
#: minus one), beyond which more knowledge cannot raise the disclosure, so any ``k`` is cheap;
#: a ``k`` above a billion pieces of knowledge is a typo, refused before anything is read.
MAX_K: Final[int] = 10**9
#: Largest ``k_max`` of the disclosure curve (``worst_case.disclosure_curve``), which returns
#: one point per ``k``: the curve is flat beyond the saturation point, at most the number of
#: distinct sensitive values, so longer curves only repeat its last point.
MAX_K_CURVE: Final[int] = 100_000


@dataclass(frozen=True)
class CriterionSpec:
    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    summary: str
    run: Runner


def _k_anonymity(b: Bucketization, p: Mapping[str, Any]) -> CriterionResult:
    from airflow_privacy.core.criteria.classic import k_anonymity

    return k_anonymity(b, p["k"])


def _distinct(b: Bucketization, p: Mapping[str, Any]) -> CriterionResult:
    from airflow_privacy.core.criteria.classic import distinct_l_diversity

    return distinct_l_diversity(b, p["l"])


def _entropy(b: Bucketization, p: Mapping[str, Any]) -> CriterionResult:
    from airflow_privacy.core.criteria.classic import entropy_l_diversity

    return entropy_l_diversity(b, p["l"])


def _recursive(b: Bucketization, p: Mapping[str, Any]) -> CriterionResult:
    from airflow_privacy.core.criteria.classic import recursive_cl_diversity

    return recursive_cl_diversity(b, p["c"], p["l"])


def _t_closeness(b: Bucketization, p: Mapping[str, Any]) -> CriterionResult:
    from airflow_privacy.core.criteria.classic import t_closeness

    return t_closeness(b, p["t"], p.get("ordered"))


def _ck_safety(b: Bucketization, p: Mapping[str, Any]) -> CriterionResult:
    from airflow_privacy.core.criteria.worst_case import check_ck_safety

    return check_ck_safety(b, p["c"], p["k"])


def _negation_safety(b: Bucketization, p: Mapping[str, Any]) -> CriterionResult:
    from airflow_privacy.core.criteria.worst_case import check_negation_safety

    return check_negation_safety(b, p["c"], p["k"])


def _skyline(b: Bucketization, p: Mapping[str, Any]) -> CriterionResult:
    from airflow_privacy.core.criteria.skyline import check_skyline

    return check_skyline(b, p["points"])


CRITERIA: dict[str, CriterionSpec] = {
    spec.name: spec
    for spec in (
        CriterionSpec(
            "k-anonymity", ("k",), (), "every group has at least k records", _k_anonymity
        ),
        CriterionSpec(
            "distinct-l-diversity", ("l",), (), "every group has at least l distinct values",
            _distinct,
        ),
        CriterionSpec(
            "entropy-l-diversity", ("l",), (), "every group's entropy is at least log(l)",
            _entropy,
        ),
        CriterionSpec(
            "recursive-cl-diversity", ("c", "l"), (),
            "in every group r1 < c * (r_l + ... + r_m)", _recursive,
        ),
        CriterionSpec(
            "t-closeness", ("t",), ("ordered",),
            "every group's distribution is within EMD t of the table's", _t_closeness,
        ),
        CriterionSpec(
            "ck-safety", ("c", "k"), (),
            "disclosure against k basic implications stays below c (Martin et al.)", _ck_safety,
        ),
        CriterionSpec(
            "negation-safety", ("c", "k"), (),
            "disclosure against k negated atoms stays below c", _negation_safety,
        ),
        CriterionSpec(
            "skyline", ("points",), (),
            "breach against (l, k, m) knowledge stays below c at every point (Chen et al.)",
            _skyline,
        ),
    )
}  # fmt: skip


def _shown(v: Any) -> str:
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return f"{float(v):g}" if isinstance(v, float) else str(v)
    return repr(v)


def _number(criterion: str, name: str, v: Any, what: str) -> float:
    """``v`` as a finite float; anything else is bad input naming the parameter."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise InputError(f"{criterion}: {name} must be {what}, got {v!r}")
    x = float(v)
    if not math.isfinite(x):
        raise InputError(f"{criterion}: {name} must be {what}, got {_shown(v)}")
    return x


def _whole(criterion: str, name: str, low: int, high: int | None = None) -> Callable[[Any], None]:
    what = f"a whole number >= {low}"

    def check(v: Any) -> None:
        x = _number(criterion, name, v, what)
        if not x.is_integer() or x < low:
            raise InputError(f"{criterion}: {name} must be {what}, got {_shown(v)}")
        if high is not None and x > high:
            raise InputError(f"{criterion}: {name} must be at most {high:,}, got {_shown(v)}")

    return check


def _range(
    criterion: str, name: str, low: float, high: float, open_low: bool
) -> Callable[[Any], None]:
    if math.isinf(high):
        what = f"a number {'>' if open_low else '>='} {low:g}"
        typed = what
    else:
        what = f"in {'(' if open_low else '['}{low:g}, {high:g}]"
        typed = f"a number {what}"

    def check(v: Any) -> None:
        x = _number(criterion, name, v, typed)
        if not ((x > low if open_low else x >= low) and x <= high):
            raise InputError(f"{criterion}: {name} must be {what}, got {_shown(v)}")

    return check


def _skyline_points(v: Any) -> Any:
    from airflow_privacy.core.criteria.skyline import normalize_points

    return normalize_points(v)


# parameters whose CLI option has another name
_OPTION = {"points": "point"}

# checked and brought to a canonical form (skyline points: "l,k,m,c" strings or sequences
# become (l, k, m, c) tuples; errors name the point)
_NORMALIZERS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("skyline", "points"): _skyline_points,
}

_INF = float("inf")
_VALIDATORS: dict[tuple[str, str], Callable[[Any], None]] = {
    ("k-anonymity", "k"): _whole("k-anonymity", "k", 1),
    ("distinct-l-diversity", "l"): _range("distinct-l-diversity", "l", 1, _INF, False),
    ("entropy-l-diversity", "l"): _range("entropy-l-diversity", "l", 1, _INF, False),
    ("recursive-cl-diversity", "l"): _whole("recursive-cl-diversity", "l", 1),
    ("recursive-cl-diversity", "c"): _range("recursive-cl-diversity", "c", 0, _INF, True),
    ("t-closeness", "t"): _range("t-closeness", "t", 0, 1, False),
    ("ck-safety", "c"): _range("ck-safety", "c", 0, 1, True),
    ("ck-safety", "k"): _whole("ck-safety", "k", 0, MAX_K),
    ("negation-safety", "c"): _range("negation-safety", "c", 0, 1, True),
    ("negation-safety", "k"): _whole("negation-safety", "k", 0, MAX_K),
}


def validate(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that apply to criterion ``name``, checked; errors name the parameter.

    ``None`` values count as not given. Cheap: callers validate before reading data.
    Messages are neutral (module doc): ``criterion ck-safety needs k``, ``t does not apply
    to criterion k-anonymity``, ``ck-safety: c must be in (0, 1], got 2``.
    """
    spec = CRITERIA.get(name)
    if spec is None:
        raise InputError(f"unknown criterion {name!r} (known: {', '.join(CRITERIA)})")
    given = {k: v for k, v in params.items() if v is not None}
    missing = [_OPTION.get(p, p) for p in spec.required if p not in given]
    if missing:
        raise InputError(f"criterion {name} needs {' and '.join(missing)}")
    extra = sorted(set(given) - set(spec.required) - set(spec.optional))
    if extra:
        raise InputError(f"{_OPTION.get(extra[0], extra[0])} does not apply to criterion {name}")
    for key, value in list(given.items()):
        check = _VALIDATORS.get((name, key))
        if check is not None:
            check(value)
        normalize = _NORMALIZERS.get((name, key))
        if normalize is not None:
            given[key] = normalize(value)
    if "k" in given:
        given["k"] = int(given["k"])
    return given


def evaluate(b: Bucketization, name: str, params: Mapping[str, Any]) -> CriterionResult:
    """Check criterion ``name`` with ``params``; unknown names or bad parameters are errors."""
    valid = validate(name, params)
    return CRITERIA[name].run(b, valid)
