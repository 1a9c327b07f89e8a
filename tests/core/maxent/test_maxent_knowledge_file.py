"""The knowledge file (YAML/JSON) written by people: what it means, and error messages that
point at the offending line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_privacy.core.maxent import (
    Bound,
    BucketRelease,
    DistributionFact,
    IndividualFact,
    estimate,
    load_knowledge,
    parse_knowledge,
)
from airflow_privacy.errors import InputError

RELEASE = BucketRelease.from_records(
    ("sex", "degree"),
    [
        (("M", "college"), "1", "Flu"),
        (("M", "college"), "1", "Pneumonia"),
        (("F", "college"), "1", "Breast Cancer"),
        (("M", "high school"), "1", "Flu"),
        (("M", "college"), "2", "HIV"),
        (("M", "high school"), "2", "Pneumonia"),
        (("F", "junior"), "2", "Breast Cancer"),
        (("No", "39"), "2", "Flu"),
    ],
    sensitive="disease",
)

GOOD = """\
version: 1
people:
  Alice: {sex: F, degree: college}
  Bob: {sex: M, degree: college}
knowledge:
  - name: men rarely have breast cancer
    given: {sex: M}
    value: Breast Cancer
    probability: 0
  - given: {sex: M, degree: college}
    value: [Flu, Pneumonia]
    probability: [0.2, 0.8]
  - given: {}
    value: HIV
    probability: 1/8
  - person: Alice
    value: [Breast Cancer, HIV]
    probability: 1
  - people: [Alice, Bob]
    value: HIV
    count: [0, 1]
  - given: {sex: No, degree: 39}
    value: Flu
    probability: 1
"""


def test_statements_mean_what_they_say() -> None:
    k = parse_knowledge(GOOD, RELEASE, file="k.yaml")
    assert [type(f) for f in k.facts] == [DistributionFact] * 3 + [IndividualFact] * 2 + [
        DistributionFact
    ]
    f0, f1, f2, f3, f4, f5 = k.facts
    assert isinstance(f0, DistributionFact) and f0.given == (("sex", "M"),)
    assert f0.values == ("Breast Cancer",) and f0.bound == Bound(0, 0)
    assert f0.source.label == "men rarely have breast cancer" and f0.source.line == 6
    assert isinstance(f1, DistributionFact) and f1.bound == Bound(0.2, 0.8)
    assert f1.values == ("Flu", "Pneumonia") and f1.source.line == 10
    assert isinstance(f2, DistributionFact) and f2.given == () and f2.bound.low == 0.125
    assert isinstance(f3, IndividualFact) and f3.people == ("Alice",) and f3.bound == Bound(1, 1)
    assert isinstance(f4, IndividualFact) and f4.people == ("Alice", "Bob")
    assert f4.bound == Bound(0, 1)
    # unquoted No / 39 stay the strings "No" / "39" (no YAML boolean or integer)
    assert isinstance(f5, DistributionFact) and f5.given == (("sex", "No"), ("degree", "39"))
    assert [p.name for p in k.people] == ["Alice", "Bob"]
    # and they solve
    res = estimate(RELEASE, k)
    assert res.solution.stats.residual <= 1e-12
    alice = res.people_posterior[res.people.index("Alice")]
    assert alice[RELEASE.values.index("Breast Cancer")] + alice[
        RELEASE.values.index("HIV")
    ] == pytest.approx(1.0, abs=1e-12)


def test_json_is_accepted_with_line_numbers(tmp_path: Path) -> None:
    doc = {
        "knowledge": [
            {"given": {"sex": "M"}, "value": "Flu", "probability": 0.5},
            {"given": {"sex": "M"}, "value": "Flux", "probability": 0.5},
        ]
    }
    path = tmp_path / "k.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    with pytest.raises(
        InputError, match=r"^k\.json line 14: item 1 of 'value' is not a value of the sensitive"
    ) as info:
        load_knowledge(path, RELEASE)
    assert "Flu" not in str(info.value)  # never a value, not even a guess (docs/design.md)
    path.write_text(json.dumps(doc), encoding="utf-8")  # one line
    with pytest.raises(InputError, match=r"^k\.json line 1: item 1 of 'value'"):
        load_knowledge(path, RELEASE)


def _error(text: str) -> str:
    with pytest.raises(InputError) as info:
        parse_knowledge(text, RELEASE, file="k.yaml")
    return str(info.value)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "given: {sex: M}\n",
            "given: {sex: Male}\n",
            "k.yaml line 7: unknown value 'Male' of QI column 'sex'",
        ),
        (
            "    probability: 0\n",
            "    probability: 1.5\n",
            "k.yaml line 9: probability 1.5 is outside [0, 1]",
        ),
        (
            "    probability: 0\n",
            "    probability: -0.1\n",
            "k.yaml line 9: probability -0.1 is outside [0, 1]",
        ),
        (
            "given: {sex: M, degree: college}",
            "given: {sex: M, disease: Flu}",
            "k.yaml line 10: 'disease' is not a QI column (it is the sensitive column)",
        ),
        (
            "given: {sex: M, degree: college}",
            "given: {sex: M, zip: '1485'}",
            "k.yaml line 10: 'zip' is not a QI column; QI columns: sex, degree",
        ),
        (
            "    value: HIV\n    count",
            "    value: HIV!\n    count",
            "k.yaml line 20: item 1 of 'value' is not a value of the sensitive column 'disease' "
            "(4 values; compared exactly, case and spaces included)",
        ),
        (
            "probability: [0.2, 0.8]",
            "probability: [0.8, 0.2]",
            "k.yaml line 12: 'probability' interval [0.8, 0.2] has low > high",
        ),
        ("count: [0, 1]", "count: 3", "k.yaml line 21: count 3 is outside [0, 2]"),
        (
            "  - person: Alice",
            "  - person: Carol",
            "k.yaml line 16: the person named here is not declared under 'people:' (2 declared;",
        ),
        (
            "  Bob: {sex: M, degree: college}",
            "  Alice: {sex: M, degree: college}",
            "k.yaml line 4: this person is already declared on line 3",
        ),
        (
            "  Bob: {sex: M, degree: college}",
            "  Bob: {sex: M}",
            "k.yaml line 4: the person declared on line 4: QI column 'degree' is missing",
        ),
        (
            "    value: Breast Cancer\n    probability: 0",
            "    valu: Breast Cancer\n    probability: 0",
            "k.yaml line 8: unknown key 'valu' in statement 1",
        ),
        (
            "    probability: 0\n",
            "    probability: zero\n",
            "k.yaml line 9: 'probability' must be a number, got 'zero'",
        ),
        ("    probability: 0\n", "", "k.yaml line 6: missing 'probability'"),
        (
            "  - given: {}\n",
            "  - given: {}\n    person: Alice\n",
            "k.yaml line 13: a statement needs exactly one of 'given'",
        ),
        ("version: 1", "version: 2", "k.yaml line 1: version must be 1"),
        ("knowledge:", "knowlege:", "k.yaml line 5: unknown key 'knowlege'"),
        (
            "    value: [Flu, Pneumonia]",
            "    value: [Flu, Flu]",
            "k.yaml line 11: 'value' lists the same sensitive value twice (items 1 and 2)",
        ),
        ("count: [0, 1]", "probability: 0.5", "'people' statements take 'count'"),
        (
            "people: [Alice, Bob]",
            "people: [Alice, Alice]",
            "k.yaml line 19: person #1 is listed more than once (entries 1 and 2 of 'people')",
        ),
        (
            "    value: Breast Cancer\n",
            "    value: [Breast Cancer\n",
            "k.yaml line 9: not valid YAML/JSON",
        ),
    ],
)
def test_errors_point_at_the_line(old: str, new: str, expected: str) -> None:
    assert old in GOOD
    message = _error(GOOD.replace(old, new, 1))
    assert expected in message
    for secret in ("Alice", "Bob", "Carol", "HIV", "Flu", "Breast Cancer"):  # never quoted
        assert secret not in message


def test_empty_and_missing_files(tmp_path: Path) -> None:
    assert "empty" in _error("")
    assert "missing 'knowledge'" in _error("version: 1\n")
    assert "must be a list" in _error("knowledge: {a: 1}\n")
    with pytest.raises(InputError, match="does not exist"):
        load_knowledge(tmp_path / "nope.yaml")


def test_without_a_release_only_syntax_is_checked() -> None:
    k = parse_knowledge(
        "knowledge:\n  - given: {anything: x}\n    value: Flu\n    probability: 0.5\n"
    )
    assert len(k) == 1
    # validation then happens when the knowledge meets the release
    with pytest.raises(InputError, match=r"on line 2: 'anything' is not a QI column"):
        estimate(RELEASE, k)


def test_statements_that_match_no_record_or_contradict_are_named() -> None:
    k = parse_knowledge(
        "knowledge:\n  - given: {sex: F, degree: high school}\n    value: Flu\n"
        "    probability: 0.5\n",
        RELEASE,
        file="k.yaml",
    )
    with pytest.raises(
        InputError, match=r"on line 2: no record of the release has its values of sex, degree$"
    ):
        estimate(RELEASE, k)
    k = parse_knowledge(
        "knowledge:\n  - name: all women have HIV\n    given: {sex: F}\n    value: HIV\n"
        "    probability: 1\n",
        RELEASE,
        file="k.yaml",
    )
    with pytest.raises(InputError, match=r"infeasible: the statement on line 2 contradicts") as e:
        estimate(RELEASE, k)
    assert "HIV" not in str(e.value) and "women" not in str(e.value)  # not its label either
