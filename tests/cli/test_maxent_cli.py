"""``airflow-privacy maxent``: JSON contract, exit codes, text, outputs, bad input."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from airflow_privacy.cli import main

# Figure 1 of Du et al. 2008: name, gender, degree, disease, bucket
FIG1 = [
    ("male", "college", "Flu", 1),
    ("male", "college", "Pneumonia", 1),
    ("female", "college", "Breast Cancer", 1),
    ("male", "high school", "Flu", 1),
    ("male", "college", "HIV", 2),
    ("male", "high school", "Pneumonia", 2),
    ("female", "junior", "Breast Cancer", 2),
    ("female", "college", "HIV", 3),
    ("female", "graduate", "Lung Cancer", 3),
    ("male", "graduate", "Flu", 3),
]
# the published release shuffles the diseases within each bucket
RELEASE_ROWS = [
    ("male", "college", "Breast Cancer", 1),
    ("male", "college", "Flu", 1),
    ("female", "college", "Flu", 1),
    ("male", "high school", "Pneumonia", 1),
    ("male", "college", "Pneumonia", 2),
    ("male", "high school", "Breast Cancer", 2),
    ("female", "junior", "HIV", 2),
    ("female", "college", "Lung Cancer", 3),
    ("female", "graduate", "Flu", 3),
    ("male", "graduate", "HIV", 3),
]

KNOWLEDGE = """\
knowledge:
  - name: men rarely have breast cancer
    given: {gender: male}
    value: Breast Cancer
    probability: 0
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    rel = tmp_path / "release.csv"
    rel.write_text(
        "gender,degree,disease,bucket\n"
        + "".join(f"{g},{d},{s},{b}\n" for g, d, s, b in RELEASE_ROWS)
    )
    orig = tmp_path / "original.csv"
    orig.write_text("gender;degree;disease\n" + "".join(f"{g};{d};{s}\n" for g, d, s, _ in FIG1))
    know = tmp_path / "k.yaml"
    know.write_text(KNOWLEDGE)
    return {"release": rel, "original": orig, "knowledge": know, "dir": tmp_path}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


def base(f: dict[str, Path]) -> list[str]:
    return ["maxent", str(f["release"]), "--sensitive", "disease", "--bucket", "bucket", "--quiet"]


def test_json_contract_and_exit_codes(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*base(files), "--knowledge", str(files["knowledge"]), "--format", "json"]
    code, out, err = run(argv, capsys)
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["step"] == "maxent" and data["outcome"] == "estimated"
    d = data["details"]
    (result,) = data["results"]
    # both women of buckets 1 and 2 must have breast cancer (the paper's introduction)
    assert d["max_posterior"] == pytest.approx(1.0, abs=1e-12)
    assert result["criterion"] == "maxent" and result["value"] == d["max_posterior"]
    top = {(a["label"], a["value"]) for a in d["top_at_risk"] if a["posterior"] > 1 - 1e-9}
    # the group and its posterior, never which value it is likely to hold (docs/design.md)
    assert ("gender=female, degree=junior", None) in top
    assert "Breast Cancer" not in out and "Flu" not in out
    assert d["release"]["qi_columns"] == ["gender", "degree"]  # default: all other columns
    assert d["release"]["records"] == 10 and d["release"]["buckets"] == 3
    assert data["release"]["records"] == 10 and data["release"]["groups"] == 3
    assert data["release"]["group_columns"] == ["bucket"]
    assert d["residual"] <= 1e-8
    assert d["solver"]["buckets_solved"] == 2  # bucket 3 has no breast cancer: closed form
    # the envelope counts the statements; their labels and lines are in the file (and in the
    # message of an infeasible one, test_knowledge_errors_name_the_line_and_conflicts)
    assert len(d["knowledge"]) == 1 and "statement" in d["knowledge"][0]
    assert d["knowledge_text"] == f"1 statement(s) from {files['knowledge']}"
    # no threshold: an estimate without a verdict, which no gate reads as passed
    assert data["safe"] is None and result["safe"] is None and d["accuracy"] is None
    code, out, _ = run([*argv, "--c", "0.99"], capsys)
    assert code == 1
    data = json.loads(out)
    assert data["safe"] is False and data["outcome"] == "failed"
    assert data["reasons"] == [f"maxent: {data['results'][0]['reason']}"]
    code, out, _ = run([*argv, "--c", "1", "--not-sensitive", "Breast Cancer"], capsys)
    assert code == 0
    data = json.loads(out)
    d = data["details"]
    assert data["safe"] is True and data["outcome"] == "passed"
    assert data["results"][0]["safe"] is True and d["max_posterior"] < 1
    assert d["max_at"]["value"] != "Breast Cancer"
    # --benign is the same concept; a value absent from the release is noted, not an error
    code, out, _ = run([*argv, "--c", "1", "--benign", "Breast Cancer", "--benign", "Cold"], capsys)
    again = json.loads(out)
    assert code == 0 and again["details"]["max_posterior"] == d["max_posterior"]
    assert again["details"]["benign_absent"] == ["Cold"]
    assert again["results"][0]["parameters"]["benign"] == ["Breast Cancer", "Cold"]


def test_accuracy_against_the_original_is_the_weighted_kl(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Without knowledge P*(s | q) is the closed form; the weighted KL (section 7.1) is
    computed here from its definition."""
    code, out, _ = run(
        [*base(files), "--original", str(files["original"]), "--format", "json"], capsys
    )
    assert code == 0
    got = json.loads(out)["details"]["accuracy"]
    n = len(FIG1)
    qs = sorted({(g, d) for g, d, _, _ in FIG1})
    total = 0.0
    for q in qs:
        truth = [s for g, d, s, _ in FIG1 if (g, d) == q]
        est: dict[str, Fraction] = {}
        for b in (1, 2, 3):
            recs = [r for r in RELEASE_ROWS if r[3] == b]
            nq = sum(1 for r in recs if (r[0], r[1]) == q)
            for r in recs:
                est[r[2]] = est.get(r[2], Fraction(0)) + Fraction(nq, len(recs))
        for s in set(truth):
            p = Fraction(truth.count(s), len(truth))
            total += float(Fraction(len(truth), n) * p) * math.log(p / (est[s] / len(truth)))
    assert got == pytest.approx(total, abs=1e-12)


def test_rules_text_output_and_posterior_table(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out_path = files["dir"] / "posterior.csv"
    argv = [
        *base(files),
        "--original",
        str(files["original"]),
        "--top-positive",
        "2",
        "--top-negative",
        "2",
        "--min-support",
        "1",
        "--rule-width",
        "1",
        "--output",
        str(out_path),
        "--top",
        "3",
        "--c",
        "0.999",
    ]
    code, out, _ = run(argv, capsys)
    assert code == 1
    assert "2 positive + 2 negative rules mined from" in out
    assert "maximum posterior: 1.0000  BLOCKED" in out
    assert "estimation accuracy: " in out and "nats" in out
    assert out.count("\n  ") >= 3
    lines = list(csv.reader(io.StringIO(out_path.read_text())))
    assert lines[0][:5] == ["gender", "degree", "records", "P(Breast Cancer)", "P(Flu)"]
    assert len(lines) == 1 + 6  # six distinct QI values
    for line in lines[1:]:
        probs = [float(v) for v in line[3:]]
        assert sum(probs) == pytest.approx(1.0, abs=1e-12)
    code, out, _ = run([*argv[:-4], "--format", "json"], capsys)
    rules = json.loads(out)["details"]["rules"]
    assert [r["kind"] for r in rules] == ["positive", "positive", "negative", "negative"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--top-positive", "3"], "mine rules from --original"),
        (["--c", "1.5"], "--c must be in (0, 1]"),
        (["--min-support", "0"], "--min-support must be a whole number in [1, 1000000000], got 0"),
        (["--qi", "disease"], "--qi must not name the sensitive"),
        (["--qi", "zip"], "column 'zip' does not exist"),
        (["--output", "out.txt.xyz"], "cannot tell the format"),
        (["--knowledge", "missing.yaml"], "knowledge file 'missing.yaml' does not exist"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, out, err = run([*base(files), *extra], capsys)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_knowledge_errors_name_the_line_and_conflicts(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    bad = files["dir"] / "bad.yaml"
    bad.write_text(KNOWLEDGE.replace("probability: 0", "probability: 2"))
    code, _, err = run([*base(files), "--knowledge", str(bad)], capsys)
    assert code == 2 and "bad.yaml line 5: probability 2 is outside [0, 1]" in err
    bad.write_text(
        KNOWLEDGE + "  - name: women are healthy\n    given: {gender: female}\n"
        "    value: Breast Cancer\n    probability: 0\n"
    )
    out_path = files["dir"] / "p.parquet"
    code, out, err = run([*base(files), "--knowledge", str(bad), "--output", str(out_path)], capsys)
    assert code == 2 and out == "" and not out_path.exists()
    assert "infeasible" in err
    assert "the statement on line 2" in err and "the statement on line 6" in err
    for quoted in ("breast cancer", "Breast Cancer", "women are healthy"):  # nor their labels
        assert quoted not in err


def test_parquet_joint_and_console_script(files: dict[str, Path], tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "release.parquet"
    pq.write_table(
        pa.table(
            {
                "gender": [r[0] for r in RELEASE_ROWS],
                "degree": [r[1] for r in RELEASE_ROWS],
                "disease": [r[2] for r in RELEASE_ROWS],
                "bucket": [r[3] for r in RELEASE_ROWS],
            }
        ),
        path,
    )
    exe = Path(sys.executable).with_name("airflow-privacy")
    argv = [
        str(exe),
        "maxent",
        str(path),
        "--sensitive",
        "disease",
        "--bucket",
        "bucket",
        "--knowledge",
        str(files["knowledge"]),
        "--format",
        "json",
    ]
    split = subprocess.run(argv, capture_output=True, text=True)
    joint = subprocess.run([*argv, "--joint", "--quiet"], capture_output=True, text=True)
    assert split.returncode == 0 and joint.returncode == 0, split.stderr
    assert "solving the maximum-entropy problem" in split.stderr  # progress on stderr
    assert joint.stderr == ""
    a, b = json.loads(split.stdout), json.loads(joint.stdout)
    assert a["details"]["max_posterior"] == pytest.approx(b["details"]["max_posterior"], abs=1e-12)
    assert b["details"]["solver"]["buckets_solved"] == 3


def test_a_release_table_is_counted_in_its_database(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The same release as a SQLite table (only its GROUP BY counts are read) gives the same
    posteriors, verdict and details as the file, with knowledge."""
    import sqlalchemy as sa

    url = f"sqlite:///{files['dir'] / 'w.db'}"
    engine = sa.create_engine(url)
    md = sa.MetaData()
    t = sa.Table("rel", md, *[sa.Column(c, sa.Text) for c in ("gender", "degree", "disease",
                                                              "bucket")])  # fmt: skip
    with engine.begin() as conn:
        md.create_all(conn)
        conn.execute(t.insert(), [dict(zip(("gender", "degree", "disease", "bucket"),
                                           (g, d, s, str(b)), strict=True))
                                  for g, d, s, b in RELEASE_ROWS])  # fmt: skip
    engine.dispose()
    tail = ["--sensitive", "disease", "--bucket", "bucket", "--quiet", "--knowledge",
            str(files["knowledge"]), "--c", "0.9", "--format", "json"]  # fmt: skip
    c1, from_file, _ = run(["maxent", str(files["release"]), *tail], capsys)
    c2, from_db, _ = run(["maxent", "table:rel", "--conn", url, *tail], capsys)
    a, b = json.loads(from_file), json.loads(from_db)
    assert c1 == c2
    for key in ("safe", "outcome", "results"):
        assert a[key] == b[key]
    for d in (a["details"], b["details"]):
        d.pop("release", None)
        d["solver"].pop("seconds")  # time taken
    assert a["details"] == b["details"]


def test_a_big_release_file_is_counted_by_duckdb_with_the_same_result(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file big enough for ``auto`` to pick DuckDB is read as DuckDB's histogram of
    (QIs, bucket, sensitive): the same posteriors and details as the in-process reader."""
    import airflow_privacy.core.backends as backends

    tail = ["--sensitive", "disease", "--bucket", "bucket", "--knowledge",
            str(files["knowledge"]), "--c", "0.9", "--format", "json"]  # fmt: skip
    c1, small, err1 = run(["maxent", str(files["release"]), *tail], capsys)
    assert "with DuckDB" not in err1
    monkeypatch.setattr(backends, "DUCKDB_MIN_BYTES", {"csv": 1, "csv.gz": 1, "parquet": 1})
    monkeypatch.setattr(backends, "DUCKDB_MIN_CELLS", 1)
    c2, big, err2 = run(["maxent", str(files["release"]), *tail], capsys)
    assert "with DuckDB" in err2
    a, b = json.loads(small), json.loads(big)
    assert c1 == c2
    for d in (a, b):
        d["details"]["solver"].pop("seconds")
        d.pop("created_at", None)
    assert a == b


@pytest.mark.parametrize("rows", [0, 2, 1000])
def test_heatmap_rows_sets_the_heatmap_on_both_front_ends(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], rows: int
) -> None:
    """``--heatmap-rows`` / ``heatmap_rows``: the heatmap lists that many QI values (at most
    every QI value of the release: 9 distinct (gender, degree) tuples here), the same on the
    command line and through the operator (one declaration)."""
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.steps.maxent import MAXENT
    from airflow_privacy.providers.airflow import steps
    from airflow_privacy.providers.airflow.operators.maxent import MaxEntRiskOperator

    code, out, _ = run([*base(files), "--heatmap-rows", str(rows), "--format", "json"], capsys)
    assert code == 0
    cli_rows = json.loads(out)["details"]["heatmap"]["rows"]
    distinct = len({(g, d) for g, d, _, _ in RELEASE_ROWS})
    assert len(cli_rows) == min(rows, distinct)
    op = MaxEntRiskOperator(
        task_id="m", release=str(files["release"]), sensitive="disease", threshold=None,
        heatmap_rows=rows,
    )  # fmt: skip
    values = steps.check_arguments(op, MAXENT, parsing=False)
    env = MAXENT.run(MAXENT.request({**values, "name": "maxent"}), GateContext())
    assert env.details["heatmap"]["rows"] == cli_rows


def test_heatmap_rows_out_of_range_is_refused_in_each_front_ends_words(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from airflow_privacy.errors import InputError
    from airflow_privacy.providers.airflow.operators.maxent import MaxEntRiskOperator

    code, _, err = run([*base(files), "--heatmap-rows", "-1"], capsys)
    assert code == 2 and "--heatmap-rows" in err and err.count("\n") == 1
    with pytest.raises(InputError, match=r"^heatmap_rows must be a whole number in \[0, 1000\]"):
        MaxEntRiskOperator(task_id="m", release="r.csv", sensitive="s", threshold=None,
                           heatmap_rows=1001)  # fmt: skip


def test_knowledge_is_bounded_before_the_solver(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """4,001 statements (the file's and the mined rules') are refused with exit 2 before the
    solver (its step grows with their square; 100,000 rules had been accepted); the rule
    counts are bounded as declared."""
    from airflow_privacy.core.maxent.estimate import MAX_STATEMENTS

    fact = "  - given: {gender: male}\n    value: Flu\n    probability: 0.3\n"
    many = files["dir"] / "many.yaml"
    many.write_text("knowledge:\n" + fact * (MAX_STATEMENTS + 1))
    code, _, err = run([*base(files), "--knowledge", str(many)], capsys)
    assert code == 2 and "4,001 knowledge statements" in err and "at most 4,000" in err
    assert "--top-positive" in err and len(err.strip().splitlines()) == 1
    code, _, err = run([*base(files), "--original", str(files["original"]),
                        "--top-negative", "2001"], capsys)  # fmt: skip
    assert code == 2 and "--top-negative" in err
