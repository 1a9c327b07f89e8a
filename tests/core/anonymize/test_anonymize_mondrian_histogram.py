"""Mondrian over a histogram of distinct (QI..., sensitive) tuples gives exactly the
partitions of the expanded table; the halving split for categorical QIs.

The oracle is a plain row-level Mondrian written from LeFevre, DeWitt, Ramakrishnan,
"Mondrian Multidimensional k-Anonymity" (ICDE 2006), Algorithm 1 (strict partitioning),
for k-anonymity and distinct l-diversity, over the records one by one (no weights, no
numpy): widths as exact fractions, the lower median record, the hierarchy's children or the
two halves of the values present (anonypy 0.2.1, ``Mondrian.split``), partitions first in,
first out. The weighted implementation must give the same partitions, as multisets of
tuples, with the same labels.
"""

from __future__ import annotations

import math
import random
from collections import Counter, deque
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.anonymize.criteria import CriteriaSet
from airflow_privacy.core.anonymize.encoding import encode, encode_population
from airflow_privacy.core.anonymize.mondrian import mondrian_anonymize
from airflow_privacy.core.set_labels import parse_set_label, set_label
from airflow_privacy.errors import InputError
from tests.core.anonymize.oracle import Problem, problems

Criteria = list[tuple[str, dict[str, Any]]]
Tuple = tuple[str, ...]


def _number(v: str) -> float | None:
    try:
        x = float(v)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


class Oracle:
    """Row-level Mondrian from the paper over ``p.rows`` (module doc)."""

    def __init__(self, p: Problem, k: int, l_div: int, split: str) -> None:
        self.p, self.k, self.l_div, self.split = p, k, l_div, split
        rows = p.rows
        self.numeric = {q: all(_number(r[q]) is not None for r in rows) for q in p.qis}
        self.distinct = {q: sorted({r[q] for r in rows}) for q in p.qis}

    def allowed(self, part: list[int]) -> bool:
        return len(part) >= self.k and len({self.p.rows[i]["s"] for i in part}) >= self.l_div

    # hierarchy helpers: levels[0] maps each leaf to itself
    def leaves(self, q: str) -> list[str]:
        return list(self.p.levels_of(q)[0])

    def lca(self, q: str, values: set[str]) -> int:
        levels = self.p.levels_of(q)
        for lv, mapping in enumerate(levels):
            if len({mapping[v] for v in values}) == 1:
                return lv
        return len(levels)

    def order(self, q: str) -> list[str]:
        """The halving split's fixed order: the hierarchy's leaves with every subtree
        contiguous (labels ranked by first appearance in the file, top level first), else
        the values' text order."""
        if q not in self.p.hierarchies:
            return sorted(self.distinct[q])
        levels = self.p.levels_of(q)
        leaves = self.leaves(q)
        ranks = []
        for mapping in levels:
            first: dict[str, int] = {}
            for v in leaves:
                first.setdefault(mapping[v], len(first))
            ranks.append(first)
        return sorted(leaves, key=lambda v: tuple(ranks[lv][levels[lv][v]] for lv in
                                                  range(len(levels) - 1, -1, -1)))  # fmt: skip

    def width(self, q: str, part: list[int]) -> Fraction:
        values = {self.p.rows[i][q] for i in part}
        if self.numeric[q]:
            every = [float(v) for v in self.distinct[q]]
            span = Fraction(max(every)) - Fraction(min(every))
            nums = [float(v) for v in values]
            return (Fraction(max(nums)) - Fraction(min(nums))) / span if span else Fraction(0)
        if self.split == "halving":
            total = len(self.distinct[q]) - 1
            return Fraction(len(values) - 1, total) if total else Fraction(0)
        leaves = self.leaves(q)
        if len(leaves) <= 1:
            return Fraction(0)
        lv = self.lca(q, values)
        levels = self.p.levels_of(q)
        if lv == 0:
            return Fraction(0)
        if lv >= len(levels):
            under = len(leaves)
        else:
            label = levels[lv][next(iter(values))]
            under = sum(1 for v in leaves if levels[lv][v] == label)
        return Fraction(under - 1, len(leaves) - 1)

    def cut(self, q: str, part: list[int]) -> list[list[int]]:
        rows = self.p.rows
        if self.numeric[q]:
            vals = sorted(float(rows[i][q]) for i in part)
            distinct = sorted(set(vals))
            if len(distinct) < 2:
                return []
            median = vals[(len(vals) - 1) // 2]  # the lower median record
            cut = median if median < distinct[-1] else distinct[-2]
            return [[i for i in part if float(rows[i][q]) <= cut],
                    [i for i in part if float(rows[i][q]) > cut]]  # fmt: skip
        values = {rows[i][q] for i in part}
        if self.split == "halving":
            present = [v for v in self.order(q) if v in values]
            if len(present) < 2:
                return []
            first = set(present[: len(present) // 2])
            return [[i for i in part if rows[i][q] in first],
                    [i for i in part if rows[i][q] not in first]]  # fmt: skip
        levels = self.p.levels_of(q)
        lv = self.lca(q, values)
        if lv == 0:
            return []
        child = levels[lv - 1]
        parts: dict[str, list[int]] = {}
        for i in part:
            parts.setdefault(child[rows[i][q]], []).append(i)
        return list(parts.values())

    def label(self, q: str, part: list[int]) -> str:
        values = {self.p.rows[i][q] for i in part}
        if self.numeric[q]:
            lo, hi = min(values, key=float), max(values, key=float)
            return lo if float(lo) == float(hi) else f"{lo}-{hi}"
        if self.split == "halving":
            present = [v for v in self.order(q) if v in values]
            return present[0] if len(present) == 1 else "{" + "|".join(present) + "}"
        lv = self.lca(q, values)
        levels = self.p.levels_of(q)
        return "*" if lv >= len(levels) else levels[lv][next(iter(values))]

    def run(self) -> list[list[int]] | None:
        everyone = list(range(len(self.p.rows)))
        if not self.allowed(everyone):
            return None
        queue, final = deque([everyone]), []
        while queue:
            part = queue.popleft()
            widths = {q: self.width(q, part) for q in self.p.qis}
            split = False
            for j in sorted(range(len(self.p.qis)), key=lambda j: (-widths[self.p.qis[j]], j)):
                q = self.p.qis[j]
                if widths[q] <= 0:  # one value left here, and on every narrower QI
                    break
                parts = self.cut(q, part)
                if len(parts) >= 2 and all(self.allowed(x) for x in parts):
                    queue.extend(parts)
                    split = True
                    break
            if not split:
                final.append(part)
        return final


def _tuple(row: dict[str, str], qis: list[str]) -> Tuple:
    return (*(row[q] for q in qis), row["s"])


def histogram(p: Problem, seed: int) -> tuple[pa.Table, np.ndarray]:
    """The distinct (QI..., s) tuples of ``p`` and their counts, rows shuffled (a backend
    returns them in any order)."""
    counts = Counter(_tuple(r, p.qis) for r in p.rows)
    keys = list(counts)
    random.Random(seed).shuffle(keys)
    cols = [*p.qis, "s"]
    table = pa.table({c: [key[i] for key in keys] for i, c in enumerate(cols)})
    return table, np.asarray([counts[key] for key in keys], dtype=np.int64)


def weighted(p: Problem, seed: int, criteria: Criteria, split: str) -> Any:
    keys, counts = histogram(p, seed)
    enc = replace(encode(keys, p.qis, "s"), weights=counts)
    return mondrian_anonymize(enc, CriteriaSet.parse(criteria, ()), p.hierarchies, 0,
                              categorical_split=split), keys  # fmt: skip


def _criteria(k: int, l_div: int) -> Criteria:
    return [("k-anonymity", {"k": k}), ("distinct-l-diversity", {"l": l_div})]


def recoded_partitions(result: Any, keys: pa.Table, qis: list[str]) -> set[Any]:
    """The partitions a Recoding describes: (labels, multiset of tuples) per group."""
    rows = keys.to_pylist()
    rec = result.recoding
    per_group: dict[int, Counter[Tuple]] = {}
    for r, g, c in zip(rec.row.tolist(), rec.group.tolist(), rec.count.tolist(), strict=True):
        per_group.setdefault(g, Counter())[_tuple(rows[r], qis)] += c
    return {(rec.labels[g], frozenset(c.items())) for g, c in per_group.items()}


def oracle_partitions(o: Oracle, parts: list[list[int]]) -> set[Any]:
    p = o.p
    return {
        (tuple(o.label(q, part) for q in p.qis),
         frozenset(Counter(_tuple(p.rows[i], p.qis) for i in part).items()))
        for part in parts
    }  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    p=problems(max_rows=30, max_values=5),
    k=st.integers(1, 4),
    l_div=st.integers(1, 3),
    split=st.sampled_from(["hierarchy", "halving"]),
    seed=st.integers(0, 3),
)
@example(
    p=Problem([{"q0": v, "s": s} for v, s in zip("1122334", "xyxyxyx", strict=True)], ["q0"], {}),
    k=2,
    l_div=1,
    split="hierarchy",
    seed=0,
)  # fmt: skip  (7 records, 4 tuples: the weighted median is record 4 of 7, value 2)
def test_histogram_partitions_are_the_expanded_tables(
    p: Problem, k: int, l_div: int, split: str, seed: int
) -> None:
    o = Oracle(p, k, l_div, split)
    expected = o.run()
    criteria = _criteria(k, l_div)
    if expected is None:
        with pytest.raises(InputError, match="no partitioning passes"):
            weighted(p, seed, criteria, split)
        return
    result, keys = weighted(p, seed, criteria, split)
    want = oracle_partitions(o, expected)
    assert recoded_partitions(result, keys, p.qis) == want
    assert result.recoding.records == len(p.rows)  # Mondrian suppresses nothing
    assert result.recoding.one_group_per_row
    assert result.manifest.records_in == result.manifest.records_out == len(p.rows)
    assert result.manifest.groups == len(expected)
    sizes = sorted(part["size"] for part in result.manifest.details["partitions"])
    assert sizes == sorted(len(part) for part in expected)
    # the bucketization: the partitions' sensitive counts, by label
    b = result.bucketization
    got_b = {g: dict(zip(b.values, map(int, row), strict=True)) for g, row in
             zip(b.groups, b.counts, strict=True)}  # fmt: skip
    want_b = {
        lab: {v: n for v, n in Counter(t[-1] for t, c in tuples for _ in range(c)).items()}
        for lab, tuples in want
    }
    assert {g: {v: n for v, n in c.items() if n} for g, c in got_b.items()} == want_b
    # and the row-level implementation agrees (same partitions, same utility)
    rows = anonymize(p.table, p.qis, "s", "mondrian", criteria, p.hierarchies,
                     categorical_split=split)  # fmt: skip
    assert recoded_partitions(rows, p.table, p.qis) == want
    assert rows.manifest.utility == pytest.approx(result.manifest.utility, abs=1e-9)
    same_release(rows, result)


def test_histogram_release_is_an_empty_table_with_the_schema() -> None:
    p = Problem([{"q0": str(a), "q1": c, "s": s} for a, c, s in
                 [(20, "a", "x"), (20, "a", "x"), (21, "b", "y"), (30, "a", "y"), (31, "b", "x"),
                  (31, "b", "x")]], ["q0", "q1"], {})  # fmt: skip
    result, _ = weighted(p, 0, [("k-anonymity", {"k": 2})], "halving")
    assert result.release.num_rows == 0
    assert result.release.column_names == ["q0", "q1", "s"]
    assert result.source_rows.shape == (0,)
    assert result.recoding.columns == ("q0", "q1")
    # row-level: the release is the recoding applied to the rows
    rows = anonymize(p.table, p.qis, "s", "mondrian", [("k-anonymity", {"k": 2})],
                     categorical_split="halving")  # fmt: skip
    rec = rows.recoding
    assert rec is not None
    applied = Counter((*rec.labels[int(rec.group[r])], p.rows[r]["s"]) for r in range(len(p.rows)))
    released = Counter(tuple(r.values()) for r in rows.release.to_pylist())
    assert applied == released


def test_halving_by_hand() -> None:
    """Values c, a, d, b (text order a, b, c, d), two records each, k = 2: the root halves
    into {a, b} | {c, d}, each of those into single values (anonypy: first m // 2 values
    left, the rest right)."""
    t = pa.table({"q": list("cadbcadb"), "s": list("xyxyyxyx")})
    r = anonymize(t, ["q"], "s", "mondrian", [("k-anonymity", {"k": 2})],
                  categorical_split="halving")  # fmt: skip
    assert sorted(set(r.release.column("q").to_pylist())) == ["a", "b", "c", "d"]
    r = anonymize(t, ["q"], "s", "mondrian", [("k-anonymity", {"k": 4})],
                  categorical_split="halving")  # fmt: skip
    assert sorted(set(r.release.column("q").to_pylist())) == ["{a|b}", "{c|d}"]
    # three values: the first one alone, then the other two
    t3 = pa.table({"q": list("abcabc"), "s": list("xyxyxy")})
    r = anonymize(t3, ["q"], "s", "mondrian", [("k-anonymity", {"k": 2})],
                  categorical_split="halving")  # fmt: skip
    assert sorted(set(r.release.column("q").to_pylist())) == ["a", "b", "c"]
    r = anonymize(t3, ["q"], "s", "mondrian", [("k-anonymity", {"k": 3})],
                  categorical_split="halving")  # fmt: skip
    assert sorted(set(r.release.column("q").to_pylist())) == ["{a|b|c}"]
    assert r.manifest.details["dimensions"]["q"] == "categorical (halving)"
    assert r.manifest.parameters["categorical_split"] == "halving"


def test_halving_beats_the_hierarchy_where_the_hierarchy_blocks() -> None:
    """Without a hierarchy the implicit one splits into single values at once, which k
    forbids; halving splits {a, b} | {c, d}."""
    t = pa.table({"q": list("aabbccdd"), "s": list("xyxyxyxy")})
    crit = [("k-anonymity", {"k": 3})]
    flat = anonymize(t, ["q"], "s", "mondrian", crit, categorical_split="hierarchy")
    halves = anonymize(t, ["q"], "s", "mondrian", crit, categorical_split="halving")
    assert flat.manifest.groups == 1 and flat.release.column("q").to_pylist() == ["*"] * 8
    assert halves.manifest.groups == 2
    chosen = anonymize(t, ["q"], "s", "mondrian", crit)  # auto, the default: the finer one
    assert chosen.manifest.parameters["categorical_split"] == "halving"
    assert chosen.manifest.details["partitions_by_split"] == {"hierarchy": 1, "halving": 2}
    assert chosen.release.equals(halves.release)


@given(st.lists(st.text(alphabet="ab|\\{}, ", max_size=4), min_size=1, max_size=4, unique=True))
@settings(max_examples=50, deadline=None)
def test_set_label_reads_back(values: list[str]) -> None:
    label = set_label(values)
    if len(values) == 1:
        assert label == values[0]
    else:
        assert parse_set_label(label) == tuple(values)


def test_bad_categorical_split_names_the_option() -> None:
    t = pa.table({"q": list("aabb"), "s": list("xyxy")})
    with pytest.raises(
        InputError, match="option 'categorical_split' must be one of auto, hierarchy, halving"
    ):
        anonymize(t, ["q"], "s", "mondrian", [("k-anonymity", {"k": 2})],
                  categorical_split="halves")  # fmt: skip
    with pytest.raises(InputError, match="categorical_split"):
        anonymize(t, ["q"], "s", "lattice", [("k-anonymity", {"k": 2})],
                  categorical_split="halving")  # fmt: skip


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    p=problems(max_rows=14, max_values=4),
    extra=st.integers(0, 10),
    k=st.integers(1, 5),
    split=st.sampled_from(["hierarchy", "halving"]),
    seed=st.integers(0, 3),
)
def test_population_variant_is_the_same_on_the_histogram(
    p: Problem, extra: int, k: int, split: str, seed: int
) -> None:
    """k-map against a population table: the histogram's partitions, labels and region
    sizes are the row-level ones."""
    rng = random.Random(seed)
    pop_rows = [{q: r[q] for q in p.qis} for r in p.rows]
    for _ in range(extra):
        pop_rows.append({q: rng.choice(p.rows)[q] for q in p.qis})
    pop = pa.table({q: [r[q] for r in pop_rows] for q in p.qis})
    criteria: Criteria = [("k-map", {"k": k})]
    try:
        rows = anonymize(p.table, p.qis, "s", "mondrian", criteria, p.hierarchies,
                         population=pop, categorical_split=split)  # fmt: skip
    except InputError:
        with pytest.raises(InputError):
            keys, counts = histogram(p, seed)
            enc = replace(encode(keys, p.qis, "s"), weights=counts)
            mondrian_anonymize(enc, CriteriaSet.parse(criteria, ()), p.hierarchies, 0,
                               population=encode_population(pop, p.qis),
                               categorical_split=split)  # fmt: skip
        return
    keys, counts = histogram(p, seed)
    enc = replace(encode(keys, p.qis, "s"), weights=counts)
    hist = mondrian_anonymize(enc, CriteriaSet.parse(criteria, ()), p.hierarchies, 0,
                              population=encode_population(pop, p.qis),
                              categorical_split=split)  # fmt: skip
    assert recoded_partitions(hist, keys, p.qis) == recoded_partitions(rows, p.table, p.qis)
    assert rows.bucketization.population is not None
    same_release(rows, hist)


def same_release(a: Any, b: Any) -> None:
    """The same bucketization (groups, values, counts, population in the same order) and
    the same criteria results, witnesses included."""
    ba, bb = a.bucketization, b.bucketization
    assert (ba.groups, ba.values) == (bb.groups, bb.values)
    assert ba.counts.tolist() == bb.counts.tolist()
    assert (None if ba.population is None else ba.population.tolist()) == (
        None if bb.population is None else bb.population.tolist()
    )
    assert [r.to_dict() for r in a.manifest.criteria_results] == [
        r.to_dict() for r in b.manifest.criteria_results
    ]
    assert a.manifest.details["partitions"] == b.manifest.details["partitions"]


def test_cli_categorical_split(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``--categorical-split halving`` writes a release that ``check`` passes; the flag is
    mondrian's only, and its values are the engine's."""
    import io
    import json

    import pyarrow.csv as pacsv

    from airflow_privacy.cli import main
    from airflow_privacy.core.anonymize.dimensions import CATEGORICAL_SPLITS
    from airflow_privacy.core.datasets import load_adult
    from airflow_privacy.vocabulary import CATEGORICAL_SPLITS as SHARED_SPLITS

    assert SHARED_SPLITS == CATEGORICAL_SPLITS
    src, out = tmp_path / "in.csv", tmp_path / "rel.csv"
    pacsv.write_csv(load_adult().slice(0, 1500), src)
    qis = ["--qi", "age", "--qi", "education", "--qi", "marital-status"]
    argv = ["anonymize", str(src), *qis, "--sensitive", "occupation", "--method", "mondrian",
            "--criterion", "k-anonymity:k=5", "--out", str(out), "--quiet"]  # fmt: skip

    def run(args: list[str]) -> tuple[int, str]:
        code = main(args, io.StringIO())
        return code, capsys.readouterr().err

    assert run([*argv, "--categorical-split", "halving"])[0] == 0
    manifest = json.loads((tmp_path / "rel.csv.manifest.json").read_text())
    assert manifest["parameters"]["categorical_split"] == "halving"
    labels = set(pacsv.read_csv(out).column("education").to_pylist())
    assert any(lab.startswith("{") for lab in labels)
    check = ["check", str(out), "--sensitive", "occupation", "--group", "age", "--group",
             "education", "--group", "marital-status", "--criterion", "k-anonymity:k=5",
             "--quiet"]  # fmt: skip
    assert run(check)[0] == 0
    lattice = [*argv, "--categorical-split", "halving"]
    lattice[lattice.index("mondrian")] = "lattice"
    code, err = run(lattice)
    assert code == 2 and "--categorical-split applies to --method mondrian only" in err
    code, err = run([*argv, "--categorical-split", "halves"])
    assert code == 2 and "--categorical-split" in err
    assert not (tmp_path / "rel2.csv").exists()


def test_operator_categorical_split_is_checked_when_the_dag_is_parsed() -> None:
    pytest.importorskip("airflow.sdk")
    from airflow_privacy.providers.airflow.operators.anonymize import AnonymizeLatticeOperator

    args: dict[str, Any] = {"task_id": "anon", "source": "in.parquet", "release": "r.parquet",
            "qis": ["age"], "sensitive": "s", "criteria": ["k-anonymity:k=2"]}  # fmt: skip
    op = AnonymizeLatticeOperator(
        method="mondrian", method_options={"categorical_split": "halving"}, **args
    )
    assert op.method_options == {"categorical_split": "halving"}
    with pytest.raises(
        InputError, match=r"categorical_split'\] must be one of auto, hierarchy, halving"
    ):
        AnonymizeLatticeOperator(
            method="mondrian", method_options={"categorical_split": "halves"}, **args
        )
    with pytest.raises(InputError, match="'categorical_split' applies to method mondrian only"):
        AnonymizeLatticeOperator(method_options={"categorical_split": "halving"}, **args)


@given(
    st.lists(st.text(alphabet="ab|\\{},", min_size=1, max_size=4), min_size=2, max_size=4,
             unique=True),
    st.lists(st.text(alphabet="abc|", min_size=1, max_size=3), max_size=4),
)  # fmt: skip
@settings(max_examples=50, deadline=None)
def test_the_composition_audit_reads_a_set_label_back(values: list[str], others: list[str]) -> None:
    """A halving label covers exactly the values it lists (and, as any label, its own text)
    for the composition audit's locatability (descriptors.match_matrix)."""
    from airflow_privacy.core.composition.descriptors import match_matrix, parse_label

    label = set_label(values)
    assert parse_label(label, "q").kind == "set"
    universe = list(dict.fromkeys([*values, *others, label]))
    covered = match_matrix([label], universe, "q")[:, 0].tolist()
    assert covered == [v in values or v == label for v in universe]


@pytest.mark.parametrize(
    ("split", "n", "c", "k"), [("hierarchy", 600, 0.7, 3), ("halving", 1500, 0.8, 4)]
)
def test_whole_release_criteria_decide_alike_on_the_histogram(
    split: str, n: int, c: float, k: int
) -> None:
    """(c,k)-safety is checked on the whole partitioning at every split (here one split
    passes the group tests and fails the release check), so the order in which partitions
    are split matters: the histogram (rows shuffled) and the table still give the same
    release."""
    from airflow_privacy.core.datasets import adult_hierarchies, load_adult

    t = load_adult().slice(0, n)
    qis = ["age", "sex", "education"]
    h = {q: adult_hierarchies()[q] for q in qis}
    crit: Criteria = [("ck-safety", {"c": c, "k": k})]
    rows = anonymize(t, qis, "occupation", "mondrian", crit, h, categorical_split=split)
    p = Problem([{**{q: str(r[q]) for q in qis}, "s": str(r["occupation"])}
                 for r in t.select([*qis, "occupation"]).to_pylist()], qis, h)  # fmt: skip
    hist, _ = weighted(p, 1, crit, split)
    assert rows.manifest.details["rejected_by_release_check"] > 0
    assert hist.manifest.details["rejected_by_release_check"] > 0
    same_release(rows, hist)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    p=problems(max_rows=24, max_values=5),
    c=st.sampled_from([0.5, 0.6, 0.75]),
    k=st.integers(1, 2),
    split=st.sampled_from(["hierarchy", "halving"]),
    seed=st.integers(0, 3),
)
def test_whole_release_criteria_on_small_tables_do_not_depend_on_row_order(
    p: Problem, c: float, k: int, split: str, seed: int
) -> None:
    """(c,k)-safety on hypothesis tables (implicit hierarchies included, whose values come
    in the input's order): the table and its shuffled histogram give the same release."""
    crit: Criteria = [("ck-safety", {"c": c, "k": k})]
    try:
        rows = anonymize(p.table, p.qis, "s", "mondrian", crit, p.hierarchies,
                         categorical_split=split)  # fmt: skip
    except InputError:
        with pytest.raises(InputError):
            weighted(p, seed, crit, split)
        return
    hist, _ = weighted(p, seed, crit, split)
    same_release(rows, hist)
