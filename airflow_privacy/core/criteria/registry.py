"""One table of every criterion a release can be checked against, by its CLI name.

The CLI, the Airflow operators and the anonymizers look criteria up here, so a criterion
has one name, one parameter list and one implementation everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_privacy.core.criteria.result import CriterionResult
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError

Runner = Callable[[Bucketization, Mapping[str, Any]], CriterionResult]


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


def _whole(name: str, low: int) -> Callable[[Any], None]:
    def check(v: Any) -> None:
        if isinstance(v, bool) or not float(v).is_integer() or v < low:
            raise InputError(f"--{name} must be a whole number >= {low}, got {v}")

    return check


def _range(name: str, low: float, high: float, open_low: bool) -> Callable[[Any], None]:
    def check(v: Any) -> None:
        ok = (v > low if open_low else v >= low) and v <= high
        if not ok:
            bracket = "(" if open_low else "["
            raise InputError(f"--{name} must be in {bracket}{low:g}, {high:g}], got {v:g}")

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

_VALIDATORS: dict[tuple[str, str], Callable[[Any], None]] = {
    ("k-anonymity", "k"): _whole("k", 1),
    ("distinct-l-diversity", "l"): _range("l", 1, float("inf"), False),
    ("entropy-l-diversity", "l"): _range("l", 1, float("inf"), False),
    ("recursive-cl-diversity", "l"): _whole("l", 1),
    ("recursive-cl-diversity", "c"): _range("c", 0, float("inf"), True),
    ("t-closeness", "t"): _range("t", 0, 1, False),
    ("ck-safety", "c"): _range("c", 0, 1, True),
    ("ck-safety", "k"): _whole("k", 0),
    ("negation-safety", "c"): _range("c", 0, 1, True),
    ("negation-safety", "k"): _whole("k", 0),
}


def validate(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters that apply to criterion ``name``, checked; errors name the parameter.

    ``None`` values count as not given. Cheap: callers validate before reading data.
    """
    spec = CRITERIA.get(name)
    if spec is None:
        raise InputError(f"unknown criterion {name!r} (known: {', '.join(CRITERIA)})")
    given = {k: v for k, v in params.items() if v is not None}
    missing = [_OPTION.get(p, p) for p in spec.required if p not in given]
    if missing:
        raise InputError(f"criterion {name} needs {' '.join('--' + m for m in missing)}")
    extra = sorted(set(given) - set(spec.required) - set(spec.optional))
    if extra:
        raise InputError(f"--{_OPTION.get(extra[0], extra[0])} does not apply to criterion {name}")
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
