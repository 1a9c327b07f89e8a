"""The way forward from a failed criterion: changes computed from the release's own counts,
each re-checked with the criterion before it is suggested.

Two kinds, both on the sufficient statistics (:class:`~airflow_privacy.core.model.Bucketization`):

* **Suppress groups** (:func:`suppression_advice`): remove the groups that fail the
  criterion's per-group test (:meth:`Criterion.group_test`, the test the anonymizers use;
  ARX's record suppression, Prasser et al., "Flexible data anonymization using ARX", 2020,
  section 3), then evaluate the criterion on what is left. A test that is only necessary,
  or a criterion that reads the whole table's distribution (t-closeness, beta-likeness:
  removing groups moves the distribution), can leave the rest failing: the step repeats on
  the rest (at most :data:`MAX_ROUNDS` times) and the advice is given only when the final
  evaluation passes. Its cost: the records and groups suppressed.
* **The parameter that would pass** (:func:`parameter_advice`): the strictest value of one
  parameter at which the release passes (a whole-number parameter stepped down, a real
  parameter bisected between the asked value and the end of its range), re-checked. It
  says how far the release is from the asked level; a weaker parameter counts at the gate
  only when the dataset's policy allows it.

For the composition audit (:func:`composition_advice`; Ganta et al. 2008, section 2.1), the
verdict is a function of the audit's result and its parameters, so the way forward is
re-gated on the same result, exactly: the people pinned, worst first by the measure that
gated (row numbers and the published groups that combine, never their values), and the
confidence or share pinned at which the audit would pass. One change of the candidate is
re-audited before it is suggested (:func:`composition_suppression`): suppressing the
candidate's groups the pinned people fall in, round after round (at most
:data:`AUDIT_ROUNDS` audits), until the audit of what is left passes, against the same
population and earlier releases, as the gate would audit it.

Nothing here reads a sensitive value of an individual: advice names groups by their
published group key, people by their row, and counts records.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import numpy.typing as npt

    from airflow_privacy.core.composition.locate import Population
    from airflow_privacy.core.composition.release import PublishedRelease
    from airflow_privacy.core.composition.result import CompositionResult, Measure
    from airflow_privacy.core.criteria.base import Criterion
    from airflow_privacy.core.hierarchy import Hierarchy
    from airflow_privacy.core.model import Bucketization

#: rounds of "remove the failing groups, re-check" before suppression advice gives up
MAX_ROUNDS = 25
#: groups named in an advice's text (all are counted)
NAMED_GROUPS = 10
#: evaluations spent searching one parameter (fewer on large releases: :func:`_budget`)
MAX_EVALUATIONS = 48
#: cells (groups x sensitive values) up to which a parameter is searched with every
#: evaluation; above, the budget shrinks in proportion (at least :data:`MIN_EVALUATIONS`)
FULL_SEARCH_CELLS = 200_000
MIN_EVALUATIONS = 12
#: re-audits spent on suppressing the candidate's groups
AUDIT_ROUNDS = 4
#: a costly criterion (``Criterion.cost`` at least :data:`COSTLY`: its per-group test
#: evaluates every group on its own and an evaluation of the whole takes what the check
#: took, e.g. (c,k)-safety's worst case) is given advice only up to this many groups
#: (deterministic, whatever the load; above, the check's own value line says the level)
COSTLY = 5
COSTLY_GROUPS = 5_000


@dataclass(frozen=True)
class Advice:
    """One suggested change, re-checked: ``kind`` is ``suppress-groups`` or ``parameter``."""

    kind: str
    criterion: str
    text: str
    #: suppress-groups: the groups' published keys (at most :data:`NAMED_GROUPS`)
    groups: list[str] = field(default_factory=list)
    groups_suppressed: int = 0
    records_suppressed: int = 0
    records: int = 0
    #: parameter: the parameter, the asked value and the value that passes
    parameter: str | None = None
    asked: float | None = None
    passes_at: float | None = None
    #: people-pinned: how many people the audit pins (``groups``: the worst of them, each
    #: as its row and the published groups that combine)
    people: int = 0
    #: the criterion passed when re-evaluated with the change applied (False: a finding,
    #: not a change)
    rechecked: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def without_groups(b: Bucketization, drop: npt.NDArray[np.bool_]) -> Bucketization:
    """``b`` with the groups marked in ``drop`` suppressed (their records removed). A
    population class whose records are all suppressed becomes a class no record of the
    release falls in (``population_rest``)."""
    keep = ~drop
    population = None if b.population is None else b.population[keep]
    rest = b.population_rest + (
        tuple(int(x) for x in b.population[drop]) if b.population is not None else ()
    )
    return replace(
        b,
        groups=tuple(g for g, k in zip(b.groups, keep, strict=True) if k),
        counts=b.counts[keep],
        population=population,
        population_rest=rest,
    )


def suppression_advice(b: Bucketization, criterion: Criterion) -> Advice | None:
    """Suppress the groups that fail on their own until the criterion passes (module doc);
    None when the criterion has no per-group test, when that test is costly and the release
    has more than :data:`COSTLY_GROUPS` groups, or when no proper subset passes within
    :data:`MAX_ROUNDS` rounds."""
    from airflow_privacy.core.criteria.base import group_test_with

    if criterion.cost >= COSTLY and b.n_groups > COSTLY_GROUPS:
        return None  # a per-group test of every group would cost more than the check
    found = group_test_with(criterion, b.values, b.benign)
    if found is None:
        return None
    test, _exact = found
    drop = np.zeros(b.n_groups, dtype=bool)
    current = b
    for _ in range(MAX_ROUNDS):
        counts = np.asarray(current.counts, dtype=np.int64)
        failing = ~np.asarray(test(counts, counts.sum(axis=0)), dtype=bool)
        if not failing.any():
            return None  # every group passes on its own, the whole does not
        drop[np.flatnonzero(~drop)[failing]] = True
        if drop.all():
            return None
        current = without_groups(b, drop)
        if criterion.evaluate(current).safe is True:
            return _suppression(b, criterion, drop)
    return None


def _suppression(b: Bucketization, criterion: Criterion, drop: npt.NDArray[np.bool_]) -> Advice:
    gone = np.flatnonzero(drop)
    sizes = np.asarray(b.sizes)
    records = int(sizes[gone].sum())
    # the largest groups first: the ones a steward would look at before suppressing
    named = [b.group_label(int(g)) for g in gone[np.argsort(-sizes[gone], kind="stable")]]
    shown = "; ".join(named[:NAMED_GROUPS]) + (
        f"; and {len(named) - NAMED_GROUPS:,} more" if len(named) > NAMED_GROUPS else ""
    )
    label = criterion.label
    text = (
        f"suppressing {records:,} of {b.n_records:,} records ({records / b.n_records:.1%}) in "
        f"{gone.size:,} of {b.n_groups:,} groups passes {label} (re-checked): {shown}"
    )
    return Advice(
        kind="suppress-groups", criterion=label, text=text, groups=named[:NAMED_GROUPS],
        groups_suppressed=int(gone.size), records_suppressed=records, records=b.n_records,
    )  # fmt: skip


def parameter_advice(
    b: Bucketization, name: str, params: dict[str, Any], measured: float | None = None
) -> Advice | None:
    """The strictest value of one declared parameter (the first that yields one, in
    declaration order) at which ``b`` passes criterion ``name`` (module doc); None when no
    value in the parameter's range passes.

    ``measured`` (the failed result's ``value``: the level the release achieves, which most
    criteria compare with one parameter) is tried first: when the value just past it passes
    and the value just stricter than that does not, it is the answer after two evaluations,
    without a search."""
    from airflow_privacy.core.criteria.base import Kind
    from airflow_privacy.core.criteria.registry import create, known

    cls = known(name)
    if cls is None:
        return None
    if cls.cost >= COSTLY and b.n_groups > COSTLY_GROUPS:
        return None  # each evaluation costs what the check did: the check's value says it
    for p in cls.parameters:
        asked = params.get(p.name)
        if p.stricter not in ("higher", "lower") or isinstance(asked, bool):
            continue
        if not isinstance(asked, int | float):
            continue

        def passes(value: float, key: str = p.name) -> bool:
            try:
                return create(name, {**params, key: value}).evaluate(b).safe is True
            except Exception:  # a value the declaration refuses: not a suggestion
                return False

        steps = _budget(b)
        if p.kind not in (Kind.WHOLE, Kind.REAL):
            continue
        found = _from_measured(measured, asked, p.kind is Kind.WHOLE, p.stricter, passes)
        if found is None and p.kind is Kind.WHOLE:
            found = _whole(int(asked), p.stricter, p.low, p.high, passes, steps)
        elif found is None:
            found = _real(float(asked), p.stricter, p.low, p.high, p.open_low, passes, steps)
        if found is None:
            continue
        label = create(name, params).label
        shown = int(found) if p.kind is Kind.WHOLE else found
        text = (
            f"{name} passes at {p.name}={_fmt(shown)} (asked {_fmt(asked)}; re-checked): "
            f"weaker than asked, it counts only where the dataset's policy allows it"
        )
        return Advice(
            kind="parameter", criterion=label, text=text, parameter=p.name,
            asked=float(asked), passes_at=float(shown),
        )  # fmt: skip
    return None


def _from_measured(
    measured: float | None, asked: float, whole: bool, way: str, passes: Any
) -> float | None:
    """The parameter value at the measured level, when it passes and the value just
    stricter does not (two evaluations); None otherwise (the caller searches)."""
    if measured is None or isinstance(measured, bool) or not math.isfinite(measured):
        return None
    looser = 1 if way == "lower" else -1  # the direction a parameter loosens in
    if whole:
        value: float = math.floor(measured) if way == "higher" else math.ceil(measured)
        stricter: float = value - looser
    else:
        step = 1e-6 * max(1.0, abs(measured))
        digits = 7 - math.floor(math.log10(abs(measured))) if measured else 7
        scale = 10.0**digits
        value = (math.ceil if looser > 0 else math.floor)(measured * scale) / scale
        if value == measured:
            value = measured + looser * step / 10
        stricter = value - looser * step
    if (value - asked) * looser <= 0:  # not looser than asked: the asked one failed
        return None
    if passes(value) and ((stricter - asked) * looser <= 0 or not passes(stricter)):
        return value
    return None


def _fmt(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:.6g}"


def _budget(b: Bucketization) -> int:
    """Evaluations one parameter's search may spend: all of :data:`MAX_EVALUATIONS` up to
    :data:`FULL_SEARCH_CELLS` cells, fewer in proportion above (each evaluation reads every
    cell), at least :data:`MIN_EVALUATIONS`: deterministic, whatever the machine's load."""
    cells = max(1, b.n_groups * len(b.values))
    if cells <= FULL_SEARCH_CELLS:
        return MAX_EVALUATIONS
    return max(MIN_EVALUATIONS, MAX_EVALUATIONS * FULL_SEARCH_CELLS // cells)


def _whole(
    asked: int,
    way: str,
    low: float | None,
    high: float | None,
    passes: Any,
    steps: int = MAX_EVALUATIONS,
) -> float | None:
    """Bisect the whole numbers between ``asked`` (fails) and the loosest end of the range
    (criteria are monotone in their parameters: the policy tests check the declared
    directions against the verdicts); the result was evaluated and passed."""
    loosest: int
    if way == "higher":
        loosest = math.ceil(low) if low is not None else 0
        if loosest >= asked or not passes(loosest):
            return None
    elif high is None:
        loosest = asked * 2 + 1
        for _ in range(16):
            if passes(loosest):
                break
            loosest = loosest * 2 + 1
        else:
            return None
    else:
        loosest = int(high)
        if loosest <= asked or not passes(loosest):
            return None
    good, bad = loosest, asked
    for _ in range(steps):
        if abs(good - bad) <= 1:
            return good
        mid = (good + bad) // 2
        if passes(mid):
            good = mid
        else:
            bad = mid
    return good


def _real(
    asked: float,
    way: str,
    low: float | None,
    high: float | None,
    open_low: bool,
    passes: Any,
    steps: int = MAX_EVALUATIONS,
) -> float | None:
    """Bisect between ``asked`` (fails) and the loosest end of the range; the result is a
    value that was evaluated and passed."""
    end = (low if low is not None else 0.0) if way == "higher" else high
    if end is None:
        end = asked * 2 + 1  # unbounded: widen until it passes
        for _ in range(16):
            if passes(end):
                break
            end = end * 2 + 1
        else:
            return None
    elif way == "higher" and open_low:
        end = end + 1e-12
    if not passes(end):
        return None
    bad, good = asked, float(end)
    for _ in range(steps - 2):
        mid = (bad + good) / 2
        if passes(mid):
            good = mid
        else:
            bad = mid
        if abs(good - bad) <= 1e-9 * max(1.0, abs(good)):
            break
    return _short(good, way, passes)


def _short(good: float, way: str, passes: Any) -> float:
    """The shortest decimal within 1e-7 (relative) of ``good`` on its looser side that
    passes too (``0.5000001``, not ``0.50000000047``); ``good`` itself when none does."""
    band = 1e-7 * max(1.0, abs(good))
    for digits in range(1, 10):
        scale = 10 ** (digits - 1 - math.floor(math.log10(abs(good)))) if good else 10**digits
        moved = math.floor(good * scale) if way == "higher" else math.ceil(good * scale)
        value = float(moved / scale)
        if abs(value - good) <= band and passes(value):
            return value
    return good


def composition_advice(
    result: CompositionResult, confidence: float, max_pvp: float, measure: Measure
) -> list[Advice]:
    """The way forward from a blocked composition audit (module doc): who is pinned, and
    the loosest parameters it would pass at, each re-gated on ``result``."""
    from airflow_privacy.core.composition.result import gate

    out: list[Advice] = []
    label = audit_label(confidence, max_pvp, measure)
    pinned = result.vp_c(confidence, measure)
    shown = [b.describe_public() for b in result.worst[:NAMED_GROUPS]]
    if pinned and shown:
        out.append(
            Advice(
                kind="people-pinned", criterion=label, rechecked=False,
                text=(
                    f"{pinned:,} people are pinned ({measure}, confidence >= {confidence:g}); "
                    f"worst first: " + " | ".join(shown)
                    + " -- suppress or generalize these rows' groups in the candidate, or "
                    "publish a coarser recoding of it, and audit again"
                ),
                groups=shown, people=pinned, records=result.overlap_size,
            )
        )  # fmt: skip

    limits = {"confidence": (confidence, 1.0, True, ""), "max_pvp": (max_pvp, 100.0, False, "%")}
    for param, (asked, high, open_low, unit) in limits.items():

        def passes(value: float, param: str = param) -> bool:
            given = {"confidence": confidence, "max_pvp": max_pvp, param: value}
            return gate(result, given["confidence"], given["max_pvp"], measure).safe is True

        found = _real(asked, "lower", 0.0, high, open_low, passes)
        if found is None:
            continue
        out.append(
            Advice(
                kind="parameter", criterion=label, parameter=param, asked=asked,
                passes_at=found,
                text=(
                    f"the audit passes at {param}={found:.6g}{unit} (asked {asked:g}{unit}; "
                    "re-gated on the same audit): weaker than asked, it counts only where the "
                    "dataset's policy allows it"
                ),
            )
        )  # fmt: skip
    return out


def audit_label(confidence: float, max_pvp: float, measure: Measure) -> str:
    """The audit's parameters as an advice names them."""
    return f"composition ({measure}, confidence={confidence:g}, max_pvp={max_pvp:g})"


def release_without_groups(
    release: PublishedRelease, drop: npt.NDArray[np.bool_]
) -> PublishedRelease:
    """``release`` with the groups marked in ``drop`` suppressed (their records removed)."""
    keep = np.flatnonzero(~drop)
    return replace(
        release,
        keys=tuple(release.keys[g] for g in keep),
        counts=release.counts[keep],
        members=None if release.members is None else tuple(release.members[g] for g in keep),
    )


def composition_suppression(
    population: Population,
    candidate: PublishedRelease,
    result: CompositionResult,
    reaudit: Callable[[PublishedRelease], CompositionResult],
    confidence: float,
    max_pvp: float,
    measure: Measure,
    hierarchies: Mapping[str, Hierarchy] | None = None,
) -> Advice | None:
    """Suppress the candidate's groups the pinned people fall in until the re-audit passes
    (module doc); None when it does not within :data:`AUDIT_ROUNDS` audits or only the
    whole candidate would."""
    from airflow_privacy.core.composition.locate import locate
    from airflow_privacy.core.composition.result import gate

    drop = np.zeros(len(candidate.keys), dtype=bool)
    current, audited = candidate, result
    for _ in range(AUDIT_ROUNDS):
        hit = np.flatnonzero(audited.pinned_mask(confidence, measure))
        if hit.size == 0:
            return None
        where = locate(population, current, hierarchies)
        rows = np.flatnonzero(~drop)  # the current groups' indices in the candidate
        groups = {
            int(rows[g]) for i in hit.tolist()
            for g in where.indices[where.indptr[i]:where.indptr[i + 1]].tolist()
        }  # fmt: skip
        if not groups:
            return None
        drop[sorted(groups)] = True
        if drop.all():
            return None
        current = release_without_groups(candidate, drop)
        audited = reaudit(current)
        if gate(audited, confidence, max_pvp, measure).safe is True:
            return _audit_suppression(candidate, drop, confidence, max_pvp, measure)
    return None


def _audit_suppression(
    candidate: PublishedRelease,
    drop: npt.NDArray[np.bool_],
    confidence: float,
    max_pvp: float,
    measure: Measure,
) -> Advice:
    gone = np.flatnonzero(drop)
    sizes = np.asarray(candidate.counts).sum(axis=1)
    records, total = int(sizes[gone].sum()), int(sizes.sum())
    named = [candidate.group_label(int(g)) for g in gone[np.argsort(-sizes[gone], kind="stable")]]
    shown = "; ".join(named[:NAMED_GROUPS]) + (
        f"; and {len(named) - NAMED_GROUPS:,} more" if len(named) > NAMED_GROUPS else ""
    )
    label = audit_label(confidence, max_pvp, measure)
    text = (
        f"suppressing {records:,} of {total:,} records ({records / total:.1%}) in "
        f"{gone.size:,} of {len(candidate.keys):,} groups of the candidate passes the "
        f"composition audit (re-audited against the same people and earlier releases): {shown}"
    )
    return Advice(
        kind="suppress-groups", criterion=label, text=text, groups=named[:NAMED_GROUPS],
        groups_suppressed=int(gone.size), records_suppressed=records, records=total,
    )  # fmt: skip
