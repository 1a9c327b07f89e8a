"""The algorithm-aware audit and the safe release (Zhang, Jajodia, Brodsky, CCS 2007).

:func:`audit_algorithm` answers: given the original table, the candidate sequence, the
stopping rule (``naive`` or ``safe``, :mod:`.rules`) and the released candidate ``T_r``,
what does an adversary who knows all of that and the public QIs learn? It computes the
disclosure set ``DS_r = { y in s_r(x) : the rule does not stop before r on y }`` and the
posterior ``Pr(t holds v) = |{y in DS_r : y_t = v}| / |DS_r|`` (uniform prior over the
worlds, :mod:`.worlds`):

* **exact** while the block ``s_r(x)`` has at most ``exact_limit`` worlds (default
  200,000): every world of the block is enumerated and filtered;
* **sampled** beyond it: worlds drawn uniformly from the block, kept when in ``DS_r``
  (rejection), with a binomial confidence interval per person and value
  (:mod:`.intervals`); too few accepted worlds (``min_accepted``) is reported as not
  estimable.

People whose largest posterior reaches ``threshold`` are flagged; when every criterion has
a disclosure-set form (:mod:`.predicate`) the predicate is also evaluated on ``DS_r``.

:func:`choose_release` runs the DDF itself: the first candidate the naive or the safe rule
stops at on the true table.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.algorithm_aware.intervals import binomial_interval, check_interval
from airflow_privacy.core.algorithm_aware.model import (
    Candidate,
    Population,
    check_sequence,
    find_candidate,
)
from airflow_privacy.core.algorithm_aware.predicate import Predicate
from airflow_privacy.core.algorithm_aware.result import (
    AlgorithmAuditResult,
    PersonPosterior,
    ReleaseChoice,
    SamplingInfo,
)
from airflow_privacy.core.algorithm_aware.rules import (
    EXACT_LIMIT,
    MAX_EXACT_LIMIT,
    NaiveRule,
    Rule,
    SafeRule,
    chunk_size,
    disclosure_counts,
)
from airflow_privacy.core.algorithm_aware.worlds import (
    block_size,
    format_count,
    json_count,
    log10_count,
    sample_block,
)
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.errors import InputError, opt

IntArray = npt.NDArray[np.int64]
Progress = Callable[[str], None]
Criteria = Sequence[tuple[str, Mapping[str, Any]]] | CriteriaSet

MODES = ("naive", "safe")
SAMPLE_CHUNK = 4_096


def _quiet(_message: str) -> None:
    return None


#: The most worlds a sampled audit draws: 7 s for six people on one core (the default is
#: 20,000).
MAX_SAMPLES = 10_000_000


def _whole(name: str, value: object, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < low:
        raise InputError(f"{name} must be a whole number >= {low}, got {value!r}")
    if high is not None and int(value) > high:
        raise InputError(f"{name} must be at most {high:,}, got {int(value):,}")
    return int(value)


def check_threshold(threshold: object) -> float:
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not 0.0 < float(threshold) <= 1.0
    ):
        raise InputError(f"threshold must be in (0, 1], got {threshold!r}")
    return float(threshold)


def make_rule(
    mode: str,
    population: Population,
    candidates: Sequence[Candidate],
    criteria: Criteria,
    exact_limit: int = EXACT_LIMIT,
    progress: Progress | None = None,
) -> Rule:
    """The DDF of ``mode`` over ``candidates`` with the conjunction of ``criteria``."""
    if mode not in MODES:
        raise InputError(f"unknown disclosure mode {mode!r} (known: {', '.join(MODES)})")
    check_sequence(population, candidates)
    exact_limit = _whole(opt("exact_limit"), exact_limit, 1, MAX_EXACT_LIMIT)
    predicate = Predicate(criteria, population.values, population.totals, population.sensitive)
    if mode == "safe":
        return SafeRule(population, candidates, predicate, exact_limit, progress)
    return NaiveRule(population, candidates, predicate)


def choose_release(rule: Rule) -> ReleaseChoice:
    """The candidate ``rule`` releases on the true table, with the safe rule's record of
    the candidates it skipped."""
    started = time.perf_counter()
    x = rule.population.truth
    chosen = rule.release(x)
    skipped: list[dict[str, Any]] = []
    ds: int | None = None
    bs: int | None = None
    if isinstance(rule, SafeRule):
        upto = chosen if chosen is not None else len(rule.candidates)
        for i in range(upto + (1 if chosen is not None else 0)):
            cand = rule.candidates[i]
            d = rule.decide(i, cand.counts(x[None, :], rule.v)[0])
            if i == chosen:
                ds, bs = d.disclosure_set_size, json_count(d.block_size)
                continue
            skipped.append({
                "candidate": cand.name,
                "block_size": json_count(d.block_size),
                "log10_block_size": log10_count(d.block_size),
                "disclosure_set_size": d.disclosure_set_size,
                "declined_too_large": d.declined_too_large,
                "table_fails": d.table_fails,
                "failing_people": len(d.failing_people),
            })  # fmt: skip
    elif chosen is not None:
        bs = json_count(block_size(rule.candidates[chosen].counts(x[None, :], rule.v)[0]))
    return ReleaseChoice(
        mode=rule.name,
        released=rule.candidates[chosen].name if chosen is not None else None,
        released_index=chosen,
        disclosure_set_size=ds,
        block_size=bs,
        skipped=skipped,
        decisions=rule.decisions() if isinstance(rule, SafeRule) else 0,
        worlds_enumerated=rule.worlds_enumerated if isinstance(rule, SafeRule) else 0,
        elapsed_seconds=round(time.perf_counter() - started, 4),
    )


def audit_algorithm(
    population: Population,
    candidates: Sequence[Candidate],
    criteria: Criteria,
    released: int | str | None = None,
    mode: str = "naive",
    threshold: float = 1.0,
    exact_limit: int = EXACT_LIMIT,
    samples: int = 20_000,
    seed: int = 0,
    confidence: float = 0.95,
    interval: str = "clopper-pearson",
    min_accepted: int = 100,
    people_limit: int = 200,
    progress: Progress | None = None,
) -> AlgorithmAuditResult:
    """Disclosure set and posterior of the release of ``released`` (module doc).

    ``released`` is a candidate name or 0-based position; ``None`` audits the candidate the
    rule itself releases on the true table.
    """
    started = time.perf_counter()
    report = progress or _quiet
    threshold = check_threshold(threshold)
    samples = _whole(opt("samples"), samples, 1, MAX_SAMPLES)
    seed = _whole("seed", seed, 0)
    min_accepted = _whole("min accepted", min_accepted, 1)
    people_limit = _whole("people limit", people_limit, 0)
    check_interval(interval, confidence)
    rule = make_rule(mode, population, candidates, criteria, exact_limit, progress)
    exact_limit = int(exact_limit)
    cands = rule.candidates
    x = population.truth
    v = population.n_values
    would = rule.release(x)
    if released is None:
        if would is None:
            raise InputError(
                f"the {mode} algorithm releases no candidate on this table "
                f"({rule.predicate.label} never holds); give the released candidate"
            )
        r = would
    else:
        r = find_candidate(cands, released)
    cand = cands[r]
    key = cand.counts(x[None, :], v)[0]
    consistent = block_size(key)
    passes = bool(rule.stops(r, x[None, :])[0])
    in_set = bool(rule.survives(r, x[None, :])[0])
    report(
        f"audit ({mode}): candidate {r + 1} of {len(cands)} ({cand.name}); block of "
        f"{format_count(consistent)} worlds"
    )
    sampling: SamplingInfo | None = None
    lows: IntArray | None = None
    if consistent <= exact_limit:
        method = "exact"
        world_counts, size = disclosure_counts(rule, r, cand, key)
        ds_size: int | None = size
        trials = size
    else:
        method = "sampling"
        ds_size = None
        world_counts, trials, sampling, bounds = _sample(
            rule, r, cand, samples, seed, confidence, interval, min_accepted, consistent, report
        )
        lows = bounds
    if method == "exact":
        report(f"audit: disclosure set of {trials:,} worlds")
    else:
        report(f"audit: {trials:,} accepted samples in the disclosure set")
    people, flagged, rows = _people(
        population, cand, world_counts, trials, threshold, lows, people_limit
    )
    on_set = _predicate_on_set(rule.predicate, cand, world_counts, trials, population, method, lows)
    safe = not flagged and on_set.get("passes") is not False and trials > 0
    reason = _reason(mode, cand.name, method, trials, rows, threshold, on_set, sampling)
    return AlgorithmAuditResult(
        mode=mode,
        criteria=rule.predicate.to_list(),
        predicate=rule.predicate.label,
        candidates=[c.name for c in cands],
        released=cand.name,
        released_index=r,
        released_passes=passes,
        algorithm_release=cands[would].name if would is not None else None,
        method=method,
        exact_limit=exact_limit,
        consistent_worlds=json_count(consistent),
        log10_consistent_worlds=log10_count(consistent),
        disclosure_set_size=ds_size,
        true_world_in_set=in_set,
        threshold=threshold,
        flagged=flagged,
        flagged_rows=rows,
        predicate_on_set=on_set,
        safe=bool(safe),
        reason=reason,
        people=people,
        people_total=population.n,
        sampling=sampling,
        elapsed_seconds=round(time.perf_counter() - started, 4),
        details={"table_checks": rule.predicate.table_checks},
    )


def _sample(
    rule: Rule,
    r: int,
    cand: Candidate,
    samples: int,
    seed: int,
    confidence: float,
    interval: str,
    min_accepted: int,
    consistent: int,
    report: Progress,
) -> tuple[IntArray, int, SamplingInfo, Any]:
    pop = rule.population
    rng = np.random.default_rng(seed)
    world_counts = np.zeros((pop.n, pop.n_values), dtype=np.int64)
    accepted = 0
    drawn = 0
    widest = max(c.n_groups for c in rule.candidates[: r + 1]) * pop.n_values
    step = chunk_size(pop.n, widest, SAMPLE_CHUNK)
    while drawn < samples:
        size = min(step, samples - drawn)
        chunk = sample_block(cand, pop.truth, size, rng)
        kept = chunk[rule.survives(r, chunk)]
        drawn += size
        accepted += int(kept.shape[0])
        if kept.shape[0]:
            flat = np.arange(pop.n, dtype=np.int64)[None, :] * pop.n_values + kept
            world_counts += np.bincount(flat.reshape(-1), minlength=pop.n * pop.n_values).reshape(
                pop.n, pop.n_values
            )
        report(f"audit: sampled {drawn:,} of {samples:,} worlds, {accepted:,} in the set")
    lo, hi = binomial_interval(np.asarray([accepted]), samples, confidence, interval)
    rate = [float(lo[0]), float(hi[0])]
    log_block = log10_count(consistent)
    info = SamplingInfo(
        samples=samples,
        accepted=accepted,
        acceptance_rate=accepted / samples,
        acceptance_interval=rate,
        estimated_set_size=_scaled(rate, consistent),
        log10_estimated_set_size=[math.log10(b) + log_block if b > 0 else None for b in rate],
        confidence=confidence,
        interval=interval,
        seed=seed,
        min_accepted=min_accepted,
        estimable=accepted >= min_accepted,
    )
    bounds = binomial_interval(world_counts, accepted, confidence, interval) if accepted else None
    return world_counts, accepted, info, bounds


def _scaled(bounds: list[float], block: int) -> list[float] | None:
    """``bounds * block`` as floats, or ``None`` when the block overflows a float."""
    try:
        size = float(block)
    except OverflowError:
        return None
    return [b * size for b in bounds]


def _people(
    pop: Population,
    cand: Candidate,
    world_counts: IntArray,
    trials: int,
    threshold: float,
    bounds: Any,
    limit: int,
) -> tuple[list[PersonPosterior], list[str], list[int]]:
    """The ``limit`` people with the highest posteriors, and every flagged person by name
    and by row number (the pseudonymous position messages use)."""
    if trials == 0:
        return [], [], []
    post = world_counts / float(trials)
    top = post.max(axis=1)
    flagged_idx = np.flatnonzero(top >= threshold)
    order = np.lexsort((np.arange(pop.n), -top))
    out: list[PersonPosterior] = []
    for p in order[:limit].tolist():
        present = np.flatnonzero(world_counts[p] > 0)
        interval = None
        if bounds is not None:
            lo, hi = bounds
            interval = {
                pop.values[j]: [float(lo[p, j]), float(hi[p, j])] for j in range(pop.n_values)
            }
        t = int(np.argmax(post[p]))
        out.append(PersonPosterior(
            person=pop.people[p],
            group=cand.labels[int(cand.groups[p])],
            true_value=pop.values[int(pop.truth[p])],
            top_value=pop.values[t],
            top_posterior=float(post[p, t]),
            flagged=bool(top[p] >= threshold),
            posterior={pop.values[j]: float(post[p, j]) for j in present},
            worlds={pop.values[j]: int(world_counts[p, j]) for j in present},
            interval=interval,
            row=int(p),
        ))  # fmt: skip
    rows = flagged_idx.tolist()
    return out, [pop.people[p] for p in rows], [int(p) for p in rows]


def _predicate_on_set(
    predicate: Predicate,
    cand: Candidate,
    world_counts: IntArray,
    trials: int,
    pop: Population,
    method: str,
    bounds: Any = None,
) -> dict[str, Any]:
    """The predicate on the disclosure set. Sampled: a person counts as failing only when
    no distribution inside their confidence intervals passes; the others whose estimate
    fails are listed as ``within_error`` (:meth:`Predicate.within_error`)."""
    empty: dict[str, Any] = {"failing_people": [], "within_error": []}
    if not predicate.has_posterior_form:
        return {"supported": False, "passes": None, **empty, "estimated": False}
    if trials == 0:
        return {"supported": True, "passes": None, **empty, "estimated": True}
    failing = predicate.people_failing(cand, world_counts)
    within: list[int] = []
    if bounds is not None and int(cand.sizes.min()) >= predicate.min_k:
        within = predicate.within_error(failing, bounds[0], bounds[1])
        failing = [p for p in failing if p not in set(within)]
    return {
        "supported": True,
        "passes": not failing,
        "failing_people": [pop.people[p] for p in failing],
        "within_error": [pop.people[p] for p in within],
        "estimated": method == "sampling",
    }


def _reason(
    mode: str,
    name: str,
    method: str,
    trials: int,
    flagged: list[int],
    threshold: float,
    on_set: dict[str, Any],
    sampling: SamplingInfo | None,
) -> str:
    if trials == 0:
        if method == "exact":
            return (f"no world leads the {mode} algorithm to release {name}: the release is "
                    "inconsistent with the algorithm")  # fmt: skip
        return "no sampled world was in the disclosure set: acceptance too rare to estimate"
    est = "" if method == "exact" else " (estimated)"
    parts = []
    if flagged:  # by row number: an id column's values are raw identifiers
        shown = ", ".join(str(p) for p in flagged[:5]) + (", ..." if len(flagged) > 5 else "")
        word = "row" if len(flagged) == 1 else "rows"
        parts.append(
            f"{len(flagged)} people reach posterior >= {threshold:g}{est} ({word} {shown} of "
            "the input)"
        )
    if on_set.get("passes") is False:
        n = len(on_set["failing_people"])
        parts.append(f"the predicate fails on the disclosure set for {n} people{est}")
    if sampling is not None and not sampling.estimable:
        parts.append(f"only {sampling.accepted} accepted samples (< {sampling.min_accepted}): "
                     "acceptance too rare to estimate reliably")  # fmt: skip
    if not parts:
        return (
            f"an adversary who knows the {mode} algorithm learns nothing that crosses the "
            f"threshold {threshold:g} from {name}{est}"
        )
    return "; ".join(parts)
