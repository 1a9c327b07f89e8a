"""Entity-level counting (``--entity``: DLP's ``entity_id``) and sample weights
(``risk --weight``) against an independent oracle built from the definitions: entity
multisets with :class:`collections.Counter` over explicit rows, weights summed by hand with
:class:`fractions.Fraction`; the bad-input messages (the flag named, no value, no
identifier); the SQL push-down (``GROUP BY entity, ...``) agreeing with the file reader."""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.cli import main
from airflow_privacy.core.entities import canonical, full_label, labels, reduce_entities
from airflow_privacy.core.model import ReleaseSpec
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.entities import read_entity_counts
from airflow_privacy.gate.refs import ReleaseRef

# values chosen to break a naive label: separators, braces, the multiplicity sign, escapes
VALUES = ["a", "b", "{a}", "a; b", "a ×2", "\\N", "\\", "c}"]
SENS = ["flu", "cold", "gout"]
SECRET_ID = "ZZ-PERSON-4711"
SECRET_VALUE = "ZZ-SECRET-DIAG"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--quiet"], out)
    return code, out.getvalue()


def run_err(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code, out = run(*argv)
    captured = capsys.readouterr()
    return code, out + captured.out + captured.err


def write(path: Path, columns: dict[str, list[Any]]) -> Path:
    table = pa.table({k: pa.array(v, pa.string()) for k, v in columns.items()})
    pq.write_table(table, path)
    return path


# ------------------------------------------------------------------------------ oracle
def oracle_classes(rows: list[tuple[str, str, str, str]]) -> dict[frozenset[Any], list[str]]:
    """Composite class (the multiset of an entity's tuples) -> the value of each entity in
    it (an entity's values joined when they differ), from the definition."""
    tuples: dict[str, Counter[tuple[str, str]]] = {}
    values: dict[str, set[str]] = {}
    for e, g1, g2, s in rows:
        tuples.setdefault(e, Counter())[(g1, g2)] += 1
        values.setdefault(e, set()).add(s)
    out: dict[frozenset[Any], list[str]] = {}
    for e, c in tuples.items():
        out.setdefault(frozenset(c.items()), []).append("|".join(sorted(values[e])))
    return out


rows_strategy = st.lists(
    st.tuples(
        st.sampled_from([f"p{i}" for i in range(8)]),
        st.sampled_from(VALUES[:4]),
        st.sampled_from(VALUES[4:]),
        st.sampled_from(SENS),
    ),
    min_size=1,
    max_size=30,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=rows_strategy)
def test_entity_counts_equal_the_definition(tmp_path: Path, rows: list[Any]) -> None:
    """One record per entity, classed by its multiset of tuples: the class sizes and each
    class's value counts equal the oracle's; sizes-only reading accepts entities with several
    values, a reading of values refuses them naming how many."""
    path = write(
        tmp_path / "r.parquet",
        {n: [r[i] for r in rows] for i, n in enumerate(["pid", "g1", "g2", "s"])},
    )
    spec = ReleaseSpec(sensitive="s", group_columns=("g1", "g2"))
    classes = oracle_classes(rows)
    mixed = sum(1 for vs in classes.values() for v in vs if "|" in v)
    b, facts = read_entity_counts(ReleaseRef(path=str(path)), spec, "pid", GateContext(),
                                  reads_values=False)  # fmt: skip
    assert facts == {
        "entity_column": "pid",
        "rows": len(rows),
        "entities": len({r[0] for r in rows}),
        "composite_entities": sum(1 for c in classes for _ in classes[c] if len(c) > 1),
    }
    assert b.n_records == facts["entities"]
    assert sorted(b.sizes.tolist()) == sorted(len(v) for v in classes.values())
    assert len(set(b.groups)) == b.n_groups == len(classes)  # labels never merge classes
    if mixed:
        with pytest.raises(Exception) as info:
            read_entity_counts(ReleaseRef(path=str(path)), spec, "pid", GateContext(),
                               reads_values=True)  # fmt: skip
        msg = str(info.value)
        assert f"{mixed:,} of {facts['entities']:,} entities" in msg and "'s'" in msg
        assert not any(p in msg for p in {r[0] for r in rows})
        assert not any(v in msg for v in SENS)
        return
    b2, _ = read_entity_counts(ReleaseRef(path=str(path)), spec, "pid", GateContext(),
                               reads_values=True)  # fmt: skip
    got = sorted(sorted(int(x) for x in row if x) for row in b2.counts.tolist())
    want = sorted(sorted(Counter(vs).values()) for vs in classes.values())
    assert got == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.tuples(st.sampled_from([*VALUES, None]), st.sampled_from(VALUES)),
            st.integers(1, 3),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=12,
    )
)
def test_labels_are_unique_and_single_tuples_keep_their_label(
    multisets: list[dict[tuple[str | None, str], int]],
) -> None:
    canon = [canonical(Counter(m)) for m in multisets]
    got = labels(canon, 2)
    by_label: dict[Any, set[Any]] = {}
    for m, lab in zip(canon, got, strict=True):
        by_label.setdefault(lab, set()).add(m)
    assert all(len(ms) == 1 for ms in by_label.values())  # injective
    assert len({full_label(m, 2) for m in set(canon)}) == len(set(canon))

    def short(m: Any) -> Any:
        return m[0][0] if len(m) == 1 else full_label(m, 2)

    for m, lab in zip(canon, got, strict=True):
        others = [o for o in set(canon) if o != m]
        if len(m) == 1 and all(m[0][0] not in (short(o), full_label(o, 2)) for o in others):
            assert lab == m[0][0]  # a single tuple is shown as itself
        else:
            assert lab in (short(m), full_label(m, 2))


def test_reduce_counts_entities_once_and_refuses_blank_ids() -> None:
    rows = [("x", "a", 2), ("x", "b", 1), ("y", "a", 1)]
    r = reduce_entities(rows, 1, 0)
    assert r.rows == 4 and r.entities == 2 and r.composite == 1
    assert r.keys == [("{a ×2; b}",), ("a",)]
    with pytest.raises(Exception, match="blank in 1 of 2 rows"):
        reduce_entities([("x", "a", 1), (" ", "a", 1)], 1, 0)


# ------------------------------------------------------------------------------ check
def test_check_counts_people_not_rows(tmp_path: Path) -> None:
    """Rows pass 2-anonymity, people do not: person p1 is the only one in the class of
    two rows of (a, x); without --entity the group has 3 rows."""
    path = write(
        tmp_path / "r.parquet",
        {
            "pid": ["p1", "p1", "p2", "p3", "p3", "p4"],
            "g": ["a", "a", "a", "b", "b", "b"],
            "s": ["flu", "flu", "cold", "flu", "flu", "cold"],
        },
    )
    args = ["check", str(path), "--sensitive", "s", "--group", "g", "--criterion",
            "k-anonymity", "--k", "2", "--format", "json"]  # fmt: skip
    code, text = run(*args)
    assert code == 0 and json.loads(text)["safe"] is True
    code, text = run(*args, "--entity", "pid")
    env = json.loads(text)
    assert code == 1 and env["safe"] is False
    assert env["release"]["records"] == 4
    assert env["details"]["entities"] == 4 and env["details"]["rows"] == 6
    assert env["details"]["entity_column"] == "pid"
    assert "p1" not in text and "p3" not in text


def test_entity_with_several_values_refused_for_value_criteria(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path / "r.parquet",
        {
            "pid": [SECRET_ID, SECRET_ID, "q", "q"],
            "g": ["a", "a", "a", "a"],
            "s": [SECRET_VALUE, "flu", "flu", "flu"],
        },
    )
    base = ["check", str(path), "--sensitive", "s", "--group", "g", "--entity", "pid"]
    code, text = run_err(capsys, *base, "--criterion", "k-anonymity", "--k", "2")
    assert code == 0, text  # sizes only: any entity
    for crit in ("distinct-l-diversity:l=2", "t-closeness:t=0.5", "ck-safety:c=0.9,k=1"):
        code, text = run_err(capsys, *base, "--criterion", crit, "--criterion", "k-anonymity:k=1")
        assert code == 2, text
        assert "--entity" in text and "1 of 2 entities" in text and "'s'" in text
        assert SECRET_ID not in text and SECRET_VALUE not in text


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--entity", "g"], "--entity 'g' is also a --group column"),
        (["--entity", "s"], "is also a --sensitive column"),
        (["--entity", "nope"], "--entity column 'nope' does not exist"),
    ],
)
def test_check_entity_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    path = write(tmp_path / "r.parquet", {"pid": ["1", "2"], "g": ["a", "a"], "s": ["x", "y"]})
    code, text = run_err(capsys, "check", str(path), "--sensitive", "s", "--group", "g",
                         "--criterion", "k-anonymity:k=1", *extra)  # fmt: skip
    assert code == 2 and words in text, text


def test_blank_entity_refused_without_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "r.parquet", {"pid": [SECRET_ID, None, ""], "g": ["a"] * 3,
                                          "s": ["x"] * 3})  # fmt: skip
    code, text = run_err(capsys, "check", str(path), "--sensitive", "s", "--group", "g",
                         "--criterion", "k-anonymity:k=1", "--entity", "pid")  # fmt: skip
    assert code == 2 and "--entity column is blank in 2 of 3 rows" in text
    assert SECRET_ID not in text


def test_sql_table_counts_entities_in_the_database(tmp_path: Path) -> None:
    """``table:NAME`` with ``--entity``: the GROUP BY entity, g, s push-down gives the same
    envelope results as the file."""
    from sqlalchemy import create_engine, text

    cols = {
        "pid": ["p1", "p1", "p2", "p3", "p3", "p4", "p5"],
        "g": ["a", "b", "a", "a", "b", "b", "b"],
        "s": ["flu", "flu", "cold", "flu", "flu", "cold", "cold"],
    }
    path = write(tmp_path / "r.parquet", cols)
    db = tmp_path / "db.sqlite"
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE rel (pid TEXT, g TEXT, s TEXT)"))
        for row in zip(*cols.values(), strict=True):
            conn.execute(text("INSERT INTO rel VALUES (:a, :b, :c)"),
                         {"a": row[0], "b": row[1], "c": row[2]})  # fmt: skip
    engine.dispose()
    common = ["--sensitive", "s", "--group", "g", "--entity", "pid", "--criterion",
              "k-anonymity:k=2", "--criterion", "distinct-l-diversity:l=2",
              "--format", "json"]  # fmt: skip
    code_f, text_f = run("check", str(path), *common)
    code_t, text_t = run("check", "table:rel", "--conn", f"sqlite:///{db}", *common)
    assert code_f == code_t == 1
    ef, et = json.loads(text_f), json.loads(text_t)
    assert ef["results"] == et["results"] and ef["details"] == et["details"]
    assert ef["details"]["entities"] == 5 and ef["details"]["composite_entities"] == 2


# ------------------------------------------------------------------------------ risk
weight_rows = st.lists(
    st.tuples(
        st.sampled_from([f"p{i}" for i in range(6)]),
        st.sampled_from(["a", "b"]),
        st.sampled_from(["x", "y"]),
    ),
    min_size=1,
    max_size=25,
)


def _measures(env: dict[str, Any]) -> dict[str, Any]:
    return {m["measure"]: m["value"] for m in env["details"]["measures"]}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=weight_rows,
    weights=st.dictionaries(
        st.sampled_from([f"p{i}" for i in range(6)]),
        st.sampled_from(["1", "1.5", "2.25", "3", "10", "7.1"]),
        min_size=6,
        max_size=6,
    ),
    entity=st.booleans(),
)
def test_weighted_risk_equals_the_definition(
    tmp_path: Path, rows: list[tuple[str, str, str]], weights: dict[str, str], entity: bool
) -> None:
    """``F_j`` = the sum of the weights of class j's records (of its entities, with
    ``--entity``), floored; the sampling fraction ``n / sum(w)``; journalist and marketer
    risks from them, against Fractions summed by hand."""
    path = write(
        tmp_path / "r.parquet",
        {
            "pid": [r[0] for r in rows],
            "q1": [r[1] for r in rows],
            "q2": [r[2] for r in rows],
            "w": [weights[r[0]] for r in rows],
        },
    )
    records: list[tuple[Any, Fraction]]
    if entity:
        per: dict[str, Counter[tuple[str, str]]] = {}
        for p, a, b in rows:
            per.setdefault(p, Counter())[(a, b)] += 1
        records = [(frozenset(c.items()), Fraction(weights[p])) for p, c in per.items()]
    else:
        records = [((a, b), Fraction(weights[p])) for p, a, b in rows]
    f: Counter[Any] = Counter(k for k, _ in records)
    w_sum: dict[Any, Fraction] = {}
    for k, w in records:
        w_sum[k] = w_sum.get(k, Fraction(0)) + w
    n = len(records)
    big = {k: max(f[k], math.floor(w_sum[k])) for k in f}
    extra = ["--entity", "pid"] if entity else []
    code, text = run("risk", str(path), "--qi", "q1", "--qi", "q2", "--weight", "w",
                     "--no-suda", "--format", "json", *extra)  # fmt: skip
    assert code == 0, text
    env = json.loads(text)
    pi = Fraction(n) / sum(w_sum.values(), Fraction(0))
    assert env["details"]["population"]["sampling_fraction"] == pytest.approx(float(pi), abs=1e-9)
    assert env["details"]["records"] == n
    got = _measures(env)
    want_j = max(Fraction(1, big[k]) for k in f)
    want_m = sum(Fraction(f[k], big[k]) for k in f) / n
    assert got["journalist_highest_risk"] == pytest.approx(float(want_j), abs=1e-9)
    assert got["marketer_success_rate"] == pytest.approx(float(want_m), abs=1e-9)
    assert got["prosecutor_highest_risk"] == pytest.approx(1 / min(f.values()), abs=1e-9)
    assert "p0" not in text and "p1" not in text


@pytest.mark.parametrize(
    ("bad", "row", "count"),
    [("0.5", 2, 1), ("nan", 3, 1), ("inf", 2, 1), ("", 1, 3), ("abc", 2, 2), ("-2", 3, 1)],
)
def test_bad_weights_name_the_flag_and_row_not_the_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str, row: int, count: int
) -> None:
    w = ["2", "2", "2"]
    if count == 3:
        w = [bad] * 3
    elif count == 2:
        w = ["2", bad, bad]
    else:
        w[row - 1] = bad
    path = write(tmp_path / "r.parquet", {"q": ["a", "a", "b"], "w": w})
    code, text = run_err(capsys, "risk", str(path), "--qi", "q", "--weight", "w", "--no-suda")
    assert code == 2, text
    assert f"--weight: the weight of data row {row}" in text
    assert (f"({count} rows in all)" in text) == (count > 1)
    if bad.strip() and bad not in ("inf", "nan"):
        assert bad not in text.replace(f"row {row}", "")


def test_weight_bad_combinations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "r.parquet", {"pid": ["1", "1", "2"], "q": ["a", "a", "b"],
                                          "w": ["2", "3", "2"]})  # fmt: skip
    pop = write(tmp_path / "p.parquet", {"q": ["a", "a", "b", "b"]})
    base = ["risk", str(path), "--qi", "q", "--no-suda"]
    code, text = run_err(capsys, *base, "--weight", "w", "--population", str(pop))
    assert code == 2 and "give --weight or --population, not both" in text
    code, text = run_err(capsys, *base, "--weight", "w", "--entity", "pid")
    assert code == 2 and "1 of 2 entities (--entity) have rows with different weights" in text
    code, text = run_err(capsys, *base, "--weight", "q")
    assert code == 2 and "--weight 'q' is also a --qi" in text
    code, text = run_err(capsys, *base, "--entity", "pid", "--suda", "--records",
                         str(tmp_path / "x.csv"))  # fmt: skip
    assert code == 2 and "--records lists records by row number" in text


def test_weight_with_population_size_keeps_the_given_fraction(tmp_path: Path) -> None:
    path = write(tmp_path / "r.parquet", {"q": ["a", "a", "b"], "w": ["2.5", "2.5", "1"]})
    code, text = run("risk", str(path), "--qi", "q", "--weight", "w", "--population-size",
                     "30", "--no-suda", "--format", "json")  # fmt: skip
    env = json.loads(text)
    assert code == 0
    assert env["details"]["population"]["sampling_fraction"] == pytest.approx(0.1)
    got = _measures(env)
    # F_a = 5, F_b = 1 (a weight of 1 stands for the record itself)
    assert got["journalist_highest_risk"] == 1.0
    assert got["marketer_success_rate"] == pytest.approx((2 / 5 + 1) / 3)


def test_operator_names_in_messages() -> None:
    from airflow_privacy.errors import opt, render

    assert render(opt("entity"), "airflow") == "entity_column"
    assert render(opt("weight"), "airflow") == "weight_column"
    assert render(opt("entity"), "cli") == "--entity"


def test_weights_are_summed_exactly(tmp_path: Path) -> None:
    """1.2 + 1.4 + 1.4 is 4 people; in floating point it is 3.9999999999999996, which would
    round down to 3. The decimal texts are summed as exact fractions: F = 4."""
    assert sum([1.2, 1.4, 1.4]) < 4
    path = write(tmp_path / "r.parquet", {"q": ["a", "a", "a"], "w": ["1.2", "1.4", "1.4"]})
    code, text = run("risk", str(path), "--qi", "q", "--weight", "w", "--no-suda",
                     "--format", "json")  # fmt: skip
    assert code == 0
    env = json.loads(text)
    assert _measures(env)["journalist_highest_risk"] == pytest.approx(1 / 4)
    assert env["details"]["population"]["weight_sum"] == 4.0
    assert env["details"]["population"]["sampling_fraction"] == pytest.approx(3 / 4)


def test_sql_table_risk_with_entities_and_weights(tmp_path: Path) -> None:
    """The risk step on ``table:NAME`` with ``--entity`` and ``--weight`` equals the file's."""
    from sqlalchemy import create_engine, text

    cols = {
        "pid": ["p1", "p1", "p2", "p3", "p3", "p4", "p5"],
        "q": ["a", "b", "a", "a", "b", "b", "b"],
        "w": ["2", "2", "1.5", "3", "3", "1", "4.25"],
    }
    path = write(tmp_path / "r.parquet", cols)
    db = tmp_path / "db.sqlite"
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE rel (pid TEXT, q TEXT, w TEXT)"))
        for row in zip(*cols.values(), strict=True):
            conn.execute(text("INSERT INTO rel VALUES (:a, :b, :c)"),
                         {"a": row[0], "b": row[1], "c": row[2]})  # fmt: skip
    engine.dispose()
    common = ["--qi", "q", "--entity", "pid", "--weight", "w", "--format", "json"]
    code_f, text_f = run("risk", str(path), *common)
    code_t, text_t = run("risk", "table:rel", "--conn", f"sqlite:///{db}", *common)
    assert code_f == code_t == 0
    ef, et = json.loads(text_f), json.loads(text_t)
    assert ef["details"]["measures"] == et["details"]["measures"]
    assert ef["details"]["entities"] == et["details"]["entities"]
    assert ef["details"]["entities"]["entities"] == 5
    # {a, b} x2 (p1, p3: weights 2 and 3), {a} (p2: 1.5), {b} x2 (p4, p5: 1 and 4.25)
    assert ef["details"]["population"]["weight_sum"] == 11.75


# ------------------------------------------------- labels SUDA2 reads one column at a time
HOSTILE = ["a", "b", "{a; b}", "{a}", "{a ×2}", "x", "y"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.tuples(st.sampled_from(HOSTILE), st.sampled_from(HOSTILE)),
            st.integers(1, 2),
            min_size=1,
            max_size=3,
        ),
        min_size=2,
        max_size=10,
    )
)
def test_labels_by_column_are_unambiguous_in_each_column(
    multisets: list[dict[tuple[str, str], int]],
) -> None:
    """``by_column``: two multisets share a column's label only when their explicit labels
    of that column are equal (so a column's classes refine the per-column multisets'), and
    the labels stay injective."""
    canon = [canonical(Counter(m)) for m in multisets]
    got = labels(canon, 2, by_column=True)
    pairs = list(zip(canon, got, strict=True))
    for m1, l1 in pairs:
        for m2, l2 in pairs:
            if m1 != m2:
                assert l1 != l2
            for j in range(2):
                if l1[j] == l2[j]:
                    assert full_label(m1, 2)[j] == full_label(m2, 2)[j], (m1, m2, j)


def test_a_value_shaped_like_a_composite_label_is_not_merged_with_one(tmp_path: Path) -> None:
    """Issue 24's case: p1's one row holds ``{a; b}``; p2's rows hold ``a`` and ``b``, whose
    composite label on ``q`` is ``{a; b}`` too. With ``--entity`` SUDA2's numbers must be
    those of the same release with p1's value renamed to a text nobody else holds (a
    renaming of one value changes no class), so never lower."""

    def suda(q1: str) -> Any:
        cols = {
            "pid": ["p1", "p2", "p2", "p3", "p4", "p4", "p5", "p6"],
            "q": [q1, "a", "b", "a", "a", "b", "c", "c"],
            "r": ["x", "y", "y", "y", "y", "y", "x", "x"],
        }
        path = write(tmp_path / f"r-{len(q1)}.parquet", cols)
        code, out = run("risk", str(path), "--qi", "q", "--qi", "r", "--entity", "pid",
                        "--suda", "--format", "json")  # fmt: skip
        assert code == 0, out
        return json.loads(out)["details"]["suda"]

    hostile, renamed = suda("{a; b}"), suda("zz")
    assert hostile == renamed
