"""Shared cases of the composition tests: the paper's Table 1 (Ganta et al. 2008), and
hypothesis strategies drawing small scenarios (people with ages, releases cut into age
intervals) that the possible-worlds oracle (tests/composition_oracle.py) can enumerate,
with the engine run on the same scenario. Used by the attack, benign, advice and CLI tests."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pyarrow as pa
from hypothesis import strategies as st

from airflow_privacy.core.composition import (
    Population,
    PublishedRelease,
    composition_audit,
    hash_identifiers,
)
from tests.composition_oracle import OGroup, OScenario

KEY = b"test-key: 0123456789abcdefghijklmnopqrstuvwxyz"  # strong enough for check_key


QIS = ("zip", "age", "nationality")


# Table 1 of Ganta et al. 2008, verbatim: (a) is 4-anonymous, (b) 6-anonymous
TABLE_1A = [
    ("130**", "<30", "*", "AIDS"),
    ("130**", "<30", "*", "Heart Disease"),
    ("130**", "<30", "*", "Viral Infection"),
    ("130**", "<30", "*", "Viral Infection"),
    ("130**", "≥40", "*", "Cancer"),
    ("130**", "≥40", "*", "Heart Disease"),
    ("130**", "≥40", "*", "Viral Infection"),
    ("130**", "≥40", "*", "Viral Infection"),
    ("130**", "3*", "*", "Cancer"),
    ("130**", "3*", "*", "Cancer"),
    ("130**", "3*", "*", "Cancer"),
    ("130**", "3*", "*", "Cancer"),
]


TABLE_1B = [
    ("130**", "<35", "*", "AIDS"),
    ("130**", "<35", "*", "Tuberculosis"),
    ("130**", "<35", "*", "Flu"),
    ("130**", "<35", "*", "Tuberculosis"),
    ("130**", "<35", "*", "Cancer"),
    ("130**", "<35", "*", "Cancer"),
    ("130**", ">=35", "*", "Cancer"),
    ("130**", ">=35", "*", "Cancer"),
    ("130**", ">=35", "*", "Cancer"),
    ("130**", ">=35", "*", "Tuberculosis"),
    ("130**", ">=35", "*", "Viral Infection"),
    ("130**", ">=35", "*", "Viral Infection"),
]


def table(rows: Sequence[tuple[str, ...]]) -> pa.Table:
    cols = list(zip(*rows, strict=True))
    return pa.table({n: list(c) for n, c in zip((*QIS, "condition"), cols, strict=True)})


def hospitals() -> tuple[PublishedRelease, PublishedRelease]:
    a = PublishedRelease.from_arrow(table(TABLE_1A), QIS, "condition", name="H1")
    b = PublishedRelease.from_arrow(table(TABLE_1B), QIS, "condition", name="H2")
    return a, b


def interval_release(s: OScenario, j: int, name: str, labels: list[str]) -> PublishedRelease:
    groups = [((labels[g],), dict(s.multiset(j, g))) for g in range(len(s.releases[j]))]
    return PublishedRelease.from_groups(("age",), "s", groups, name=name)


def fits(lo: int, hi: int):  # type: ignore[no-untyped-def]
    return lambda qi: lo <= int(qi[0]) <= hi


@st.composite
def release_cuts(draw: st.DrawFn, people: list[tuple[int, int]]) -> tuple[list[OGroup], list[str]]:
    """Contiguous groups of people sorted by age (distinct ages): descriptors ``lo-hi``."""
    people = sorted(people, key=lambda p: p[1])
    cuts = draw(st.sets(st.integers(1, max(1, len(people) - 1)), max_size=len(people) - 1))
    bounds = [0, *sorted(c for c in cuts if c < len(people)), len(people)]
    groups, labels = [], []
    for a, b in itertools.pairwise(bounds):
        chunk = people[a:b]
        lo, hi = chunk[0][1], chunk[-1][1]
        groups.append(OGroup(tuple(p for p, _ in chunk), fits=fits(lo, hi)))
        labels.append(f"{lo}-{hi}")
    return groups, labels


@st.composite
def model_scenarios(draw: st.DrawFn) -> tuple[OScenario, list[list[str]]]:
    """Person 0 (age 50) is in every release; everyone else is in exactly one release
    (assumption 3 of the posterior's model), ages distinct within a release."""
    n_rel = draw(st.integers(2, 3))
    domain = ["a", "b", "c"][: draw(st.integers(2, 3))]
    ages = [50]
    values = [draw(st.sampled_from(domain))]
    releases, labels = [], []
    for _ in range(n_rel):
        k = draw(st.integers(1, 3 if n_rel == 2 else 2))
        own = draw(
            st.lists(
                st.integers(40, 60).filter(lambda a: a != 50), min_size=k, max_size=k, unique=True
            )
        )
        ids = []
        for a in own:
            ages.append(a)
            values.append(draw(st.sampled_from(domain)))
            ids.append(len(ages) - 1)
        groups, labs = draw(release_cuts([(0, 50), *((p, ages[p]) for p in ids)]))
        releases.append(tuple(groups))
        labels.append(labs)
    s = OScenario(tuple((str(a),) for a in ages), tuple(values), tuple(releases))
    return s, labels


def engine_on(
    s: OScenario, labels: list[list[str]], overlap: str = "known", benign: Sequence[str] = ()
) -> tuple[object, list[int]]:
    releases = [interval_release(s, j, f"R{j}", labels[j]) for j in range(len(s.releases))]
    people = s.people(0)
    pop = Population(
        {"age": tuple(s.qis[p][0] for p in people)},
        len(people),
        id_hashes=tuple(hash_identifiers([str(p) for p in people], KEY)),
    )
    members = [
        frozenset(hash_identifiers([str(p) for p in s.people(j)], KEY))
        for j in range(1, len(s.releases))
    ]
    res = composition_audit(
        pop,
        releases[0],
        releases[1:],
        overlap=overlap,  # type: ignore[arg-type]
        prior_members=members,
        benign=benign,
    )
    return res, people


@st.composite
def populations(draw: st.DrawFn) -> tuple[OScenario, list[list[str]], str]:
    n_people = draw(st.integers(4, 30))
    domain = [f"v{i}" for i in range(draw(st.integers(2, 6)))]
    ages = draw(st.lists(st.integers(0, 99), min_size=n_people, max_size=n_people, unique=True))
    values = [draw(st.sampled_from(domain)) for _ in range(n_people)]
    releases, labels = [], []
    for _ in range(draw(st.integers(2, 4))):
        present = draw(st.sets(st.integers(0, n_people - 1), min_size=1, max_size=n_people))
        groups, labs = draw(release_cuts([(p, ages[p]) for p in sorted(present)]))
        releases.append(tuple(groups))
        labels.append(labs)
    overlap = draw(st.sampled_from(["known", "worst-case"]))
    return (
        OScenario(tuple((str(a),) for a in ages), tuple(values), tuple(releases)),
        labels,
        overlap,
    )
