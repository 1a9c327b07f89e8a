"""A definition-level oracle for the anonymizers, and the random inputs the tests share.

Written from the documented definitions only, on rows and with the public pieces
(``Hierarchy.levels``, ``Bucketization.from_counts``, the criteria registry), never with the
anonymizers' codes, roll-ups or vectorized group tests:

* a lattice node's release: every QI value replaced by its label at the node's level;
* suppression: a group is removed when it fails a criterion on its own (the registry on a
  one-group release; t-closeness: its EMD to the whole table, computed here with exact
  fractions); a node passes when at most ``budget`` records are removed and the rest passes
  every criterion (the registry);
* minimal nodes: passing nodes with no passing node below (pairwise comparison);
* the utility metrics, record by record (docs/anonymizers.md);
* benign values (``benign``): every release the registry judges, one-group ones included,
  is judged ``.with_benign(benign)``, as ``check --benign`` judges it.

``tests/core/anonymize/test_anonymize_oracle.py`` checks the oracle itself on hand-computed
examples.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

from airflow_privacy.core.criteria.registry import CRITERIA, evaluate
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.core.model import Bucketization

Criteria = list[tuple[str, dict[str, Any]]]
Levels = tuple[int, ...]


# ----------------------------------------------------------------------------- inputs
@dataclass
class Problem:
    """A small table with QIs ``q0..``, sensitive ``s`` and hierarchies for some QIs."""

    rows: list[dict[str, str]]
    qis: list[str]
    hierarchies: dict[str, Hierarchy]

    @property
    def table(self) -> pa.Table:
        cols = [*self.qis, "s"]
        return pa.table({c: [r[c] for r in self.rows] for c in cols})

    def levels_of(self, qi: str) -> list[dict[str, str]]:
        """The hierarchy used for ``qi``: the given one, or value then ``*``."""
        h = self.hierarchies.get(qi)
        if h is not None:
            return list(h.levels)
        values = list(dict.fromkeys(r[qi] for r in self.rows))
        return [{v: v for v in values}, {v: "*" for v in values}]

    def heights(self) -> tuple[int, ...]:
        return tuple(len(self.levels_of(q)) for q in self.qis)


@st.composite
def hierarchies_for(
    draw: st.DrawFn, name: str, domain: list[str], max_levels: int, min_levels: int = 1
) -> Hierarchy:
    """A random tree over ``domain``: each level merges labels of the level below."""
    height = draw(st.integers(min_levels, max_levels))
    rows = [[v] for v in domain]
    current = list(range(len(domain)))
    for level in range(1, height):
        distinct = sorted(set(current))
        k = draw(st.integers(1, len(distinct)))
        mapping = {c: draw(st.integers(0, k - 1)) for c in distinct}
        current = [mapping[c] for c in current]
        top = level == height - 1 and k == 1 and draw(st.booleans())
        for row, c in zip(rows, current, strict=True):
            row.append("*" if top else f"{name}L{level}g{c}")
    return Hierarchy.from_rows(name, rows)


@st.composite
def problems(
    draw: st.DrawFn,
    max_rows: int = 20,
    max_qis: int = 3,
    max_levels: int = 3,
    max_values: int = 4,
    max_sensitive: int = 4,
    min_qis: int = 1,
    min_levels: int = 1,
    min_values: int = 1,
) -> Problem:
    n = draw(st.integers(2, max_rows))
    n_qis = draw(st.integers(min_qis, max_qis))
    qis = [f"q{i}" for i in range(n_qis)]
    hierarchies: dict[str, Hierarchy] = {}
    rows: list[dict[str, str]] = [{} for _ in range(n)]
    for q in qis:
        d = draw(st.integers(min_values, max_values))
        numeric = draw(st.booleans())
        domain = [str(7 * j + 3) for j in range(d)] if numeric else [f"{q}v{j}" for j in range(d)]
        if draw(st.integers(0, 3)) > 0:
            hierarchies[q] = draw(hierarchies_for(q, domain, max_levels, min_levels))
        for r in rows:
            r[q] = draw(st.sampled_from(domain))
    m = draw(st.integers(1, max_sensitive))
    for r in rows:
        r["s"] = f"s{draw(st.integers(0, m - 1))}"
    return Problem(rows, qis, hierarchies)


CRITERION = st.one_of(
    st.builds(lambda k: ("k-anonymity", {"k": k}), st.integers(1, 4)),
    st.builds(lambda l: ("distinct-l-diversity", {"l": l}), st.integers(1, 3)),  # noqa: E741
    st.builds(lambda l: ("entropy-l-diversity", {"l": l}), st.sampled_from([1, 1.5, 2, 3])),  # noqa: E741
    st.builds(
        lambda c, l: ("recursive-cl-diversity", {"c": c, "l": l}),  # noqa: E741
        st.sampled_from([0.5, 1.0, 2.0, 3.0]),
        st.integers(1, 3),
    ),
    st.builds(lambda t: ("t-closeness", {"t": t}), st.sampled_from([0.1, 0.25, 0.5])),
    st.builds(
        lambda c, k: ("ck-safety", {"c": c, "k": k}),
        st.sampled_from([0.5, 0.75, 0.9, 1.0]),
        st.integers(0, 2),
    ),
    st.builds(
        lambda c, k: ("negation-safety", {"c": c, "k": k}),
        st.sampled_from([0.5, 0.75, 0.9, 1.0]),
        st.integers(0, 2),
    ),
)
CRITERIA_LISTS = st.lists(CRITERION, min_size=1, max_size=2)


# ------------------------------------------------------------------------ definitions
def generalize(p: Problem, levels: Levels) -> list[tuple[str, ...]]:
    """Every row's QI labels at ``levels`` (looked up in the hierarchy, row by row)."""
    maps = [p.levels_of(q)[lv] for q, lv in zip(p.qis, levels, strict=True)]
    return [tuple(m[r[q]] for m, q in zip(maps, p.qis, strict=True)) for r in p.rows]


def bucketization(
    groups: Mapping[tuple[str, ...], Sequence[str]], names: Sequence[str]
) -> Bucketization:
    rows = [(*key, s, n) for key, values in groups.items() for s, n in Counter(values).items()]
    return Bucketization.from_counts(rows, names, "s")


def emd_to_table(group: Sequence[str], table: Sequence[str], ordered: bool | None) -> Fraction:
    """Li et al. 2007, section 4.2: equal distance = total variation; ordered distance over
    the table's values sorted numerically (auto: ordered iff every value is a number)."""
    values = sorted(set(table))
    numeric = all(_is_number(v) for v in values)
    use_ordered = numeric if ordered is None else ordered
    if use_ordered:
        values = sorted(values, key=float)
    m = len(values)
    if m <= 1:
        return Fraction(0)
    g, t = Counter(group), Counter(table)
    diff = [Fraction(g[v], len(group)) - Fraction(t[v], len(table)) for v in values]
    if use_ordered:
        acc, total = Fraction(0), Fraction(0)
        for d in diff:
            acc += d
            total += abs(acc)
        return total / (m - 1)
    return sum((abs(d) for d in diff), Fraction(0)) / 2


def _is_number(v: str) -> bool:
    try:
        return math.isfinite(float(v))
    except ValueError:
        return False


# built-in criteria that the suppression step can judge on a single group
ALONE = frozenset(CRITERIA) - {"t-closeness"}


def fails_alone(
    values: Sequence[str],
    table: Sequence[str],
    criteria: Criteria,
    benign: frozenset[str] = frozenset(),
) -> bool:
    for name, params in criteria:
        if name == "t-closeness":
            if float(emd_to_table(values, table, params.get("ordered"))) > params["t"]:
                return True
        elif (
            name in ALONE
            and not evaluate(
                bucketization({("g",): values}, ["g"]).with_benign(benign), name, params
            ).safe
        ):
            return True
    return False


def release_groups(
    p: Problem,
    levels: Levels,
    criteria: Criteria,
    budget: int,
    benign: frozenset[str] = frozenset(),
) -> dict[tuple[str, ...], list[str]] | None:
    """The released groups of node ``levels`` (suppression applied), or ``None`` when the
    budget does not suffice."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for key, r in zip(generalize(p, levels), p.rows, strict=True):
        groups.setdefault(key, []).append(r["s"])
    if budget <= 0:
        return groups
    table = [r["s"] for r in p.rows]
    kept = {k: v for k, v in groups.items() if not fails_alone(v, table, criteria, benign)}
    removed = len(p.rows) - sum(len(v) for v in kept.values())
    if removed > budget or not kept:
        return None
    return kept


def node_passes(
    p: Problem,
    levels: Levels,
    criteria: Criteria,
    budget: int = 0,
    benign: frozenset[str] = frozenset(),
) -> bool:
    groups = release_groups(p, levels, criteria, budget, benign)
    if groups is None:
        return False
    b = bucketization(groups, p.qis).with_benign(benign)
    return all(evaluate(b, name, params).safe for name, params in criteria)


def all_nodes(heights: Sequence[int]) -> list[Levels]:
    out: list[Levels] = [()]
    for h in heights:
        out = [(*node, lv) for node in out for lv in range(h)]
    return out


def exhaustive_minimal(
    p: Problem, criteria: Criteria, budget: int = 0, benign: frozenset[str] = frozenset()
) -> list[Levels]:
    verdict = {n: node_passes(p, n, criteria, budget, benign) for n in all_nodes(p.heights())}
    passing = [n for n, ok in verdict.items() if ok]
    return sorted(
        n
        for n in passing
        if not any(o != n and all(a <= b for a, b in zip(o, n, strict=True)) for o in passing)
    )


def utility(p: Problem, levels: Levels, criteria: Criteria, budget: int = 0) -> dict[str, float]:
    """The five metrics of node ``levels``, record by record (docs/anonymizers.md)."""
    groups = release_groups(p, levels, criteria, budget)
    assert groups is not None
    keys = generalize(p, levels)
    n, q = len(p.rows), len(p.qis)
    kept_rows = [i for i, k in enumerate(keys) if k in groups]
    suppressed = n - len(kept_rows)
    loss = prec = nue = 0.0
    for i in range(q):
        lvls = p.levels_of(p.qis[i])
        leaves = list(lvls[0])
        freq = Counter(r[p.qis[i]] for r in p.rows)
        numbers = [float(v) for v in leaves] if all(_is_number(v) for v in leaves) else None
        top = len(lvls) - 1
        for r in range(n):
            value = p.rows[r][p.qis[i]]
            if r not in kept_rows:
                loss += 1.0
                prec += 1.0
                nue += -math.log2(freq[value] / n)
                continue
            label = lvls[levels[i]][value]
            under = [v for v in leaves if lvls[levels[i]][v] == label]
            if numbers is not None and len(leaves) > 1:
                span = max(numbers) - min(numbers)
                sub = [float(v) for v in under]
                loss += (max(sub) - min(sub)) / span if span else 0.0
            elif len(leaves) > 1:
                loss += (len(under) - 1) / (len(leaves) - 1)
            prec += levels[i] / top if top else 0.0
            covered = sum(freq[v] for v in under)
            nue += -math.log2(freq[value] / covered)
    sizes = [len(v) for v in groups.values()]
    return {
        "discernibility": float(sum(s * s for s in sizes) + suppressed * n),
        "average-class-size": sum(sizes) / len(sizes),
        "precision": 1.0 - prec / (n * q),
        "loss": loss / (n * q),
        "non-uniform-entropy": nue,
    }
