"""Algorithm-aware disclosure (Zhang, Jajodia, Brodsky, CCS 2007): the exact audit against
the straightforward algorithm, the safe lattice mode's utility cost on Adult, and the
sampled audit at scale.

1. **Exact audit vs the straightforward algorithm.** Tables of the paper's shape (two QIs
   with 3 x 2 values, candidates ``(q1, q2), (q1), (q2), (*)``, distinct sensitive values
   but one repeated; seeded), entropy 2-diversity, tables on which the naive release is not
   the first candidate. *Baseline*: enumerate every world of ``D`` (every distinct
   arrangement of the table's multiset of sensitive values), run the naive DDF on every
   world (numpy over the worlds, candidate by candidate), keep the worlds that release the
   same candidate with the same table and count each person's values. *Ours*:
   ``audit_algorithm(..., mode="naive")`` (exact: the released block only, enumerated and
   filtered). Both must give the same disclosure set size and posteriors (asserted,
   1e-9). The safe DDF's release choice (``choose_release(make_rule("safe", ...))``) is timed
   on the same tables. Ours is the best of ``--repeat`` runs, the baseline runs once.
   Ratio = baseline / ours.
2. **Safe vs naive lattice mode on Adult samples.** Seeded random samples of ``n`` Adult
   records, QIs age (ARX hierarchy), sex, race (a lattice of 20 nodes), sensitive
   marital-status; for every sample ``anonymize(..., "lattice", disclosure="naive")`` and
   ``disclosure="safe"``; the naive release is audited in naive mode over the lattice order
   (``Generalizer.lattice_sequence``) and the safe release in safe mode (it must pass:
   asserted). A sweep over larger ``n`` shows where the safe mode stops (its blocks exceed
   the disclosure limit).
3. **Sampled audit at scale.** The naive lattice release of Adult slices (age, sex, race;
   occupation; entropy 2-diversity, so the released node is not the first one) audited by
   rejection sampling with ``audit_algorithm`` (blocks up to ~10^29,000 worlds): time,
   acceptance, and the largest posterior beside what the released table alone tells.

Usage: ``.venv/bin/python -m benchmarks.bench_algorithm_aware [--sizes 6,7,8,9,10]
[--adult-sizes 8,10,12] [--adult-samples 60] [--scan-sizes 14,16,18,20] [--scan-samples 12]
[--slices 300,1000,30162] [--audit-samples 2000] [--repeat 5] [--seed 2007]``. Writes
``benchmarks/results/algorithm_aware.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import re
import statistics
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from airflow_privacy.core.algorithm_aware import (
    AlgorithmAuditResult,
    Candidate,
    Population,
    ReleaseChoice,
    anonymize,
    audit_algorithm,
    choose_release,
    make_rule,
)
from airflow_privacy.core.algorithm_aware.candidates import Generalizer
from airflow_privacy.core.algorithm_aware.intervals import binomial_interval
from airflow_privacy.core.algorithm_aware.rules import EXACT_LIMIT
from airflow_privacy.core.algorithm_aware.worlds import log10_count, multinomial
from airflow_privacy.core.anonymize import AnonymizationResult
from airflow_privacy.core.datasets import adult_hierarchies, load_adult
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.errors import InputError
from benchmarks.machine import hardware
from benchmarks.timing import best_time

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Criterion = tuple[str, dict[str, Any]]

RESULTS = Path(__file__).resolve().parent / "results" / "algorithm_aware.json"
ENTROPY2: Criterion = ("entropy-l-diversity", {"l": 2})
RECURSIVE: Criterion = ("recursive-cl-diversity", {"c": 2, "l": 2})
ADULT_QIS = ["age", "sex", "race"]
ADULT_SENSITIVE = "marital-status"
SCALE_SENSITIVE = "occupation"
LETTERS = "abcdefghijklmnop"
DECLINED = re.compile(r"\((\d+) of (\d+) nodes have blocks larger")


# --------------------------------------------------------------------------- part 1
def paper_table(n: int, rng: random.Random) -> tuple[list[str], list[list[int]]]:
    """The paper's shape (tests/core/algorithm_aware/test_algorithm_aware_properties.py
    ``paper_like``) with
    ``n`` people: values distinct but one repeated, QIs with 3 and 2 values, candidates
    ``(q1, q2), (q1), (q2), (*)``."""
    base = rng.sample(LETTERS, n - 1)
    values = [*base, rng.choice(base)]
    rng.shuffle(values)
    q1 = [rng.randrange(3) for _ in range(n)]
    q2 = [rng.randrange(2) for _ in range(n)]
    return values, [[a * 2 + b for a, b in zip(q1, q2, strict=True)], q1, q2, [0] * n]


def every_world(x: IntArray) -> npt.NDArray[np.int8]:
    """``D``: every distinct arrangement of the multiset ``x`` (one world per row)."""
    n = x.shape[0]
    flat = np.fromiter(
        itertools.chain.from_iterable(itertools.permutations(x.tolist())),
        dtype=np.int8,
        count=n * math.factorial(n),
    )
    out: npt.NDArray[np.int8] = np.unique(flat.reshape(-1, n), axis=0)
    return out


def shown_counts(worlds: npt.NDArray[np.int8], groups: Sequence[int], v: int) -> IntArray:
    """``(W, G, V)``: per world, each group's count of each value (the table it shows)."""
    keys = sorted(set(groups))
    out = np.zeros((worlds.shape[0], len(keys), v), dtype=np.int64)
    for gi, g in enumerate(keys):
        members = [p for p, k in enumerate(groups) if k == g]
        for value in range(v):
            out[:, gi, value] = (worlds[:, members] == value).sum(axis=1)
    return out


def entropy_passes(counts: IntArray, l: float) -> npt.NDArray[np.bool_]:  # noqa: E741
    """Entropy l-diversity of every table (``exp(H) >= l`` in every group, natural log,
    relative tolerance 1e-9)."""
    size = counts.sum(axis=2, keepdims=True)
    p = counts / size
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=2)
    ok: npt.NDArray[np.bool_] = (np.exp(h) >= l * (1 - 1e-9)).all(axis=1)
    return ok


def brute_force_audit(
    x: IntArray, v: int, cands: Sequence[Sequence[int]], level: float
) -> tuple[int, int, int, FloatArray]:
    """The straightforward algorithm: every world of ``D`` through the naive DDF. Returns
    the released candidate, ``|D|``, ``|DS|`` and the posterior (people x values)."""
    worlds = every_world(x)
    truth = x[None, :].astype(np.int8)
    release = np.full(worlds.shape[0], -1, dtype=np.int64)
    for i, groups in enumerate(cands):
        undecided = np.flatnonzero(release == -1)
        ok = entropy_passes(shown_counts(worlds[undecided], groups, v), level)
        release[undecided[ok]] = i
    r = next(i for i, g in enumerate(cands) if entropy_passes(shown_counts(truth, g, v), level)[0])
    same_table = (shown_counts(worlds, cands[r], v) == shown_counts(truth, cands[r], v)).all(
        axis=(1, 2)
    )
    kept = worlds[(release == r) & same_table]
    post = np.stack([(kept == value).mean(axis=0) for value in range(v)], axis=1)
    return r, int(worlds.shape[0]), int(kept.shape[0]), post


def posterior_matrix(result: AlgorithmAuditResult, pop: Population) -> FloatArray:
    out = np.zeros((pop.n, pop.n_values))
    for person in result.people:
        p = pop.people.index(person.person)
        for label, prob in person.posterior.items():
            out[p, pop.values.index(label)] = prob
    return out


def safe_choice(pop: Population, cands: list[Candidate]) -> ReleaseChoice:
    """The safe DDF's release on the true table (a fresh rule: no memo carried over)."""
    return choose_release(make_rule("safe", pop, cands, [ENTROPY2]))


def exact_part(sizes: list[int], per_size: int, repeat: int, seed: int) -> list[dict[str, Any]]:
    l = float(ENTROPY2[1]["l"])  # noqa: E741
    rng = random.Random(seed)
    rows = []
    for n in sizes:
        found = 0
        while found < per_size:
            values, groups = paper_table(n, rng)
            pop = Population.from_values([f"p{i}" for i in range(n)], values)
            cands = [Candidate.from_keys(name, g) for name, g in
                     zip(("q1,q2", "q1", "q2", "*"), groups, strict=True)]  # fmt: skip
            naive = make_rule("naive", pop, cands, [ENTROPY2]).release(pop.truth)
            if naive is None or naive == 0:  # nothing earlier to learn from: skip
                continue
            first = audit_algorithm(pop, cands, [ENTROPY2])
            if first.disclosure_set_size == first.consistent_worlds:
                continue  # the earlier candidates rule out no world of the block: skip
            found += 1
            t0 = time.perf_counter()
            r, d_size, ds_size, base_post = brute_force_audit(pop.truth, pop.n_values, groups, l)
            t_base = time.perf_counter() - t0
            t_ours, res = best_time(partial(audit_algorithm, pop, cands, [ENTROPY2]), repeat)
            assert res.method == "exact" and res.released_index == r == naive
            assert res.disclosure_set_size == ds_size, (res.disclosure_set_size, ds_size)
            diff = float(np.abs(posterior_matrix(res, pop) - base_post).max())
            assert diff <= 1e-9, diff
            t_safe, choice = best_time(partial(safe_choice, pop, cands), repeat)
            rows.append({
                "n": n, "values": values, "groups": groups, "worlds_D": d_size,
                "naive_release": cands[r].name, "block": res.consistent_worlds,
                "disclosure_set": ds_size, "max_posterior": float(base_post.max()),
                "naive_audit_safe": res.safe, "flagged": len(res.flagged),
                "max_abs_difference": diff, "baseline_seconds": t_base,
                "ours_seconds": t_ours, "ratio": t_base / t_ours,
                "safe_choice_seconds": t_safe, "safe_release": choice.released,
                "safe_worlds_enumerated": choice.worlds_enumerated,
            })  # fmt: skip
            print(f"  n={n}: |D|={d_size:,} baseline {t_base:.3f} s, ours "
                  f"{t_ours * 1e3:.2f} ms", flush=True)  # fmt: skip
    return rows


def print_exact(rows: list[dict[str, Any]]) -> None:
    print("| n | worlds in D | naive release | block | DS | max post. | naive leaks | "
          "baseline s | ours ms | ratio | safe choice ms | safe release |")  # fmt: skip
    print("| --- " * 12 + "|")
    for r in rows:
        print(f"| {r['n']} | {r['worlds_D']:,} | {r['naive_release']} | {r['block']:,} | "
              f"{r['disclosure_set']:,} | {r['max_posterior']:.3f} | "
              f"{'yes' if not r['naive_audit_safe'] else 'no'} | {r['baseline_seconds']:.3f} | "
              f"{r['ours_seconds'] * 1e3:.2f} | {r['ratio']:,.0f} | "
              f"{r['safe_choice_seconds'] * 1e3:.2f} | {r['safe_release'] or '-'} |")  # fmt: skip


# --------------------------------------------------------------------------- part 2
def _levels(res: AnonymizationResult, qis: Sequence[str]) -> tuple[int, ...]:
    levels = res.manifest.details["levels"]
    return tuple(int(levels[q]) for q in qis)


def adult_sample(
    sample: pa.Table,
    crit: Criterion,
    hier: dict[str, Hierarchy],
    limit: int,
    audit: bool = True,
) -> dict[str, Any]:
    """Naive and safe lattice release of one sample, and the audits."""
    qis, sens = ADULT_QIS, ADULT_SENSITIVE
    totals = np.unique(np.asarray(sample.column(sens).to_pylist()), return_counts=True)[1]
    worlds_d = multinomial(totals.tolist())
    rec: dict[str, Any] = {"log10_worlds_D": round(log10_count(worlds_d), 1)}
    rec["D_within_limit"] = worlds_d <= limit
    t0 = time.perf_counter()
    try:
        naive: AnonymizationResult | None = anonymize(sample, qis, sens, "lattice", [crit], hier)
    except InputError:
        naive = None
    rec["naive_seconds"] = time.perf_counter() - t0
    rec["naive"] = naive is not None
    if naive is None:  # the safe mode searches the same lattice: nothing passes at all
        return rec
    t0 = time.perf_counter()
    safe: AnonymizationResult | None = None
    try:
        found = anonymize(
            sample, qis, sens, "lattice", [crit], hier, disclosure="safe", disclosure_limit=limit
        )
        rec["declined"] = found.manifest.details["disclosure"]["declined_too_large"]
        safe = found
    except InputError as exc:
        m = DECLINED.search(str(exc))
        assert m is not None, str(exc)
        rec["declined"] = int(m.group(1))
    rec["safe_seconds"] = time.perf_counter() - t0
    rec["safe"] = safe is not None
    nu = naive.manifest.utility
    rec["naive_loss"], rec["naive_acs"] = nu["loss"], nu["average-class-size"]
    if safe is not None:
        su = safe.manifest.utility
        rec["safe_loss"], rec["safe_acs"] = su["loss"], su["average-class-size"]
        rec["same"] = _levels(safe, qis) == _levels(naive, qis)
    if not audit:
        return rec
    t0 = time.perf_counter()
    gen = Generalizer(sample, qis, sens, hier)
    order = gen.lattice_sequence([crit])
    cands = [gen.candidate(lv) for lv in order]
    r = order.index(_levels(naive, qis))
    res = audit_algorithm(gen.population, cands, [crit], released=r, mode="naive")
    rec["audit_seconds"] = time.perf_counter() - t0
    # the naive lattice search is the first passing node of the sequence
    assert res.algorithm_release == cands[r].name, (res.algorithm_release, cands[r].name)
    rec["naive_rank"] = r + 1
    rec["audit_method"] = res.method
    rec["naive_leaks"] = not res.safe
    rec["naive_certain"] = len(res.flagged)  # people at posterior 1
    rec["naive_set_fails"] = res.predicate_on_set.get("passes") is False
    if safe is not None:
        rs = order.index(_levels(safe, qis))
        own = audit_algorithm(gen.population, cands, [crit], released=rs, mode="safe",
                              exact_limit=limit)  # fmt: skip
        assert own.method == "exact" and own.safe and own.true_world_in_set, own.reason
        rec["safe_rank"] = rs + 1
    return rec


def summarize_adult(n: int, crit: Criterion, recs: list[dict[str, Any]]) -> dict[str, Any]:
    released = [r for r in recs if r["naive"]]
    both = [r for r in released if r["safe"]]
    audited = [r for r in released if "naive_leaks" in r]
    leaky = [r for r in audited if r["naive_leaks"]]
    dloss = [r["safe_loss"] - r["naive_loss"] for r in both]
    acs = [r["safe_acs"] / r["naive_acs"] for r in both]

    def pct(part: int, whole: int) -> float | None:
        return 100.0 * part / whole if whole else None

    return {
        "n": n,
        "criterion": crit[0],
        "params": crit[1],
        "samples": len(recs),
        "naive_releases": len(released),
        "safe_releases": len(both),
        "safe_nothing_pct": pct(len(released) - len(both), len(released)),
        "safe_nothing_declined": sum(1 for r in released if not r["safe"] and r["declined"]),
        "same_node_pct": pct(sum(r["same"] for r in both), len(both)),
        "loss_diff_mean": statistics.fmean(dloss) if dloss else None,
        "loss_diff_worst": max(dloss) if dloss else None,
        "acs_ratio_mean": statistics.fmean(acs) if acs else None,
        "acs_ratio_worst": max(acs) if acs else None,
        "naive_leak_pct": pct(len(leaky), len(audited)),
        "naive_leaks": len(leaky),
        "naive_leaks_certain": sum(1 for r in leaky if r["naive_certain"]),
        "leaky_then_safe_nothing": sum(1 for r in leaky if not r["safe"]),
        "leaky_then_safe_other": sum(1 for r in leaky if r["safe"] and not r["same"]),
        "audits_sampled": sum(1 for r in audited if r["audit_method"] == "sampling"),
        "naive_ms": 1e3 * statistics.fmean(r["naive_seconds"] for r in released)
        if released
        else None,
        "safe_ms": 1e3 * statistics.fmean(r["safe_seconds"] for r in released)
        if released
        else None,
        "safe_ms_max": 1e3 * max(r["safe_seconds"] for r in released) if released else None,
        "audit_ms": 1e3 * statistics.fmean(r["audit_seconds"] for r in audited)
        if audited
        else None,
        "median_log10_worlds_D": statistics.median(r["log10_worlds_D"] for r in recs),
        "D_within_limit_pct": pct(sum(r["D_within_limit"] for r in recs), len(recs)),
        "mean_declined": statistics.fmean(r.get("declined", 0) for r in released)
        if released
        else None,
    }


def _f(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def print_adult(rows: list[dict[str, Any]]) -> None:
    print("| criterion | n | samples | naive rel. | safe rel. | safe = naive | loss diff "
          "mean / worst | ACS ratio mean / worst | naive leaks (certain) | leak -> safe "
          "none / other | safe none (declined) | naive ms | safe ms (max) | audit ms |"
          )  # fmt: skip
    print("| --- " * 14 + "|")
    for r in rows:
        print(
            f"| {r['criterion']} | {r['n']} | {r['samples']} | {r['naive_releases']} | "
            f"{r['safe_releases']} | {_f(r['same_node_pct'], '.0f')}% | "
            f"{_f(r['loss_diff_mean'], '.4f')} / {_f(r['loss_diff_worst'], '.4f')} | "
            f"{_f(r['acs_ratio_mean'], '.2f')} / {_f(r['acs_ratio_worst'], '.2f')} | "
            f"{_f(r['naive_leak_pct'], '.1f')}% ({r['naive_leaks_certain']}) | "
            f"{r['leaky_then_safe_nothing']} / {r['leaky_then_safe_other']} | "
            f"{_f(r['safe_nothing_pct'], '.1f')}% ({r['safe_nothing_declined']}) | "
            f"{_f(r['naive_ms'], '.1f')} | {_f(r['safe_ms'], '.0f')} "
            f"({_f(r['safe_ms_max'], '.0f')}) | {_f(r['audit_ms'], '.0f')} |"
        )


def print_scan(rows: list[dict[str, Any]], limit: int) -> None:
    print(f"| n | samples | naive rel. | safe rel. | safe none: a node declined / none "
          f"declined | median log10 abs(D) | abs(D) <= {limit:,} | mean nodes declined | "
          "safe ms (max) |")  # fmt: skip
    print("| --- " * 9 + "|")
    for r in rows:
        none = r["naive_releases"] - r["safe_releases"]
        print(f"| {r['n']} | {r['samples']} | {r['naive_releases']} | {r['safe_releases']} | "
              f"{r['safe_nothing_declined']} / {none - r['safe_nothing_declined']} | "
              f"{r['median_log10_worlds_D']:.1f} | {_f(r['D_within_limit_pct'], '.0f')}% | "
              f"{_f(r['mean_declined'], '.2f')} | {_f(r['safe_ms'], '.0f')} "
              f"({_f(r['safe_ms_max'], '.0f')}) |")  # fmt: skip


def adult_part(
    table: pa.Table,
    hier: dict[str, Hierarchy],
    sizes: list[int],
    samples: int,
    criteria: list[Criterion],
    seed: int,
    limit: int,
    audit: bool,
) -> list[dict[str, Any]]:
    rows = []
    for crit in criteria:
        for n in sizes:
            rng = np.random.default_rng([seed, n])
            t0 = time.perf_counter()
            recs = []
            for _ in range(samples):
                idx = np.sort(rng.choice(table.num_rows, n, replace=False))
                sample = table.take(pa.array(idx)).select([*ADULT_QIS, ADULT_SENSITIVE])
                recs.append(adult_sample(sample, crit, hier, limit, audit))
            row = summarize_adult(n, crit, recs)
            row["seconds"] = time.perf_counter() - t0
            row["records"] = recs
            rows.append(row)
            print(f"  {crit[0]} n={n}: {row['seconds']:.1f} s", flush=True)
    return rows


# --------------------------------------------------------------------------- part 3
def scale_part(
    table: pa.Table, hier: dict[str, Hierarchy], slices: list[int], samples: int, seed: int
) -> list[dict[str, Any]]:
    rows = []
    for n in slices:
        part = table.slice(0, n)
        t0 = time.perf_counter()
        gen = Generalizer(part, ADULT_QIS, SCALE_SENSITIVE, {"age": hier["age"]})
        order = gen.lattice_sequence([ENTROPY2])
        cands = [gen.candidate(lv) for lv in order]
        t_setup = time.perf_counter() - t0
        pop = gen.population
        row: dict[str, Any] = {"records": pop.n, "setup_seconds": t_setup}
        t0 = time.perf_counter()
        res = audit_algorithm(pop, cands, [ENTROPY2], samples=samples, seed=seed,
                              threshold=0.5, people_limit=pop.n)  # fmt: skip
        row["audit_seconds"] = time.perf_counter() - t0
        assert res.method == "sampling" and res.sampling is not None
        r = res.released_index
        accepted = res.sampling.accepted
        # per-person value counts over the accepted samples, from the engine's report
        counts = np.zeros((pop.n, pop.n_values), dtype=np.int64)
        col = {v: j for j, v in enumerate(pop.values)}
        row_of = {person: i for i, person in enumerate(pop.people)}
        for p in res.people:
            for value, c in p.worlds.items():
                counts[row_of[p.person], col[value]] = c
        key = cands[r].counts(pop.truth[None, :], pop.n_values)[0]  # the released table
        shares = key / key.sum(axis=1, keepdims=True)  # what the table alone tells
        table_top = shares[cands[r].groups].max(axis=1)
        row.update({
            "released": res.released, "rank": r + 1, "candidates": len(cands),
            "groups": cands[r].n_groups, "log10_block": res.log10_consistent_worlds,
            "samples": samples, "accepted": accepted,
            "acceptance_rate": res.sampling.acceptance_rate,
            "acceptance_interval": res.sampling.acceptance_interval,
            "max_table_posterior": float(table_top.max()),
            "table_flagged_0_5": int((table_top >= 0.5).sum()),
            "flagged_0_5": len(res.flagged),
        })  # fmt: skip
        if accepted:
            post = counts / accepted
            top = post.max(axis=1)
            i = int(np.argmax(top))
            v = int(np.argmax(post[i]))
            lo, hi = binomial_interval(counts, accepted, 0.95)
            # the largest of n x V estimates is biased upwards: a Bonferroni interval holds
            # for all of them at once
            one = np.asarray([[counts[i, v]]])
            blo, bhi = binomial_interval(one, accepted, 1 - 0.05 / (pop.n * pop.n_values))
            row.update({
                "max_posterior": float(top[i]), "max_posterior_interval":
                [float(lo[i, v]), float(hi[i, v])],
                "max_posterior_simultaneous_interval": [float(blo[0, 0]), float(bhi[0, 0])],
                "max_posterior_value": pop.values[v],
                "max_posterior_true": pop.values[int(pop.truth[i])],
                "max_posterior_table": float(shares[cands[r].groups[i], v]),
                "flagged_1_0": int((top >= 1.0).sum()),
                "upper_bound_0_5": int((hi.max(axis=1) >= 0.5).sum()),
            })  # fmt: skip
            assert len(res.flagged) == int((top >= 0.5).sum())
        rows.append(row)
        print(f"  {pop.n:,} records: sampled audit {row['audit_seconds']:.1f} s "
              f"(block ~10^{row['log10_block']:,.0f})", flush=True)  # fmt: skip
    return rows


def print_scale(rows: list[dict[str, Any]]) -> None:
    print("| records | released (rank of 20) | log10 block | sampled audit s | "
          "accepted / samples | acceptance 95% CI | max posterior [95% CI] [simultaneous CI] "
          "(table alone) | flagged >= 0.5: estimate / upper CI / table alone | "
          "flagged = 1.0 |")  # fmt: skip
    print("| --- " * 9 + "|")
    for r in rows:
        lo, hi = r["acceptance_interval"]
        mp = "-"
        if "max_posterior" in r:
            a, b = r["max_posterior_interval"]
            c, d = r["max_posterior_simultaneous_interval"]
            mp = (f"{r['max_posterior']:.3f} [{a:.3f}, {b:.3f}] [{c:.3f}, {d:.3f}] "
                  f"({r['max_posterior_table']:.3f})")  # fmt: skip
        print(f"| {r['records']:,} | {r['released']} ({r['rank']}) | {r['log10_block']:,.1f} | "
              f"{r['audit_seconds']:.1f} | {r['accepted']:,} / {r['samples']:,} | "
              f"[{lo:.3f}, {hi:.3f}] | {mp} | {r.get('flagged_0_5', '-')} / "
              f"{r.get('upper_bound_0_5', '-')} / {r['table_flagged_0_5']} | "
              f"{r.get('flagged_1_0', '-')} |")  # fmt: skip


# --------------------------------------------------------------------------- main
def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="6,7,8,9,10", help="part 1: people per table")
    ap.add_argument("--tables", type=int, default=2, help="part 1: tables per size")
    ap.add_argument("--adult-sizes", default="8,10,12", help="part 2: records per sample")
    ap.add_argument("--adult-samples", type=int, default=60, help="part 2: samples per size")
    ap.add_argument("--scan-sizes", default="14,16,18,20", help="part 2: where safe stops")
    ap.add_argument("--scan-samples", type=int, default=12)
    ap.add_argument("--limit", type=int, default=EXACT_LIMIT, help="disclosure limit")
    ap.add_argument("--slices", default="300,1000,30162", help="part 3: Adult slices")
    ap.add_argument("--audit-samples", type=int, default=2000, help="part 3: sampled worlds")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2007)
    args = ap.parse_args()
    started = time.perf_counter()
    table = load_adult()
    hier = adult_hierarchies()
    h3 = {"age": hier["age"]}

    print("1. exact audit vs every world of D (paper's shape, entropy 2-diversity)", flush=True)
    exact = exact_part(_ints(args.sizes), args.tables, args.repeat, args.seed)
    print("2. naive vs safe lattice release, Adult samples (QIs age, sex, race; "
          f"{ADULT_SENSITIVE})", flush=True)  # fmt: skip
    crits = [ENTROPY2, RECURSIVE]
    adult = adult_part(table, h3, _ints(args.adult_sizes), args.adult_samples, crits,
                       args.seed, args.limit, audit=True)  # fmt: skip
    scan = adult_part(table, h3, _ints(args.scan_sizes), args.scan_samples, [ENTROPY2],
                      args.seed, args.limit, audit=False)  # fmt: skip
    print(f"3. sampled audit at scale (age, sex, race; {SCALE_SENSITIVE}; entropy 2-diversity)",
          flush=True)  # fmt: skip
    scale = scale_part(table, hier, _ints(args.slices), args.audit_samples, args.seed)
    total = time.perf_counter() - started

    hw = hardware()
    print(f"\nhardware: {hw['cpu']}, {hw['nproc']} cores, {hw['ram_gib']} GiB, Python "
          f"{hw['python']}")  # fmt: skip
    print("\n1. Exact audit (naive DDF) vs the straightforward algorithm over every world "
          "of D; posteriors equal (max abs difference "
          f"{max(r['max_abs_difference'] for r in exact):.1e})")  # fmt: skip
    print_exact(exact)
    print(f"\n2. Safe vs naive lattice release on Adult samples ({args.adult_samples} per n, "
          f"disclosure limit {args.limit:,}); loss diff = safe - naive, ACS ratio = safe / "
          "naive average class size (both released); every safe release passes its own "
          "safe-mode audit (asserted)")  # fmt: skip
    print_adult(adult)
    print(f"\n   where the safe mode stops (entropy 2-diversity, {args.scan_samples} samples "
          "per n; abs(D) = worlds of the whole table, the top node's block)")  # fmt: skip
    print_scan([r for r in adult if r["criterion"] == ENTROPY2[0]] + scan, args.limit)
    works = [r["n"] for r in adult + scan if r["criterion"] == ENTROPY2[0]
             and r["naive_releases"] and r["safe_releases"] * 2 >= r["naive_releases"]]  # fmt: skip
    print(f"   largest n where the safe mode releases for at least half of the samples the "
          f"naive search releases: {max(works) if works else '-'}")  # fmt: skip
    print(f"\n3. Sampled audit of the naive lattice release ({args.audit_samples:,} worlds, "
          f"seed {args.seed}, Clopper-Pearson 95%)")  # fmt: skip
    print_scale(scale)
    print(f"\ntotal {total:.0f} s")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    out = {
        "hardware": hw,
        "args": vars(args),
        "exact": exact,
        "adult": {"qis": ADULT_QIS, "sensitive": ADULT_SENSITIVE, "rows": adult, "scan": scan},
        "scale": {"qis": ADULT_QIS, "sensitive": SCALE_SENSITIVE, "rows": scale},
        "total_seconds": total,
    }
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
