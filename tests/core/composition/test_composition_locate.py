"""Locating individuals in published releases (Ganta et al. 2008, Definition 6): label
meanings, hierarchies, buckets, nearest centroids, unlocatable reasons; the labels every
anonymizer writes are read back as the values they stand for; and the PublishedRelease
model (construction, canonical content hash, bad input)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.composition import Population, PublishedRelease, locate
from airflow_privacy.core.composition.descriptors import hierarchy_covers, parse_label
from airflow_privacy.core.datasets import adult_hierarchies
from airflow_privacy.core.hierarchy import Hierarchy
from airflow_privacy.errors import InputError


def covers(label: str, value: str, cov: dict[str, frozenset[str]] | None = None) -> bool:
    lab = parse_label(label, "q", cov)
    num = float(value) if _isnum(value) else math.nan
    return bool(lab.matches([value], np.array([num]))[0])


def _isnum(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    ("label", "value", "expected"),
    [
        ("*", "anything", True),
        ("20-29", "20", True),
        ("20-29", "29", True),
        ("20-29", "29.5", False),
        ("20-29", "19", False),
        ("20 - 29", "25", True),
        ("-10--5", "-7", True),
        ("0.5-1.5", "1.5", True),
        ("[20, 30)", "30", False),
        ("[20, 30)", "20", True),
        ("(20, 30]", "20", False),
        ("(20,30]", "30", True),
        ("<30", "29", True),
        ("<30", "30", False),
        ("<=30", "30", True),
        ("≤30", "30", True),
        (">=40", "40", True),
        ("≥40", "40", True),
        ("≥40", "39", False),
        (">40", "40", False),
        ("130**", "13012", True),
        ("130**", "13112", False),
        ("130**", "1301", False),
        ("3*", "35", True),
        ("3*", "28", False),
        ("3*", "3", False),
        ("Married", "Married", True),
        ("Married", "Divorced", False),
        ("37", "37.0", True),
        ("37", "38", False),
        ("2020-01", "2020-01", True),
        ("2020-01", "2015", False),  # a date, not an interval
        ("20-29", "abc", False),
        ("<30", "n/a", False),
    ],
)
def test_label_meanings(label: str, value: str, expected: bool) -> None:
    assert covers(label, value) is expected


def test_hierarchy_labels_take_precedence_over_textual_forms() -> None:
    h = adult_hierarchies()
    age = hierarchy_covers(h["age"])
    # ARX labels age 20 as "15-19" (one year off): the hierarchy's meaning wins
    assert covers("15-19", "20", age) and not covers("15-19", "20")
    assert not covers("20-24", "20", age) and covers("20-24", "20")
    edu = hierarchy_covers(h["education"])
    assert covers("Undergraduate", "Bachelors", edu)
    assert covers("Higher education", "Doctorate", edu)
    assert not covers("Undergraduate", "Doctorate", edu)
    assert covers("*", "Doctorate", edu)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(-1000, 1000),
    st.integers(0, 500),
    st.integers(-1200, 1200),
    st.sampled_from(["{lo}-{hi}", "[{lo}, {hi}]", "<{hi}", "<={hi}", ">{lo}", ">={lo}"]),
)
def test_numeric_labels_against_their_definition(lo: int, width: int, x: int, form: str) -> None:
    hi = lo + width
    label = form.format(lo=lo, hi=hi)
    expected = {
        "{lo}-{hi}": lo <= x <= hi,
        "[{lo}, {hi}]": lo <= x <= hi,
        "<{hi}": x < hi,
        "<={hi}": x <= hi,
        ">{lo}": x > lo,
        ">={lo}": x >= lo,
    }[form]
    assert covers(label, str(x)) is expected


@settings(max_examples=200, deadline=None)
@given(
    st.text("0123456789", min_size=1, max_size=6),
    st.integers(0, 6),
    st.text("0123456789", min_size=1, max_size=6),
)
def test_masks_against_their_definition(base: str, masked: int, value: str) -> None:
    masked = min(masked, len(base))
    label = base[: len(base) - masked] + "*" * masked
    if label == "*":
        assert covers(label, value)
        return
    expected = value == label or (
        masked > 0 and len(value) == len(label) and value.startswith(base[: len(base) - masked])
    )
    assert covers(label, value) is expected


def release(rows: Sequence[tuple[str, ...]], qis: tuple[str, ...], **kw: str) -> PublishedRelease:
    names = [*qis, "s"] if kw.get("kind") != "bucketized" else [*qis, "b", "s"]
    t = pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})
    return PublishedRelease.from_arrow(t, qis, "s", **kw)


def test_locate_generalized_with_hierarchies_and_ambiguity() -> None:
    h = adult_hierarchies()
    r = release(
        [
            ("20-29", "Undergraduate", "a"),
            ("20-29", "Graduate", "b"),
            ("25-35", "*", "c"),
            ("30-39", "Graduate", "d"),
        ],
        ("age", "education"),
    )
    pop = Population(
        {
            "age": ("22", "27", "31", "50", "x"),
            "education": ("Bachelors", "Masters", "Masters", "Masters", "Masters"),
        },
        5,
    )
    loc = locate(pop, r, {"education": h["education"]})
    groups = [sorted(r.group_label(g) for g in loc.groups(i)) for i in range(5)]
    assert groups[0] == ["age=20-29, education=Undergraduate"]
    assert groups[1] == ["age=20-29, education=Graduate", "age=25-35, education=*"]
    assert groups[2] == ["age=25-35, education=*", "age=30-39, education=Graduate"]
    assert groups[3] == [] and groups[4] == []
    assert loc.n_matches.tolist() == [1, 2, 2, 0, 0]
    assert loc.reasons == {
        3: "age='50' is covered by no published age label",
        4: "age='x' is covered by no published age label",
    }
    # the weighted counts: every candidate record equally likely
    assert loc.weighted[1].tolist() == [0.0, 1.0, 1.0, 0.0]


def test_locate_combination_not_covered_reason() -> None:
    r = release([("20-29", "M", "a"), ("30-39", "F", "b")], ("age", "sex"))
    loc = locate(Population({"age": ("25",), "sex": ("F",)}, 1), r)
    assert loc.reasons == {0: "no group covers this combination of QI values"}


def test_locate_bucketized_exact_qis_compare_numerically() -> None:
    r = release(
        [
            ("28", "13012", "1", "a"),
            ("35", "13053", "1", "b"),
            ("28", "13012", "2", "c"),
            ("40", "14850", "2", "d"),
        ],
        ("age", "zip"),
        kind="bucketized",
        bucket="b",
    )
    assert r.members == (
        ((("28", "13012"), 1), (("35", "13053"), 1)),
        ((("28", "13012"), 1), (("40", "14850"), 1)),
    )
    pop = Population({"age": ("28.0", "35", "36"), "zip": ("13012", "13053", "13053")}, 3)
    loc = locate(pop, r)
    assert [loc.groups(i) for i in range(3)] == [[0, 1], [0], []]
    assert loc.weighted[0].tolist() == pytest.approx([0.5, 0.5, 0.5, 0.5])
    assert loc.reasons == {2: "its exact QI values appear in no bucket"}


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=8, unique=True
    ),
    st.lists(st.tuples(st.integers(-10, 60), st.integers(-10, 60)), min_size=1, max_size=10),
)
def test_nearest_centroid_against_brute_force(
    centroids: list[tuple[int, int]], people: list[tuple[int, int]]
) -> None:
    r = PublishedRelease.from_groups(
        ("x", "y"),
        "s",
        [((str(a), str(b)), {"v": 1}) for a, b in centroids],
        kind="microaggregated",
    )
    pop = Population(
        {"x": tuple(str(p[0]) for p in people), "y": tuple(str(p[1]) for p in people)}, len(people)
    )
    loc = locate(pop, r)
    sx = np.std([c[0] for c in centroids]) or 1.0
    sy = np.std([c[1] for c in centroids]) or 1.0
    for i, (px, py) in enumerate(people):
        d = [((px - cx) / sx) ** 2 + ((py - cy) / sy) ** 2 for cx, cy in centroids]
        best = min(d)
        expected = [g for g, x in enumerate(d) if x <= best * (1 + 1e-9) + 1e-12]
        assert loc.groups(i) == expected


def test_microaggregated_bad_values() -> None:
    r = PublishedRelease.from_groups(
        ("x",), "s", [(("1.5",), {"v": 2}), (("9",), {"w": 2})], kind="microaggregated"
    )
    loc = locate(Population({"x": ("2", "abc")}, 2), r)
    assert loc.groups(0) == [0] and loc.groups(1) == []
    assert loc.reasons == {1: "x='abc' is not a number (nearest centroid)"}
    with pytest.raises(InputError, match="centroid value 'old' of QI 'x' is not a number"):
        PublishedRelease.from_groups(("x",), "s", [(("old",), {"v": 1})], kind="microaggregated")


def test_release_model_round_trip_and_canonical_hash() -> None:
    rows = [("20-29", "M", "a"), ("20-29", "M", "b"), ("30-39", "F", "a"), ("20-29", "M", "a")]
    r = release(rows, ("age", "sex"))
    assert r.n_groups == 2 and r.n_records == 4
    assert r.multiset(r.keys.index(("20-29", "M"))) == {"a": 2, "b": 1}
    again = PublishedRelease.from_dict(r.to_dict())
    assert again.content_hash() == r.content_hash()
    shuffled = release(list(reversed(rows)), ("age", "sex"))
    assert shuffled.content_hash() == r.content_hash()
    changed = release([*rows[:3], ("20-29", "M", "b")], ("age", "sex"))
    assert changed.content_hash() != r.content_hash()
    assert r.content_hash(["h1", "h2"]) == r.content_hash(["h2", "h1", "h1"])
    assert r.content_hash(["h1"]) != r.content_hash()
    b = release([("28", "1", "a"), ("35", "1", "b")], ("age",), kind="bucketized", bucket="b")
    assert PublishedRelease.from_dict(b.to_dict()).members == b.members


def test_release_bad_input() -> None:
    t = pa.table({"age": ["20-29", None], "s": ["a", "b"]})
    with pytest.raises(InputError, match="column 'age' has 1 missing value"):
        PublishedRelease.from_arrow(t, ("age",), "s")
    t = pa.table({"age": ["20-29"], "s": ["a"]})
    with pytest.raises(InputError, match="QI column 'zip' does not exist"):
        PublishedRelease.from_arrow(t, ("age", "zip"), "s")
    with pytest.raises(InputError, match="sensitive column 'x' does not exist"):
        PublishedRelease.from_arrow(t, ("age",), "x")
    with pytest.raises(InputError, match="needs its bucket column"):
        PublishedRelease.from_arrow(t, ("age",), "s", kind="bucketized")
    with pytest.raises(InputError, match="unknown release kind 'mondrian'"):
        PublishedRelease.from_arrow(t, ("age",), "s", kind="mondrian")
    with pytest.raises(InputError, match="cannot be both the sensitive column and a QI"):
        PublishedRelease.from_groups(("age", "s"), "s", [(("1", "2"), {"a": 1})])
    with pytest.raises(InputError, match="not a release description"):
        PublishedRelease.from_dict({"kind": "generalized"})


def test_mask_hierarchy_builder_labels_locate() -> None:
    h = Hierarchy.masks("zip", ["13012", "13053", "14850"])
    cov = hierarchy_covers(h)
    assert covers("130**", "13053", cov) and not covers("130**", "14850", cov)


# ------------------------------------------------- every label the project writes
def test_interval_release_with_fractions_locates_everyone() -> None:
    """`--interval children=2,4` published 5.5 as '4-5'; the audit read it as [4, 5] and
    128 people silently dropped out of the overlap."""
    from airflow_privacy.core.anonymize import anonymize

    kids = ["0", "1", "2", "3", "4", "5", "5.5", "6.5", "7"] * 4
    table = pa.table({"children": kids, "s": ["a", "b", "c", "d"] * 9})
    hier = {"children": Hierarchy.intervals("children", set(kids), [2, 4])}
    expected = {
        5: {"[0,2)", "[2,4)", "[4,6)", "[6,8)"},
        9: {"[0,4)", "[4,8)"},
        36: {"*"},
    }
    for k, published_labels in expected.items():
        result = anonymize(table, ["children"], "s", "lattice", [("k-anonymity", {"k": k})], hier)
        published = PublishedRelease.from_arrow(result.release, ["children"], "s")
        pop = Population.from_arrow(table, ["children"])
        loc = locate(pop, published)
        assert loc.located.all(), (k, loc.reasons)
        assert (loc.n_matches == 1).all(), k  # labels of one level do not overlap
        assert {key[0] for key in published.keys} == published_labels


_FLOATS = st.one_of(
    st.floats(-1e22, 1e22, allow_nan=False, allow_infinity=False),
    st.floats(-1e-4, 1e-4, allow_nan=False, allow_infinity=False),
    st.integers(-50, 50).map(float),
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(_FLOATS, st.sampled_from(["a", "b", "c"])), min_size=2, max_size=30),
    st.integers(1, 4),
)
def test_mondrian_numeric_labels_locate_their_records(
    rows: list[tuple[float, str]], k: int
) -> None:
    """Mondrian publishes numeric QIs as 'lo-hi' ranges of the values present: read back by
    the locator they cover every record of the group (also for values Arrow writes with an
    exponent, e.g. 1e-05 or 1e+20 from a Parquet float column)."""
    from airflow_privacy.core.anonymize import anonymize

    k = min(k, len(rows))
    table = pa.table({"x": pa.array([r[0] for r in rows], pa.float64()),
                      "s": [r[1] for r in rows]})  # fmt: skip
    result = anonymize(table, ["x"], "s", "mondrian", [("k-anonymity", {"k": k})])
    published = PublishedRelease.from_arrow(result.release, ["x"], "s")
    original = table.take(pa.array(result.source_rows))
    loc = locate(Population.from_arrow(original, ["x"]), published)
    assert loc.located.all(), loc.reasons
    labels = result.release.column("x").to_pylist()
    for i, label in enumerate(labels):  # each record is in its own group
        assert published.keys.index((label,)) in loc.groups(i)


def test_unlocatable_number_names_labels_read_as_text() -> None:
    r = release([("1e-05-2e-05", "a"), ("3-4", "b")], ("x",))
    loc = locate(Population({"x": ("0.000015", "3.5", "9")}, 3), r)
    assert loc.groups(1) == [1]
    assert loc.reasons[0] == (
        "x='0.000015' is covered by no published x label (labels read as plain text, not as "
        "numbers or intervals: '1e-05-2e-05')"
    )
    assert loc.reasons[2].startswith("x='9' is covered by no published x label (labels")


def test_composition_audit_refuses_a_hierarchy_for_a_column_that_is_not_a_qi() -> None:
    from airflow_privacy.core.composition import composition_audit

    cand = release([("20-29", "F", "a"), ("20-29", "F", "b")], ("age", "sex"))
    prior = release([("20-29", "*", "a"), ("20-29", "*", "c")], ("age", "sex"))
    pop = Population({"age": ("25",), "sex": ("F",)}, 1)
    edu = adult_hierarchies()["education"]
    composition_audit(pop, cand, [prior], hierarchies={"sex": edu})
    for col in ("education", "s"):
        with pytest.raises(InputError) as info:
            composition_audit(pop, cand, [prior], hierarchies={"age": edu, col: edu})
        assert str(info.value) == (
            f"a hierarchy is given for column {col!r}, which is not among the QIs "
            "('age', 'sex'); give hierarchies for QI columns only"
        )


@pytest.mark.parametrize(
    ("label", "inside", "outside"),
    [
        ("4-5", ["4", "5", "4.0"], ["3", "6", "5.5"]),  # interval hierarchy, whole numbers
        ("-4--3", ["-4", "-3"], ["-5", "-2"]),
        ("[4,6)", ["4", "5.5", "5.999"], ["3.999", "6", "6.5"]),  # with fractions
        ("[-2,0)", ["-2", "-0.5"], ["0", "-2.5"]),
        ("<30", ["29.9"], ["30"]),
        (">=40", ["40"], ["39.9"]),
        ("130**", ["13012"], ["1301", "13112"]),
        ("*", ["anything", "5"], []),
        ("0.5-1.25", ["0.5", "1.25", "1"], ["1.26"]),  # Mondrian
        ("0.00001-100000000000000000000", ["1e-05", "1e+20", "7"], ["1e+21", "0"]),
        ("1e+20", ["1e+20", "100000000000000000000"], ["1e+21"]),  # Mondrian single value
        ("-0.5", ["-0.5"], ["0.5"]),
    ],
)
def test_every_label_form_the_project_writes_is_read_back(
    label: str, inside: list[str], outside: list[str]
) -> None:
    for value in inside:
        assert covers(label, value), (label, value)
    for value in outside:
        assert not covers(label, value), (label, value)


def test_a_code_with_a_leading_zero_is_text_not_a_number() -> None:
    """An exact label equals the other spellings of its number (17 and 17.0), but a code
    with a leading zero is text: zip 02138 is not 2138, and 00 is not 0 (a wider match would
    put other people among a group's candidates and understate the attack)."""
    assert covers("17", "17.0") and covers("17.0", "17") and covers("-3", "-3.0")
    assert not covers("02138", "2138") and not covers("2138", "02138")
    assert not covers("0", "00") and not covers("00", "0") and covers("00", "00")
    assert covers("0.5", "0.50") and not covers("05", "5")
