"""Nothing leaks through the command line (docs/design.md, "Nothing leaks").

A release with a homogeneous group whose one sensitive value is a distinctive string, and
a knowledge file naming a person with it: every classic and background-knowledge criterion,
the disclosure curve, the skyline, MaxEnt (with a knowledge file and rules mined from the
original) and the HTML report run through :func:`airflow_privacy.cli.main` in text and
JSON. The string, the person's name and the group's value may appear in no stdout, no
stderr and no report: reasons and witnesses name the group and its shares, people are
``person #i``, knowledge statements are named by their line.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from airflow_privacy.cli import main

SECRET = "ZZ-SECRET-DIAG"
NAME = "Zelda Secretname"
# group zip=130**, age=<30 is homogeneous: everyone in it has SECRET
ROWS = [
    ("130**", "<30", SECRET), ("130**", "<30", SECRET), ("130**", "<30", SECRET),
    ("1485*", ">=40", "Flu"), ("1485*", ">=40", "Cold"), ("1485*", ">=40", "Asthma"),
    ("1485*", ">=40", "Flu"), ("130**", "3*", "Cold"), ("130**", "3*", "Asthma"),
    ("130**", "3*", "Flu"), ("130**", "3*", "Gout"),
]  # fmt: skip
FORBIDDEN = (SECRET, "ZZ-SECRET", "Secretname", "Zelda")


def leaks(text: str) -> list[str]:
    return [s for s in FORBIDDEN if s.lower() in text.lower()]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    release = tmp_path / "release.csv"
    lines = ["zip,age,disease"] + [",".join(r) for r in ROWS]
    release.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # the same records as a bucketized release: one bucket per group
    buckets = {("130**", "<30"): 0, ("1485*", ">=40"): 1, ("130**", "3*"): 2}
    bucketized = tmp_path / "bucketized.csv"
    lines = ["zip,age,disease,bucket"] + [f"{z},{a},{d},{buckets[z, a]}" for z, a, d in ROWS]
    bucketized.write_text("\n".join(lines) + "\n", encoding="utf-8")
    knowledge = tmp_path / "k.yaml"
    knowledge.write_text(
        "version: 1\n"
        "people:\n"
        f"  {NAME}: {{zip: '130**', age: '<30'}}\n"
        "knowledge:\n"
        f"  - name: {NAME} has {SECRET}\n"
        f"    person: {NAME}\n"
        f"    value: {SECRET}\n"
        "    probability: [0.5, 1]\n",
        encoding="utf-8",
    )
    return {"release": release, "bucketized": bucketized, "knowledge": knowledge, "dir": tmp_path}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, out)
    captured = capsys.readouterr()
    return code, out.getvalue() + captured.out + captured.err


CRITERIA = [
    "k-anonymity:k=4",
    "distinct-l-diversity:l=2",
    "entropy-l-diversity:l=2",
    "recursive-cl-diversity:c=2,l=2",
    "t-closeness:t=0.1",
    "ck-safety:c=0.5,k=1",
    "ck-safety:c=0.5,k=3",
    "negation-safety:c=0.5,k=2",
    "alpha-k-anonymity:alpha=0.5,k=2",
    "alpha-k-anonymity:alpha=0.4,k=2,sensitive_value=Flu",
    "basic-beta-likeness:beta=1",
    "enhanced-beta-likeness:beta=1",
    "delta-disclosure:delta=1",
    "prosecutor-risk:highest=0.2",
    "k-map:k=20,sampling_fraction=0.5",
]


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("criterion", [*CRITERIA, "skyline"])
def test_every_failing_criterion_names_the_group_not_its_value(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], criterion: str, fmt: str
) -> None:
    argv = ["check", str(files["release"]), "--sensitive", "disease", "--group", "zip",
            "--group", "age", "--format", fmt]  # fmt: skip
    if criterion == "skyline":
        argv += ["--criterion", "skyline", "--point", "1,1,1,0.5", "--point", "0,0,0,0.9"]
    else:
        argv += ["--criterion", criterion]
    code, text = run(argv, capsys)
    assert code == 1, text  # every one of them fails on the homogeneous group
    assert not leaks(text), (criterion, text)
    # the group is named, so a steward can act on it; not with a designated value, where
    # "group G has more than alpha of value V" would disclose V for G's people
    if criterion.startswith("delta-disclosure"):
        # every group lacks some value (|ln 0| is infinite): the witness is one of them
        assert any(g in text for g in ("zip=130**, age=<30", "zip=130**, age=3*",
                                       "zip=1485*, age=>=40")), text  # fmt: skip
    elif criterion.split(":")[0] != "k-anonymity" and "sensitive_value=" not in criterion:
        assert "zip=130**, age=<30" in text


def test_all_criteria_at_once_and_the_html_report(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    report = files["dir"] / "r.html"
    argv = ["check", str(files["release"]), "--sensitive", "disease", "--group", "zip",
            "--group", "age", "--report", str(report)]  # fmt: skip
    for c in [*CRITERIA, "skyline:points=1,1,1,0.5"]:
        argv += ["--criterion", c]
    for fmt in ("text", "json"):
        code, text = run([*argv, "--format", fmt], capsys)
        assert code == 1 and not leaks(text), text
        html = report.read_text(encoding="utf-8")
        assert "zip=130**, age=&lt;30" in html or "zip=130**, age=<30" in html
        assert not leaks(html), leaks(html)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_disclosure_curve_and_skyline_explorations(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    common = [str(files["release"]), "--sensitive", "disease", "--group", "zip",
              "--group", "age", "--format", fmt]  # fmt: skip
    for argv in (
        ["disclosure", *common, "--k-max", "3"],
        ["skyline", *common, "--c", "0.6", "--max-l", "2", "--max-k", "2", "--max-m", "2"],
    ):
        _, text = run(argv, capsys)
        assert "value A" in text  # the witness's values are letters
        assert not leaks(text), (argv[0], text)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_maxent_with_a_named_person_and_mined_rules(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    argv = ["maxent", str(files["bucketized"]), "--sensitive", "disease", "--bucket", "bucket",
            "--knowledge", str(files["knowledge"]), "--original", str(files["release"]),
            "--top-positive", "3", "--top-negative", "2", "--min-support", "2", "--c", "0.5",
            "--report", str(files["dir"] / "m.html"), "--format", fmt]  # fmt: skip
    code, text = run(argv, capsys)
    assert code == 1, text
    assert not leaks(text), text
    assert not leaks((files["dir"] / "m.html").read_text(encoding="utf-8"))
    if fmt == "json":
        assert "person #1" in text


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # infeasible: the bucket of <30 holds only SECRET, so the person cannot have Flu
        (f"    value: {SECRET}\n    probability: [0.5, 1]", "    value: Flu\n    probability: 1",
         "infeasible: the statement on line 5"),
        # a value the release does not have (a typo of the secret)
        (f"    value: {SECRET}\n", f"    value: {SECRET}X\n", "k.yaml line 7: item 1 of 'value'"),
        # a person who is not declared
        (f"    person: {NAME}\n", f"    person: {NAME} Jr\n", "k.yaml line 6: the person named"),
        # the person moved to a bucket without the value (one more person declared)
        ("age: '<30'", "age: '3*'}\n  Other: {zip: '1485*', age: '<30'",
         "the statement on line 6 cannot hold: its lower bound is 0.5 > 0 but no bucket"),
        # declared twice
        ("knowledge:\n", f"  {NAME}: {{zip: '130**', age: '3*'}}\nknowledge:\n",
         "k.yaml line 4: this person is already declared on line 3"),
    ],
)  # fmt: skip
def test_maxent_knowledge_errors_name_lines_and_pseudonyms(
    files: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    old: str,
    new: str,
    expected: str,
) -> None:
    k = files["knowledge"]
    text_in = k.read_text(encoding="utf-8")
    assert old in text_in
    k.write_text(text_in.replace(old, new, 1), encoding="utf-8")
    for fmt in ("text", "json"):
        argv = ["maxent", str(files["bucketized"]), "--sensitive", "disease", "--bucket",
                "bucket", "--knowledge", str(k), "--format", fmt]  # fmt: skip
        code, text = run(argv, capsys)
        assert code == 2 and expected in text, text
        assert not leaks(text), text


def test_maxent_person_errors_use_the_result_numbering(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A person whose QI values the release lacks is named ``person #i`` as the result
    would name them (first mention in the statements), with the declaration's line."""
    k = files["knowledge"]
    k.write_text(
        "version: 1\n"
        "people:\n"
        f"  {NAME}: {{zip: '130**', age: '<30'}}\n"
        "  Other Person: {zip: '1485*', age: '<30'}\n"
        "knowledge:\n"
        f"  - person: {NAME}\n"
        f"    value: {SECRET}\n"
        "    probability: [0, 1]\n"
        "  - people: [Other Person]\n"
        "    value: Flu\n"
        "    count: [0, 1]\n",
        encoding="utf-8",
    )
    argv = ["maxent", str(files["bucketized"]), "--sensitive", "disease", "--bucket", "bucket",
            "--knowledge", str(k)]  # fmt: skip
    code, text = run(argv, capsys)
    assert code == 2
    assert (
        "person #2 (declared on line 4): no record of the release has this person's QI values"
        in text
    ), text
    assert not leaks(text) and "Other" not in text


def test_algorithm_aware_reason_and_public_form_name_rows() -> None:
    """Zhang et al.'s patients, named by an id column: the reason flags rows, and the
    public form has neither names nor sensitive values (the full result does)."""
    import json

    import pyarrow as pa

    from airflow_privacy.core.algorithm_aware import audit_algorithm
    from airflow_privacy.core.algorithm_aware.candidates import Generalizer

    table = pa.table({
        "name": ["Alan", "Bob", "Clark", "Diana", "Ellen", "Fen"],
        "age": ["Old", "Old", "Middle", "Middle", "Young", "Young"],
        "sex": ["M", "M", "M", "F", "F", "F"],
        "condition": ["Heart Disease", "Viral Infection", "Cancer", "Cancer", "Flu", "Ulcer"],
    })  # fmt: skip
    gen = Generalizer(table, ["age", "sex"], "condition", id_column="name")
    cands = gen.candidates(["age,sex", "age", "sex", "*"])
    result = audit_algorithm(
        gen.population, cands, [("entropy-l-diversity", {"l": 2})], mode="naive"
    )
    assert sorted(result.flagged) == ["Clark", "Diana"] and result.flagged_rows == [2, 3]
    assert "2 people reach posterior >= " in result.reason and "(rows 2, 3 of the input)" in (
        result.reason
    )
    public = json.dumps(result.public_dict())
    for secret in ("Clark", "Diana", "Cancer", "Heart", "Flu"):
        assert secret not in result.reason and secret not in public, secret
    assert "Clark" in json.dumps(result.to_dict())  # the confidential form keeps them


UNIQUE_ZIP = "ZZ-UNIQUE-ZIP-4242"  # the QI value of the one record unique on its zip


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_risk_analysis_names_no_value_of_a_unique_record(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """The risk command counts records and names attributes: no QI value of a unique record,
    no sensitive value, no raw identifier, in its output, its per-record file or the report
    built from its envelope."""
    rel = files["dir"] / "with_ids.csv"
    rows = [*ROWS, (UNIQUE_ZIP, "<30", SECRET)]
    lines = ["name,zip,age,disease"] + [
        f"{NAME if i == len(rows) - 1 else f'person {i}'},{z},{a},{d}"
        for i, (z, a, d) in enumerate(rows)
    ]
    rel.write_text("\n".join(lines) + "\n", encoding="utf-8")
    scores = files["dir"] / f"scores-{fmt}.csv"
    argv = ["risk", str(rel), "--qi", "zip", "--qi", "age", "--sampling-fraction", "0.1",
            "--records", str(scores), "--format", fmt, "--quiet"]  # fmt: skip
    code, text = run(argv, capsys)
    assert code == 0, text
    forbidden = [*FORBIDDEN, UNIQUE_ZIP, "person 3"]
    written = scores.read_text(encoding="utf-8")
    for out in (text, written):
        assert not [s for s in forbidden if s.lower() in out.lower()], out
    assert "special unique" in text  # the unique record is counted, not shown
    if fmt == "json":
        env = files["dir"] / "risk.json"
        env.write_text(text, encoding="utf-8")
        report = files["dir"] / "risk.html"
        code, out = run(["report", str(rel), "--check", str(env), "--sensitive", "disease",
                         "--group", "age", "--out", str(report), "--quiet"], capsys)  # fmt: skip
        assert report.is_file(), out
        html = report.read_text(encoding="utf-8")
        assert 'id="risk"' in html
        # the report's own group tables (by age) are not the risk section's business; the
        # risk section itself names no value of the unique record
        section = html[html.index('id="risk"') : html.index("</section>", html.index('id="risk"'))]
        assert not [s for s in forbidden if s.lower() in section.lower()]
        assert not leaks(out)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_entities_and_weights_name_no_identifier_or_value(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """``--entity`` and ``--weight``: the entity identifiers (here people's names) never leave
    the data, in a passing or failing check, a refusal (an entity with two sensitive values,
    one of them the secret), the risk analysis or a refused weight."""
    rel = files["dir"] / "entities.csv"
    rows = [(f"person {i}", z, a, d) for i, (z, a, d) in enumerate(ROWS)]
    rows += [(NAME, "1485*", ">=40", "Flu"), (NAME, "130**", "3*", "Flu")]
    lines = ["name,zip,age,disease,w"] + [",".join([*r, "2.5"]) for r in rows]
    rel.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ent = ["--entity", "name", "--format", fmt, "--quiet"]
    forbidden = [*FORBIDDEN, "person 3", "person 0"]
    for crit in ("k-anonymity:k=2", "distinct-l-diversity:l=2", "ck-safety:c=0.5,k=1"):
        code, text = run(["check", str(rel), "--sensitive", "disease", "--group", "zip",
                          "--group", "age", "--criterion", crit, *ent], capsys)  # fmt: skip
        assert code in (0, 1), text
        assert not [s for s in forbidden if s.lower() in text.lower()], text
    mixed = files["dir"] / "mixed.csv"
    mixed.write_text(
        "name,zip,age,disease\n"
        f"{NAME},130**,<30,{SECRET}\n{NAME},130**,<30,Flu\nperson 0,130**,<30,Flu\n",
        encoding="utf-8",
    )
    code, text = run(["check", str(mixed), "--sensitive", "disease", "--group", "zip",
                      "--criterion", "distinct-l-diversity:l=2", *ent], capsys)  # fmt: skip
    assert code == 2 and "1 of 2 entities" in text
    assert not [s for s in forbidden if s.lower() in text.lower()], text
    code, text = run(["risk", str(rel), "--qi", "zip", "--qi", "age", "--weight", "w", *ent],
                     capsys)  # fmt: skip
    assert code == 0, text
    assert not [s for s in forbidden if s.lower() in text.lower()], text
    bad = files["dir"] / "bad_weight.csv"
    bad.write_text(f"name,zip,w\n{NAME},130**,1\nperson 0,130**,{SECRET}\n", encoding="utf-8")
    code, text = run(["risk", str(bad), "--qi", "zip", "--weight", "w", *ent], capsys)
    assert code == 2 and "data row 2" in text
    assert not [s for s in forbidden if s.lower() in text.lower()], text


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_population_criteria_name_groups_and_counts(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """k-map against a population table and delta-presence: the population (whose own
    sensitive column holds the secret) is counted on the group columns only; reasons name
    the homogeneous group and counts, the report likewise."""
    population = files["dir"] / "population.csv"
    extra = [("130**", "<30", SECRET), ("1485*", ">=40", SECRET), ("130**", "3*", SECRET)]
    lines = ["zip,age,disease"] + [",".join(r) for r in [*ROWS, *extra]]
    population.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = files["dir"] / "p.html"
    argv = ["check", str(files["release"]), "--sensitive", "disease", "--group", "zip",
            "--group", "age", "--population", str(population), "--criterion", "k-map:k=5",
            "--criterion", "delta-presence:delta_max=0.7", "--report", str(report),
            "--format", fmt]  # fmt: skip
    code, text = run(argv, capsys)
    assert code == 1 and not leaks(text), text
    assert "zip=130**, age=<30" in text  # 3 of its 4 people released: both criteria fail
    assert not leaks(report.read_text(encoding="utf-8"))
    # bad input (no population) names the option, not a value
    code, text = run([*argv[:8], *argv[10:14], "--format", fmt], capsys)
    assert code == 2 and "--population" in text and not leaks(text)
