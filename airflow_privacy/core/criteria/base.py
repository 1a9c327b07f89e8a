"""What a privacy criterion is: one class per criterion, its parameters declared once.

The design follows ARX's ``criteria/`` package (``PrivacyCriterion`` and its subclasses, one
class per privacy model, each saying whether it is monotonic with and without suppression
and whether local recoding may use it): every fact about one criterion lives in its class,
in ``airflow_privacy/core/criteria/models/``:

* its name, a one-sentence summary of what it guarantees, and its bibliographic reference;
* its parameters (:class:`Parameter`: kind, range, required or not, the command-line flag),
  validated once, when the criterion is built, with messages in neutral words
  (``ck-safety: c must be in (0, 1], got 2``) because the same parameters arrive as CLI
  options, Airflow arguments and the ``NAME:PARAM=VALUE,...`` grammar;
* :meth:`Criterion.evaluate`, the verdict on a release (calling the engines of
  :mod:`~airflow_privacy.core.criteria.classic`, ``worst_case`` and ``skyline``);
* its monotonicity (:class:`Monotonicity`: may a generalization search prune with it, with
  and without record suppression, and does it decide group by group);
* the per-group test the anonymizers use (:meth:`Criterion.group_test`), exact or only
  necessary, and its relative cost;
* whether it has a disclosure-set (posterior) form for the algorithm-aware audit (Zhang et
  al. 2007, section 2) and whether it depends on the group sizes only;
* its label (``ck-safety (c=0.7, k=3)``), the words of its measure and of its threshold
  for the report, and the witness text a report shows.

The registry (:mod:`airflow_privacy.core.criteria.registry`), the command-line flags, the
criteria grammar (:mod:`airflow_privacy.gate.criteria`) and the README's table of criteria
are generated from the classes. A third party adds a criterion by subclassing
:class:`Criterion` and naming the class in the entry-point group ``airflow_privacy.criteria``
(docs/criteria.md).

Importing this module is cheap: no numpy, scipy, pandas or pyarrow (the command line builds
its parser from the classes). Engines are imported inside the methods that run them.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar, Final

from airflow_privacy.errors import InputError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization

    IntArray = npt.NDArray[np.int64]
    BoolArray = npt.NDArray[np.bool_]

#: ``test(counts, totals)``: which groups (rows of a ``groups x values`` count matrix) pass
#: on their own; ``totals`` is the sensitive distribution of the whole table.
GroupTest = Callable[["IntArray", "IntArray"], "BoolArray"]
#: ``test(sizes, population)``: which groups pass on their own, from their record counts and
#: the sizes of their population classes (k-map against a population table, delta-presence).
PopulationTest = Callable[["IntArray", "IntArray"], "BoolArray"]

#: A skyline knowledge point ``(l, k, m, c)`` (Chen et al. 2007).
SkylinePoint = tuple[int, int, int, float]
MAX_POINT: Final[int] = 10_000
"""Largest ``l``, ``k`` or ``m`` of a skyline point checked (the scan's tables grow with
``k`` and ``m``: a point of a million takes gigabytes); knowledge of more than ten thousand
values, people or implications is a typo, refused before any work."""
MAX_POINTS: Final[int] = 1_000
"""Most skyline points one criterion checks: the scan's work grows with the points (10,000
took 18.8 s in ``check`` and 32 s in ``anonymize``, which checks every lattice node); a
skyline is a handful of points (the report's curves use tens)."""


class Kind(Enum):
    """What a parameter's value is."""

    WHOLE = "whole number"
    REAL = "real number"
    BOOLEAN = "true or false"
    POINTS = "list of skyline points l,k,m,c"
    CHOICE = "one of a list of words"
    TEXT = "a value of the sensitive column"


def shown(v: Any) -> str:
    """A value in a message: numbers as written (``2``, ``0.5``), anything else quoted."""
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return f"{float(v):g}" if isinstance(v, float) else str(v)
    return repr(v)


def fmt(v: Any) -> str:
    """A parameter value in a label or threshold text: floats by ``:g``, points as tuples."""
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list | tuple):
        return "(" + ", ".join(fmt(x) for x in v) + ")"
    return str(v)


def scalar_from_text(text: str) -> Any:
    """A value written as text (``NAME:PARAM=VALUE``): ``true``/``false``, a whole number,
    a number, else the text itself (which the parameter's check then refuses by name)."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def parse_points(criterion: str, points: Any) -> list[SkylinePoint]:
    """Skyline points as ``(l, k, m, c)``: from tuples/lists or ``"l,k,m,c"`` strings (the
    CLI's ``--point``, the grammar's ``points=l,k,m,c;...``). The one parser of a point;
    errors name the criterion and the point (``skyline: point '1,2,x,0.9': m must be ...``).
    """
    out: list[SkylinePoint] = []
    if isinstance(points, str):
        raw_points: list[Any] = [points]
    else:
        try:
            raw_points = list(points)
        except TypeError:
            raise InputError(
                f"{criterion}: points must be a list of l,k,m,c, got {points!r}"
            ) from None
    if not raw_points:
        raise InputError(f"{criterion}: needs at least one point l,k,m,c")
    if len(raw_points) > MAX_POINTS:
        raise InputError(
            f"{criterion}: {len(raw_points):,} points, at most {MAX_POINTS:,} (a skyline is a "
            "few points: keep those no other point dominates)"
        )
    for raw in raw_points:
        if isinstance(raw, str):
            text, parts = raw, [x.strip() for x in raw.split(",")]
        elif isinstance(raw, Sequence):
            text, parts = ",".join(str(x) for x in raw), list(raw)
        else:
            raise InputError(f"{criterion}: point {raw!r}: expected four numbers l,k,m,c")
        if len(parts) != 4:
            raise InputError(
                f"{criterion}: point {text!r}: expected four numbers l,k,m,c, got {len(parts)}"
            )
        whole: list[int] = []
        for name, x in zip("lkm", parts[:3], strict=True):
            try:
                xf = float(x)
            except (TypeError, ValueError):
                raise InputError(
                    f"{criterion}: point {text!r}: {name} must be a whole number >= 0, got {x!r}"
                ) from None
            if isinstance(x, bool) or not math.isfinite(xf) or not xf.is_integer() or xf < 0:
                raise InputError(
                    f"{criterion}: point {text!r}: {name} must be a whole number >= 0, got {x}"
                )
            if xf > MAX_POINT:  # checked before anything is allocated (the tables grow with it)
                raise InputError(
                    f"{criterion}: point {text!r}: {name} must be at most {MAX_POINT:,}, got {x}"
                )
            whole.append(int(xf))
        try:
            c = float(parts[3])
        except (TypeError, ValueError):
            raise InputError(
                f"{criterion}: point {text!r}: c must be a number in (0, 1], got {parts[3]!r}"
            ) from None
        if isinstance(parts[3], bool) or not 0.0 < c <= 1.0:
            raise InputError(f"{criterion}: point {text!r}: c must be in (0, 1], got {parts[3]}")
        out.append((whole[0], whole[1], whole[2], c))
    return out


@dataclass(frozen=True)
class Parameter:
    """One parameter of a criterion, declared once: its checks, its spelling in the
    ``NAME:PARAM=VALUE`` grammar and on the command line, and its help sentence."""

    name: str
    kind: Kind
    help: str
    """One sentence: what the parameter means (the CLI's help and the docs' table)."""
    low: float | None = None
    """Smallest value (numbers); ``None``: no bound."""
    high: float | None = None
    """Largest value, always included (numbers); ``None``: no bound."""
    open_low: bool = False
    """``low`` itself is excluded: ``(0, 1]``."""
    at_most: int | None = None
    """A whole number above this is refused as a typo, before anything is read."""
    required: bool = True
    flag: str | None = None
    """The command-line flag (and the name in messages) when it differs: ``points`` is
    ``--point``, repeated."""
    keep_as_given: bool = False
    """A whole number is recorded as given (``2.0`` stays ``2.0``) instead of as an int, so
    that recorded parameters stay what earlier releases recorded."""
    choices: tuple[str, ...] = ()
    """The words a :attr:`Kind.CHOICE` parameter accepts."""
    default: str = ""
    """What an optional parameter means when it is not given, in words."""
    stricter: str = ""
    """Which way the criterion gets stricter (a dataset policy's minimum is met by a value at
    least as strict): ``"higher"`` (k, l), ``"lower"`` (t, c, delta, risk limits), or ``""``:
    a fact of the data or a choice that must equal the policy's (population size,
    estimator, skyline points)."""

    @property
    def option(self) -> str:
        """The parameter's name on the command line and in messages (``point``)."""
        return self.flag or self.name

    @property
    def repeatable(self) -> bool:
        """A list given on the command line by repeating its flag."""
        return self.kind is Kind.POINTS

    @property
    def takes_rest(self) -> bool:
        """In the one-line grammar its value holds commas, so it is the only parameter."""
        return self.kind is Kind.POINTS

    def range_text(self) -> str:
        """The accepted values in words: ``in (0, 1]``, ``a whole number >= 1``, ..."""
        if self.kind is Kind.WHOLE:
            return f"a whole number >= {self.low:g}" if self.low is not None else "a whole number"
        if self.kind is Kind.REAL:
            low = self.low if self.low is not None else -math.inf
            high = self.high if self.high is not None else math.inf
            if math.isinf(high):
                return f"a number {'>' if self.open_low else '>='} {low:g}"
            return f"in {'(' if self.open_low else '['}{low:g}, {high:g}]"
        if self.kind is Kind.BOOLEAN:
            return "true or false"
        if self.kind is Kind.CHOICE:
            return "one of " + ", ".join(self.choices)
        if self.kind is Kind.TEXT:
            return "a value of the sensitive column"
        return "l,k,m,c with c in (0, 1]"

    # ---------------------------------------------------------------- parsing text
    def from_text(self, text: str) -> Any:
        """The value as written in ``NAME:PARAM=VALUE`` (checked later by :meth:`check`):
        skyline points separated by ``;``, scalars by :func:`scalar_from_text`."""
        if self.kind is Kind.POINTS:
            return [p.strip() for p in text.split(";") if p.strip()]
        if self.kind in (Kind.CHOICE, Kind.TEXT):
            return text
        return scalar_from_text(text)

    def cli_words(self, value: Any) -> str:
        """The value as command-line flags (``--k 3``; ``--point 1,2,2,0.9`` per point)."""
        if self.kind is Kind.POINTS:
            return " ".join(
                f"--{self.option} " + ",".join(f"{x:g}" for x in point) for point in value
            )
        return f"--{self.option} {value}"

    def short(self, value: Any) -> str:
        """The value in a one-line summary: ``c=0.7``; skyline points counted (``2 points``)."""
        if self.kind is Kind.POINTS:
            n = len(value) if isinstance(value, list | tuple) else 1
            return f"{n} point{'s' if n != 1 else ''}"
        return f"{self.name}={value:g}" if isinstance(value, float) else f"{self.name}={value}"

    def stand_in(self) -> Any:
        """A valid value, standing in for one an Airflow template fills in at run time (so
        the rest of a criterion is checked when the DAG is parsed)."""
        if self.kind is Kind.POINTS:
            return ["1,1,1,1"]
        if self.kind is Kind.BOOLEAN:
            return True
        if self.kind is Kind.CHOICE:
            return self.choices[0]
        if self.kind is Kind.TEXT:
            return "x"
        if self.high is not None:
            return int(self.high) if float(self.high).is_integer() else self.high
        return max(int(self.low or 0), 1)

    # -------------------------------------------------------------------- checking
    def check(self, criterion: str, v: Any) -> Any:
        """``v`` checked, in its canonical form; bad input names the criterion and the
        parameter (``ck-safety: c must be in (0, 1], got 2``)."""
        if self.kind is Kind.WHOLE:
            return self._whole(criterion, v)
        if self.kind is Kind.REAL:
            self._real(criterion, v)
            return v
        if self.kind is Kind.BOOLEAN:
            if not isinstance(v, bool):
                raise InputError(f"{criterion}: {self.name} must be true or false, got {v!r}")
            return v
        if self.kind is Kind.TEXT:
            if not isinstance(v, str) or not v.strip():
                raise InputError(
                    f"{criterion}: {self.name} must be a value of the sensitive column, got {v!r}"
                )
            return v
        if self.kind is Kind.CHOICE:
            if v not in self.choices:
                raise InputError(
                    f"{criterion}: {self.name} must be one of {', '.join(self.choices)}, got {v!r}"
                )
            return v
        return parse_points(criterion, v)

    def _number(self, criterion: str, v: Any, what: str) -> float:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InputError(f"{criterion}: {self.name} must be {what}, got {v!r}")
        x = float(v)
        if not math.isfinite(x):
            raise InputError(f"{criterion}: {self.name} must be {what}, got {shown(v)}")
        return x

    def _whole(self, criterion: str, v: Any) -> Any:
        what = self.range_text()
        x = self._number(criterion, v, what)
        if not x.is_integer() or (self.low is not None and x < self.low):
            raise InputError(f"{criterion}: {self.name} must be {what}, got {shown(v)}")
        if self.at_most is not None and x > self.at_most:
            raise InputError(
                f"{criterion}: {self.name} must be at most {self.at_most:,}, got {shown(v)}"
            )
        return v if self.keep_as_given else int(x)

    def _real(self, criterion: str, v: Any) -> None:
        what = self.range_text()
        typed = what if what.startswith("a number") else f"a number {what}"
        x = self._number(criterion, v, typed)
        low = self.low if self.low is not None else -math.inf
        high = self.high if self.high is not None else math.inf
        if not ((x > low if self.open_low else x >= low) and x <= high):
            raise InputError(f"{criterion}: {self.name} must be {what}, got {shown(v)}")


@dataclass(frozen=True)
class Monotonicity:
    """What the anonymizers may assume about one criterion (ARX:
    ``isMonotonicWithGeneralization``, ``isMonotonicWithSuppression``,
    ``isLocalRecodingSupported``)."""

    merge: bool
    """Passing survives merging groups (no suppression): prune the lattice."""
    suppression: bool
    """Still monotone with a record suppression budget (failing groups removed)."""
    local: bool
    """Passes iff every group passes on its own (the whole table's distribution fixed)."""
    reference: str
    """Where the property comes from."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: A criterion that declares nothing: every node is checked, nothing is pruned.
UNKNOWN = Monotonicity(False, False, False, "not declared monotone: every node is checked")


class Criterion(ABC):
    """One privacy criterion with its parameters, checked when it is built.

    A subclass sets the class attributes below and implements :meth:`evaluate`; everything
    else has a safe default (not monotone, no single-group test, no disclosure-set form),
    so a new criterion works with every front end and every anonymizer, only slower.
    ``Criterion(params)`` validates ``params`` (a mapping; ``None`` values count as not
    given) and keeps the checked values in :attr:`params`.
    """

    name: ClassVar[str]
    """The one name of the criterion everywhere (``ck-safety``)."""
    summary: ClassVar[str]
    """What a release that passes guarantees, in one sentence."""
    reference: ClassVar[str] = ""
    """The bibliographic reference of its definition."""
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    monotonicity: ClassVar[Monotonicity] = UNKNOWN
    cost: ClassVar[int] = 10
    """Relative cost of a check: cheap criteria are checked first, so a failing node is
    usually rejected before the expensive checks."""
    posterior_form: ClassVar[bool] = False
    """Has a disclosure-set form: the criterion's group test applied to a person's
    posterior over the sensitive values (Zhang et al. 2007, section 2)."""
    sizes_only: ClassVar[bool] = False
    """Depends on the group sizes only, never on the sensitive values: in the disclosure-set
    form it is the table form on the released candidate."""
    measure: ClassVar[str] = "value"
    """What :attr:`CriterionResult.value` is, in words with its unit (the report)."""
    report_section: ClassVar[str | None] = None
    """The report's section its recorded parameters set: ``"disclosure-curve"`` (its ``c``
    and ``k`` mark the worst-case disclosure curve), ``"skyline"`` (its points bound the
    skyline staircase), or ``None``."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        self.params: dict[str, Any] = type(self).validate(params or {})

    # ------------------------------------------------------------------ parameters
    @classmethod
    def parameter(cls, name: str) -> Parameter | None:
        return next((p for p in cls.parameters if p.name == name), None)

    @classmethod
    def required(cls) -> tuple[str, ...]:
        return tuple(p.name for p in cls.parameters if p.required)

    @classmethod
    def validate(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters checked and in canonical form (the class doc); messages name the
        criterion and the parameter: ``criterion ck-safety needs k``, ``t does not apply
        to criterion k-anonymity``, ``ck-safety: c must be in (0, 1], got 2``."""
        if not isinstance(params, Mapping):
            raise InputError(f"parameters of criterion {cls.name!r} must be a mapping")
        given = {k: v for k, v in params.items() if v is not None}
        missing = [p.option for p in cls.parameters if p.required and p.name not in given]
        if missing:
            raise InputError(f"criterion {cls.name} needs {' and '.join(missing)}")
        known = {p.name for p in cls.parameters}
        extra = sorted(set(given) - known, key=str)
        if extra:
            raise InputError(f"{_spelling(str(extra[0]))} does not apply to criterion {cls.name}")
        out: dict[str, Any] = {}
        for key, value in given.items():
            p = cls.parameter(key)
            assert p is not None
            out[key] = p.check(cls.name, value)
        return out

    # ---------------------------------------------------------------------- verdict
    @abstractmethod
    def evaluate(self, b: Bucketization) -> CriterionResult:
        """The verdict on release ``b``, with its value, reason and witness."""

    def group_test(self, values: Sequence[str]) -> tuple[GroupTest, bool] | None:
        """``(test, exact)``: ``test(counts, totals)`` says which groups pass on their own
        (the sensitive values are ``values``); ``exact`` when the release passes iff all
        groups do. ``None``: no single-group test (the release is checked whole).

        A criterion whose verdict depends on the benign values (``Bucketization.benign``)
        declares the keyword ``benign: frozenset[str] = frozenset()`` in its override; the
        anonymizers then pass the declared labels (``CriteriaSet.group_test``)."""
        return None

    def required_group_size(self) -> int:
        """The group size this criterion asks of a release when it depends on sizes only
        (:attr:`sizes_only`), else 0."""
        return 0

    def traits(self) -> Monotonicity:
        """What this criterion, with its parameters, lets an anonymizer assume: the class's
        :attr:`monotonicity`, unless the parameters change it (k-map against a population
        table is monotone with suppression, k-map with an estimator is not)."""
        return self.monotonicity

    def needs_population(self) -> bool:
        """Is it decided against a population table (``Bucketization.population``)? Then a
        front end refuses it without one, before any data is read."""
        return False

    def population_test(self) -> PopulationTest | None:
        """``test(sizes, population)``: which groups pass on their own given their population
        class sizes, exact for the groups (population classes without a release record are
        judged on the whole release). ``None``: none (the criterion needs no population)."""
        return None

    # ------------------------------------------------------------------------ words
    @property
    def label(self) -> str:
        """``ck-safety (c=0.7, k=3)``."""
        return label_of(self.name, self.params)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "parameters": dict(self.params)}

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        """The requirement in words (``below c = 0.7 against k = 3 implications``) from
        recorded parameters (``None`` values dropped), or ``None`` when they do not say
        (a record written by another version): the report then lists the parameters."""
        return None

    @classmethod
    def witness_text(cls, result: Mapping[str, Any]) -> str:
        """What a report shows of a recorded result's witness: its reason sentence (which
        names groups and ``value A``, ``value B``, never a sensitive value)."""
        return str(result.get("reason") or "")

    @classmethod
    def terminal_text(
        cls, result: Mapping[str, Any], where: str, wrap: Callable[[str], str]
    ) -> str | None:
        """A result as lines for a terminal (``wrap`` folds a long sentence), or ``None``
        for the common layout (name, parameters, verdict, value, reason)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Criterion) and other.name == self.name and other.params == self.params
        )

    def __hash__(self) -> int:
        return hash((self.name, repr(sorted(self.params.items(), key=lambda kv: kv[0]))))


def benign_mask(values: Sequence[str], benign: frozenset[str]) -> BoolArray | None:
    """Which of ``values`` are benign, as a boolean array for the vectorized group tests;
    ``None`` when none is (the tests then take their path without benign values). Imports
    numpy, so only a group test (run by an anonymizer) calls it."""
    if not any(v in benign for v in values):
        return None
    import numpy as np

    out: BoolArray = np.array([v in benign for v in values], dtype=bool)
    return out


def label_of(name: str, params: Mapping[str, Any]) -> str:
    """``ck-safety (c=0.7, k=3)`` (``name`` alone without parameters)."""
    words = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                      for k, v in params.items())  # fmt: skip
    return f"{name} ({words})" if words else name


def points_of(value: Any) -> Iterable[Sequence[Any]]:
    """Recorded skyline points that look like points (a report reads what was recorded)."""
    if not isinstance(value, list | tuple):
        return []
    return [q for q in value if isinstance(q, list | tuple) and len(q) >= 4]


def group_test_with(
    criterion: Criterion, values: Sequence[str], benign: frozenset[str]
) -> tuple[GroupTest, bool] | None:
    """``criterion.group_test(values)``, given the benign values as the keyword ``benign``
    when there are some and the method takes it (a criterion whose per-group test depends
    on them declares it; others, plug-ins included, are called as before)."""
    if benign:
        import inspect

        try:
            params = inspect.signature(criterion.group_test).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        if "benign" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
            method: Callable[..., tuple[GroupTest, bool] | None] = criterion.group_test
            return method(values, benign=benign)
    return criterion.group_test(values)


def _spelling(name: str) -> str:
    """Parameter ``name`` as the command line spells it (``points`` is ``point``), taken from
    any criterion class declaring it, for the message refusing a parameter the criterion at
    hand does not declare; the name itself when no class declares it."""
    pending: list[type] = [Criterion]
    while pending:
        cls = pending.pop()
        declared: tuple[Parameter, ...] = cls.__dict__.get("parameters", ())
        found = next((p for p in declared if p.name == name), None)
        if found is not None:
            return found.option
        pending.extend(cls.__subclasses__())
    return name
