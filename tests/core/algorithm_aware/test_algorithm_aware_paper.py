"""Zhang, Jajodia, Brodsky (CCS 2007), introduction: the patient table (Table 1) and the
sequence of Figure 1. The naive first-safe algorithm releases table (c) ``(*, Sex)``, and an
adversary who knows the algorithm learns that Clark and Diana both have Cancer; the safe
mode releases a candidate whose own audit passes entropy 2-diversity."""

from __future__ import annotations

from fractions import Fraction

import pyarrow as pa
import pytest

from airflow_privacy.core.algorithm_aware import (
    anonymize,
    audit_algorithm,
    choose_release,
    make_rule,
)
from airflow_privacy.core.algorithm_aware.candidates import Generalizer
from airflow_privacy.errors import InputError
from tests import algorithm_aware_oracle as oracle

NAMES = ["Alan", "Bob", "Clark", "Diana", "Ellen", "Fen"]
AGE = ["Old", "Old", "Middle", "Middle", "Young", "Young"]
SEX = ["M", "M", "M", "F", "F", "F"]
COND = ["Heart Disease", "Viral Infection", "Cancer", "Cancer", "Flu", "Ulcer"]
SEQUENCE = ["age,sex", "age", "sex", "*"]  # (Age, Sex), (Age, *), (*, Sex), (*, *)
ENTROPY2 = [("entropy-l-diversity", {"l": 2})]


def patients() -> pa.Table:
    return pa.table({"name": NAMES, "age": AGE, "sex": SEX, "condition": COND})


@pytest.fixture(scope="module")
def gen() -> Generalizer:
    return Generalizer(patients(), ["age", "sex"], "condition", id_column="name")


def test_naive_releases_c_and_reveals_clark_and_diana(gen: Generalizer) -> None:
    cands = gen.candidates(SEQUENCE)
    result = audit_algorithm(gen.population, cands, ENTROPY2, mode="naive")
    assert result.released == "sex"  # table (c)
    assert result.released_passes  # (c) passes entropy 2-diversity (even 3-diversity)
    assert result.method == "exact"
    assert result.consistent_worlds == 36
    assert result.disclosure_set_size == 4
    assert result.true_world_in_set
    assert sorted(result.flagged) == ["Clark", "Diana"]
    by_name = {p.person: p for p in result.people}
    for who in ("Clark", "Diana"):
        assert by_name[who].posterior == {"Cancer": 1.0}
        assert by_name[who].top_posterior == 1.0
    assert result.predicate_on_set["passes"] is False
    assert sorted(result.predicate_on_set["failing_people"]) == ["Clark", "Diana"]
    assert not result.safe


def test_table_c_passes_entropy_3_diversity(gen: Generalizer) -> None:
    cands = gen.candidates(SEQUENCE)
    rule = make_rule("naive", gen.population, cands, [("entropy-l-diversity", {"l": 3})])
    assert rule.release(gen.population.truth) == 2


def test_safe_mode_releases_a_candidate_whose_audit_passes(gen: Generalizer) -> None:
    cands = gen.candidates(SEQUENCE)
    choice = choose_release(make_rule("safe", gen.population, cands, ENTROPY2))
    assert choice.released == "*"  # (c) is skipped: its disclosure set fails
    assert [s["candidate"] for s in choice.skipped] == ["age,sex", "age", "sex"]
    assert choice.disclosure_set_size == 72  # the two Cancers share an age pair
    result = audit_algorithm(gen.population, cands, ENTROPY2, mode="safe")
    assert result.released == "*"
    assert result.predicate_on_set["passes"] is True
    assert result.flagged == []
    assert result.safe
    by_name = {p.person: p for p in result.people}
    assert by_name["Alan"].posterior["Cancer"] == pytest.approx(1 / 3, abs=1e-12)


def test_paper_example_matches_the_oracle(gen: Generalizer) -> None:
    cands = gen.candidates(SEQUENCE)
    groups = [c.groups.tolist() for c in cands]
    x = tuple(COND)
    crit = ENTROPY2[0]
    assert oracle.naive_release(groups, crit, x) == 2
    ds = oracle.naive_disclosure_set(groups, crit, x, 2)
    assert len(ds) == 4
    post = oracle.posterior(ds)
    assert post[2] == {"Cancer": Fraction(1)} and post[3] == {"Cancer": Fraction(1)}
    released = oracle.safe_ddf(groups, crit, x)
    assert released[x] == 3
    safe_ds = oracle.safe_disclosure_set(groups, crit, x, 3)
    assert len(safe_ds) == 72
    assert oracle.set_passes(crit, groups[3], safe_ds)


def test_lattice_anonymizer_modes_on_the_paper_table() -> None:
    table = patients().select(["age", "sex", "condition"])
    naive = anonymize(table, ["age", "sex"], "condition", "lattice", ENTROPY2)
    assert naive.manifest.details["levels"] == {"age": 1, "sex": 0}  # table (c)
    assert "disclosure" not in naive.manifest.details
    safe = anonymize(table, ["age", "sex"], "condition", "lattice", ENTROPY2, disclosure="safe")
    assert safe.manifest.details["levels"] == {"age": 1, "sex": 1}
    info = safe.manifest.details["disclosure"]
    assert info["naive_rank"] == 3 and info["rank"] == 4
    assert info["disclosure_set_size"] == 72


def test_lattice_sequence_is_the_papers_order(gen: Generalizer) -> None:
    order = gen.lattice_sequence(ENTROPY2)
    assert [gen.name(node) for node in order] == SEQUENCE


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"released": "age,zip"}, "unknown candidate 'age,zip'"),
        ({"released": 7}, "unknown candidate 7"),
        ({"threshold": 0.0}, "threshold must be in"),
        ({"threshold": 1.5}, "threshold must be in"),
        ({"mode": "clever"}, "unknown disclosure mode 'clever'"),
        ({"confidence": 1.0}, "confidence must be in"),
        ({"exact_limit": 0}, "exact.limit"),
    ],
)
def test_bad_input_names_the_culprit(
    gen: Generalizer, kwargs: dict[str, object], match: str
) -> None:
    cands = gen.candidates(SEQUENCE)
    with pytest.raises(InputError, match=match):
        audit_algorithm(gen.population, cands, ENTROPY2, **kwargs)  # type: ignore[arg-type]


def test_bad_candidate_specs(gen: Generalizer) -> None:
    with pytest.raises(InputError, match="unknown column 'zip'"):
        gen.parse("age,zip")
    with pytest.raises(InputError, match="level 3 of 'age'"):
        gen.parse("age=3")
    with pytest.raises(InputError, match="sensitive column 'disease' does not exist"):
        Generalizer(patients(), ["age"], "disease")


def test_safe_mode_refuses_criteria_without_a_set_form(gen: Generalizer) -> None:
    cands = gen.candidates(SEQUENCE)
    with pytest.raises(InputError, match="ck-safety has no disclosure-set form"):
        make_rule("safe", gen.population, cands, [("ck-safety", {"c": 0.9, "k": 1})])
    # ... but any registry criterion works as the naive algorithm's stopping test
    result = audit_algorithm(gen.population, cands, [("ck-safety", {"c": 0.9, "k": 0})],
                             released="sex")  # fmt: skip
    assert result.predicate_on_set["supported"] is False


def test_safe_lattice_needs_no_suppression() -> None:
    table = patients().select(["age", "sex", "condition"])
    with pytest.raises(InputError, match="disclosure safe needs suppression 0"):
        anonymize(table, ["age", "sex"], "condition", "lattice", ENTROPY2,
                  disclosure="safe", suppression_limit=0.5)  # fmt: skip
    with pytest.raises(InputError, match="unknown disclosure mode 'paranoid'"):
        anonymize(table, ["age", "sex"], "condition", "lattice", ENTROPY2, disclosure="paranoid")


def test_the_anonymizer_package_runs_the_safe_mode_only_when_given_it() -> None:
    """``core.anonymize`` never imports the algorithm-aware search (which builds on it): its
    ``anonymize`` takes the safe search as a ``chooser``, which
    ``core.algorithm_aware.anonymize`` supplies; without it, ``disclosure="safe"`` says where
    the safe mode is instead of publishing the naive node."""
    from airflow_privacy.core.algorithm_aware.lattice_mode import safe_lattice_choice
    from airflow_privacy.core.anonymize import anonymize as plain

    table = patients().select(["age", "sex", "condition"])
    with pytest.raises(InputError, match=r"core\.algorithm_aware\.anonymize"):
        plain(table, ["age", "sex"], "condition", "lattice", ENTROPY2, disclosure="safe")
    given = plain(table, ["age", "sex"], "condition", "lattice", ENTROPY2, disclosure="safe",
                  chooser=safe_lattice_choice)  # fmt: skip
    safe = anonymize(table, ["age", "sex"], "condition", "lattice", ENTROPY2, disclosure="safe")
    assert given.manifest.details["disclosure"] == safe.manifest.details["disclosure"]
    assert given.manifest.details["levels"] == safe.manifest.details["levels"]
