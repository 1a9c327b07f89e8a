"""The intersection attack (Ganta, Kasiviswanathan, Smith 2008, Algorithm 1), run before an
adversary does.

"Composition Attacks and Auxiliary Information in Data Privacy" (KDD 2008), section 2.1. For
each individual ``i`` of the overlapping population ``P`` and
each release ``R_j`` it is in: ``e_ij`` = the equivalence class(es) ``i`` is located in,
``s_ij`` = their set of sensitive values, ``EA_ij = |s_ij|`` (Definition 8);
``S_i = s_i1 ∩ ... ∩ s_in``, ``EA-hat_i = |S_i|``,
``Anon_Drop_i = min_j EA_ij - EA-hat_i``, ``C_i = 1 / EA-hat_i`` (Definition 9);
``VP = {i : Anon_Drop_i > 0}``, ``VP_C = {i : C_i >= C}``, ``PVP_C = |VP_C| * 100 / |P|``.

Who is in which release (line 2, ``P``):

* ``overlap="known"``: from keyed identifier hashes; ``P`` = individuals of the candidate
  known to be in at least one prior release;
* ``overlap="worst-case"`` (default): everyone locatable in a release is assumed to be in it;
  ``P`` = individuals located in the candidate and in at least one prior.

The candidate's population is the set of targets (a release can only hurt the people in it).
When an individual's sets have an empty intersection, the presence assumption is
contradicted (in the worst case: the person is not in every release they are locatable in);
the attack then combines the candidate with the subset of priors that is consistent and
gives the adversary the highest confidence, and the individual is flagged ``inconsistent``
(dropped from ``P`` when no prior is consistent with the candidate). Beside ``C_i`` the
result carries the frequency-aware posterior of
:mod:`airflow_privacy.core.composition.posterior`.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.composition.descriptors import hierarchy_covers
from airflow_privacy.core.composition.locate import (
    CodedColumn,
    Location,
    Population,
    column_codes,
    locate,
)
from airflow_privacy.core.composition.posterior import combine, most_likely
from airflow_privacy.core.composition.release import PublishedRelease
from airflow_privacy.core.composition.result import (
    MEASURES,
    Breach,
    CompositionResult,
    Measure,
    ReleaseSummary,
    check_confidence,
)
from airflow_privacy.core.counting import int_view
from airflow_privacy.core.hierarchy import check_hierarchy_columns
from airflow_privacy.errors import InputError, opt

if TYPE_CHECKING:
    from airflow_privacy.core.hierarchy import Hierarchy

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
Overlap = Literal["worst-case", "known"]
MissingQI = Literal["error", "suppressed"]

DEFAULT_CONFIDENCES = (1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5)
_UNLOCATABLE_EXAMPLES = 20


def check_releases(
    candidate: PublishedRelease,
    priors: Sequence[PublishedRelease],
    missing_qi: MissingQI = "error",
) -> None:
    """Releases can be intersected only when they publish the same sensitive attribute and
    the priors publish the candidate's QIs (``missing_qi="suppressed"``: a QI a prior does not
    publish counts as ``*`` there)."""
    if missing_qi not in ("error", "suppressed"):
        raise InputError(f"missing_qi must be 'error' or 'suppressed', got {missing_qi!r}")
    for prior in priors:
        if prior.sensitive != candidate.sensitive:
            raise InputError(
                f"release {prior.name!r} publishes sensitive attribute {prior.sensitive!r}, "
                f"the candidate {candidate.name!r} publishes {candidate.sensitive!r}: only "
                "releases of the same sensitive attribute can be intersected"
            )
        missing = [q for q in candidate.qis if q not in prior.qis]
        if missing and missing_qi == "error":
            raise InputError(
                f"QI {missing[0]!r} of the candidate is missing from release {prior.name!r} "
                f"(its QIs: {', '.join(prior.qis)}); give {opt('missing_qi')} suppressed "
                "to treat it as '*' there"
            )


def composition_audit(
    population: Population,
    candidate: PublishedRelease,
    priors: Sequence[PublishedRelease],
    *,
    overlap: Overlap = "worst-case",
    prior_members: Sequence[frozenset[str] | None] | None = None,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    missing_qi: MissingQI = "error",
    confidences: Sequence[float] = DEFAULT_CONFIDENCES,
    top: int = 10,
    benign: Collection[str] = (),
    rank: Measure = "ganta",
) -> CompositionResult:
    """Run Algorithm 1 on ``population`` (the candidate's people, exact QI values) against
    ``candidate`` and ``priors``; see the module docstring.

    ``benign``: sensitive values whose disclosure is not a breach (docs/composition.md,
    "Benign values"). The attack itself is unchanged (the adversary intersects every value);
    a person counts as pinned only to a non-benign value: with Ganta's measure when the
    remaining set ``S_i`` holds a non-benign value (the adversary's confidence in each of
    its values is ``1 / |S_i|``), with the posterior measure by the largest posterior of a
    non-benign value. Who is pinned to benign values only is no breach.

    ``rank``: the measure the ``top`` worst individuals are sorted by, first (the one the
    gate decides on: a posterior gate lists the highest posteriors first), the other
    breaking ties."""
    check_releases(candidate, priors, missing_qi)
    if hierarchies is not None and not isinstance(hierarchies, Mapping):
        raise InputError("hierarchies must map a column name to a Hierarchy")
    check_hierarchy_columns(hierarchies, [q for r in (candidate, *priors) for q in r.qis])
    if overlap not in ("worst-case", "known"):
        raise InputError(f"overlap must be 'worst-case' or 'known', got {overlap!r}")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise InputError(f"top must be a whole number >= 0, got {top!r}")
    if rank not in MEASURES:
        raise InputError(f"unknown measure {rank!r} (known: {', '.join(MEASURES)})")
    confs = tuple(check_confidence(c) for c in confidences)
    releases = [candidate, *priors]
    names = _unique_names(releases)
    n, n_rel = population.n, len(releases)

    members: list[frozenset[str] | None] = [None] * n_rel
    if overlap == "known":
        if population.id_hashes is None:
            raise InputError(
                f"overlap 'known' needs identifier hashes of the population ({opt('id_column')})"
            )
        given = list(prior_members or [])
        if len(given) != len(priors):
            raise InputError("overlap 'known' needs the identifier hashes of every prior release")
        for prior, m in zip(priors, given, strict=True):
            if m is None:
                raise InputError(
                    f"release {prior.name!r} has no identifier hashes: the overlap with it is "
                    "unknown; use overlap 'worst-case'"
                )
        members = [None, *given]

    covers = {q: hierarchy_covers(h) for q, h in (hierarchies or {}).items()}
    known_full: BoolArray | None = None  # who is in which release, per person
    if overlap == "known":
        known_full = np.zeros((n, n_rel), dtype=bool)
        assert population.id_hashes is not None
        hashes = population.id_hashes
        for j in range(1, n_rel):
            m = members[j]
            assert m is not None
            known_full[:, j] = np.fromiter((h in m for h in hashes), dtype=bool, count=n)
        known_full[:, 0] = True
    # people with the same QI values (and, with a known overlap, in the same releases) meet
    # the same fate: the attack runs once per such group, weighted by its people
    wanted = dict.fromkeys(q for r in releases for q in r.qis)
    qcols = [q for q in wanted if q in population.columns]
    inverse, first = _group_people(population, qcols, known_full)
    w = np.bincount(inverse, minlength=first.shape[0]).astype(np.int64)
    people = Population({q: _take(population.columns[q], first) for q in qcols}, first.shape[0])
    n_u = people.n
    locs = [locate(people, r, covers=covers) for r in releases]

    universe: dict[str, int] = {}
    for r in releases:
        for v in r.values:
            universe.setdefault(v, len(universe))
    values = tuple(universe)
    n_val = len(values)
    dists: list[FloatArray] = []
    for r, loc in zip(releases, locs, strict=True):
        d = np.zeros((n_u, n_val))
        d[:, [universe[v] for v in r.values]] = loc.weighted
        dists.append(d)
    support = np.stack([d > 0 for d in dists], axis=1)  # (groups, releases, values)
    located = np.stack([loc.located for loc in locs], axis=1)

    present = located.copy()
    known_present = np.zeros((n_u, n_rel), dtype=bool)
    if known_full is not None:
        known_present = known_full[first]
        present = known_present & located

    used = present.copy()
    in_overlap = present[:, 0] & present[:, 1:].any(axis=1)
    used[~in_overlap] = False
    used[~in_overlap & present[:, 0], 0] = True  # candidate-only people: their own group

    inter: BoolArray = np.asarray(np.where(used[:, :, None], support, True).all(axis=1))
    inter[~used.any(axis=1)] = False
    ea_hat = inter.sum(axis=1).astype(np.int64)

    # contradicted presence: combine the most revealing consistent subset of priors
    inconsistent = in_overlap & (ea_hat == 0)
    dropped = 0
    for i in np.flatnonzero(inconsistent).tolist():
        best = _best_consistent_subset(support[i], used[i])
        used[i] = False
        if best is None:
            in_overlap[i] = False
            used[i, 0] = True
            dropped += int(w[i])
        else:
            used[i, list(best)] = True
        inter[i] = support[i][used[i]].all(axis=0)
        ea_hat[i] = int(inter[i].sum())

    ea = np.where(used, support.sum(axis=2), 0).astype(np.int64)
    min_ea = np.where(used, ea, np.iinfo(np.int64).max).min(axis=1)
    min_ea[~used.any(axis=1)] = 0
    anon_drop = np.where(used.any(axis=1), min_ea - ea_hat, 0).astype(np.int64)
    confidence = np.divide(1.0, ea_hat, out=np.zeros(n_u, dtype=np.float64), where=ea_hat > 0)
    declared = tuple(sorted({str(v) for v in benign}))
    harmful = np.array([v not in declared for v in values], dtype=bool)  # non-benign values
    # a breach needs a non-benign value left: S_i minus the benign values is not empty
    sensitive_left = (inter & harmful).any(axis=1)
    sensitive_left_alone = (support[:, 0, :] & harmful).any(axis=1) & used[:, 0]
    post = combine(dists, used)
    post_max, post_arg = most_likely(np.where(harmful, post, 0.0))
    alone_use = np.zeros_like(used)
    alone_use[:, 0] = used[:, 0]
    post_alone, _ = most_likely(np.where(harmful, combine(dists[:1], alone_use[:, :1]), 0.0))
    del dists, post

    summaries = _summaries(
        releases, names, locs, present, known_present, used, in_overlap, ea, overlap, w
    )
    averages = _averages(names, ea, ea_hat, anon_drop, used, in_overlap, min_ea, w)
    ganta = -np.where(sensitive_left, confidence, 0.0)
    keys = (-post_max, ganta) if rank == "ganta" else (ganta, -post_max)
    worst_rows = _worst(keys, in_overlap, inverse, first, w, top)
    worst = tuple(
        _breach(
            i,
            int(inverse[i]),
            people,
            releases,
            names,
            locs,
            used,
            support,
            inter,
            values,
            ea,
            ea_hat,
            anon_drop,
            confidence,
            post_max,
            post_arg,
            bool(inconsistent[inverse[i]]),
            bool(sensitive_left[inverse[i]]),
        )
        for i in worst_rows
    )
    unloc = [
        {"row": i, "reason": locs[0].reasons.get(int(inverse[i]), "not located")}
        for i in np.flatnonzero(~located[inverse, 0])[:_UNLOCATABLE_EXAMPLES].tolist()
    ]
    return CompositionResult(
        overlap=overlap,
        releases=summaries,
        values=values,
        population=n,
        overlap_size=int(w[in_overlap].sum()),
        candidate_only=int(w[present[:, 0] & ~in_overlap].sum()),
        inconsistent=int(w[inconsistent].sum()),
        inconsistent_dropped=dropped,
        unlocatable=unloc,
        vp=int(w[(anon_drop > 0) & in_overlap].sum()),
        averages=averages,
        worst=worst,
        confidences=confs,
        group_of=inverse,
        group_size=w,
        by_group={
            "in_overlap": in_overlap,
            "used": used,
            "ea": ea,
            "ea_hat": ea_hat,
            "anon_drop": anon_drop,
            "confidence": confidence,
            "posterior": post_max,
            "posterior_value": post_arg,
            "posterior_alone": post_alone,
            "intersections": inter,
            "sensitive_left": sensitive_left,
            "sensitive_left_alone": sensitive_left_alone,
        },
        benign=declared,
    )


def _group_people(
    population: Population, columns: Sequence[str], known: BoolArray | None
) -> tuple[IntArray, IntArray]:
    """``(group of each person, first person of each group)``: people with the same values
    of ``columns`` (and the same row of ``known``), groups numbered by their first person."""
    n = population.n
    parts: list[IntArray] = []
    cards: list[int] = []
    for q in columns:
        vals, codes = column_codes(population.columns[q])
        parts.append(codes)
        cards.append(max(len(vals), 1))
    if known is not None:
        for j in range(known.shape[1]):
            parts.append(known[:, j].astype(np.int64))
            cards.append(2)
    if not parts:
        return np.zeros(n, dtype=np.int64), np.zeros(min(n, 1), dtype=np.int64)
    if float(np.prod(np.asarray(cards, dtype=np.float64))) < 2.0**62:
        import pyarrow as pa
        import pyarrow.compute as pc

        key = np.zeros(n, dtype=np.int64)
        for codes, card in zip(parts, cards, strict=True):
            key *= card
            key += codes
        # a hash pass (Arrow), not a sort: groups numbered in order of first appearance,
        # so a group's first person is where the running maximum of the numbers grows
        inverse = int_view(pc.dictionary_encode(pa.array(key)).indices).astype(np.int64)
        grows = np.ones(n, dtype=bool)
        grows[1:] = inverse[1:] > np.maximum.accumulate(inverse)[:-1]
        return inverse, np.flatnonzero(grows).astype(np.int64)
    _, first, inverse = np.unique(
        np.stack(parts, axis=1), axis=0, return_index=True, return_inverse=True
    )
    inverse = inverse.reshape(-1).astype(np.int64)
    # groups renumbered in order of their first person
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return rank[inverse].astype(np.int64), first[order].astype(np.int64)


def _take(column: Sequence[str], rows: IntArray) -> Sequence[str]:
    if isinstance(column, CodedColumn):
        return CodedColumn(column.values, column.codes[rows])
    return tuple(column[int(i)] for i in rows)


def _worst(
    keys: tuple[FloatArray, FloatArray],
    in_overlap: BoolArray,
    inverse: IntArray,
    first: IntArray,
    w: IntArray,
    top: int,
) -> list[int]:
    """The ``top`` people of ``P`` sorted by ``keys`` (the last key first), ties by their row,
    from per-group keys: the groups up to the ``top``-th person and every group tied with the
    last, then their people sorted."""
    if top == 0:
        return []
    rows = np.flatnonzero(in_overlap)
    if rows.size == 0:
        return []
    order = rows[np.lexsort((first[rows], keys[0][rows], keys[1][rows]))]
    reach = int(np.searchsorted(np.cumsum(w[order]), top))
    last = order[min(reach, order.shape[0] - 1)]
    tied = (keys[0][order] == keys[0][last]) & (keys[1][order] == keys[1][last])
    chosen = order[: min(reach, order.shape[0] - 1) + 1]
    chosen = np.union1d(chosen, order[tied])
    mask = np.zeros(first.shape[0], dtype=bool)
    mask[chosen] = True
    persons = np.flatnonzero(mask[inverse])
    g = inverse[persons]
    ranked = persons[np.lexsort((persons, keys[0][g], keys[1][g]))]
    return [int(i) for i in ranked[:top]]


def _unique_names(releases: Sequence[PublishedRelease]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for r in releases:
        k = seen.get(r.name, 0)
        seen[r.name] = k + 1
        out.append(r.name if k == 0 else f"{r.name} ({k + 1})")
    return out


def _best_consistent_subset(support: BoolArray, used: BoolArray) -> tuple[int, ...] | None:
    """Among subsets of the used priors (with the candidate, release 0), the one whose
    intersection with the candidate is non-empty and smallest (ties: more releases)."""
    priors = [j for j in np.flatnonzero(used).tolist() if j != 0]
    best: tuple[int, ...] | None = None
    best_key: tuple[int, int] | None = None
    for size in range(len(priors), 0, -1):
        for combo in itertools.combinations(priors, size):
            chosen = (0, *combo)
            left = int(support[list(chosen)].all(axis=0).sum())
            if left == 0:
                continue
            key = (left, -size)
            if best_key is None or key < best_key:
                best, best_key = chosen, key
    return best


def _summaries(
    releases: Sequence[PublishedRelease],
    names: Sequence[str],
    locs: Sequence[Location],
    present: BoolArray,
    known_present: BoolArray,
    used: BoolArray,
    in_overlap: BoolArray,
    ea: IntArray,
    overlap: Overlap,
    w: IntArray,
) -> tuple[ReleaseSummary, ...]:
    """Per release, over the people (each row of the arrays stands for ``w`` of them)."""

    def count(mask: BoolArray) -> int:
        return int(w[mask].sum())

    def mean(x: npt.NDArray[np.float64] | IntArray, mask: BoolArray) -> float | None:
        total = int(w[mask].sum())
        return float((x[mask] * w[mask]).sum() / total) if total else None

    out = []
    for j, (r, loc) in enumerate(zip(releases, locs, strict=True)):
        sizes = np.zeros(len(loc.indptr) - 1)
        if len(loc.indices):
            per = r.sizes[loc.indices].astype(np.float64)
            sizes = np.add.reduceat(np.append(per, 0.0), loc.indptr[:-1]) * (loc.n_matches > 0)
        sel = used[:, j] & in_overlap
        out.append(
            ReleaseSummary(
                name=names[j],
                role="candidate" if j == 0 else "prior",
                kind=r.kind,
                records=r.n_records,
                groups=r.n_groups,
                located=count(loc.located),
                ambiguous=count(loc.n_matches > 1),
                unlocatable=count(~loc.located),
                present=count(present[:, j])
                if overlap == "worst-case" or j == 0
                else count(known_present[:, j]),
                present_unlocatable=count(known_present[:, j] & ~loc.located)
                if overlap == "known"
                else 0,
                combined_for=count(sel),
                avg_group_size=mean(sizes, sel),
                avg_ea=mean(ea[:, j], sel),
            )
        )
    return tuple(out)


def _averages(
    names: Sequence[str],
    ea: IntArray,
    ea_hat: IntArray,
    anon_drop: IntArray,
    used: BoolArray,
    in_overlap: BoolArray,
    min_ea: IntArray,
    w: IntArray,
) -> dict[str, object]:
    """Averages over ``P`` (section 3.3, Figure 4): prior effective anonymity per release, the
    smallest prior one, the posterior one, and the drop (each row stands for ``w`` people)."""
    if not in_overlap.any():
        return {
            "prior_ea": {},
            "min_prior_ea": None,
            "posterior_ea": None,
            "anon_drop": None,
            "relative_drop": None,
        }

    def mean(x: IntArray, mask: BoolArray) -> float:
        return float((x[mask] * w[mask]).sum() / w[mask].sum())

    sel = in_overlap
    prior = {
        names[j]: mean(ea[:, j], sel & used[:, j]) if (sel & used[:, j]).any() else None
        for j in range(len(names))
    }
    min_prior = mean(min_ea, sel)
    post = mean(ea_hat, sel)
    drop = mean(anon_drop, sel)
    return {
        "prior_ea": prior,
        "min_prior_ea": min_prior,
        "posterior_ea": post,
        "anon_drop": drop,
        "relative_drop": drop / min_prior if min_prior > 0 else None,
    }


def _breach(
    row: int,
    i: int,
    population: Population,
    releases: Sequence[PublishedRelease],
    names: Sequence[str],
    locs: Sequence[Location],
    used: BoolArray,
    support: BoolArray,
    inter: BoolArray,
    values: Sequence[str],
    ea: IntArray,
    ea_hat: IntArray,
    anon_drop: IntArray,
    confidence: FloatArray,
    post_max: FloatArray,
    post_arg: IntArray,
    inconsistent: bool,
    sensitive_left: bool,
) -> Breach:
    qis = list(dict.fromkeys(q for r in releases for q in r.qis))
    parts = []
    for j in np.flatnonzero(used[i]).tolist():
        parts.append(
            {
                "release": names[j],
                "groups": [releases[j].group_label(g) for g in locs[j].groups(i)],
                "values": [values[int(v)] for v in np.flatnonzero(support[i, j])],
                "ea": int(ea[i, j]),
            }
        )
    return Breach(
        row=row,
        qis={q: population.columns[q][i] for q in qis},
        releases=parts,
        intersection=[values[int(v)] for v in np.flatnonzero(inter[i])],
        ea_hat=int(ea_hat[i]),
        anon_drop=int(anon_drop[i]),
        confidence=float(confidence[i]),
        posterior=float(post_max[i]),
        most_likely=values[int(post_arg[i])] if sensitive_left else "",
        inconsistent=inconsistent,
        sensitive_left=sensitive_left,
    )
