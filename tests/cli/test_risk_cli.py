"""``airflow-privacy risk``: text and JSON output, bad input (exit 2, the flag named, nothing
written), ``--records``, and the HTML report's risk section (the plot's numbers equal the
envelope's, everything escaped, the strict HTML checker)."""

from __future__ import annotations

import io
import json
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.cli import main
from airflow_privacy.gate.envelope import Envelope
from airflow_privacy.report import ReleaseReport, build_release_report, render_html
from tests.report_html_checker import by_id, find, parse

QIS = ["age", "sex", "zip"]
QI_ARGS = [x for q in QIS for x in ("--qi", q)]
ROWS: list[tuple[str, ...]] = [
    ("30", "M", "100"), ("30", "M", "100"), ("30", "F", "100"), ("40", "F", "200"),
    ("40", "F", "200"), ("40", "F", "200"), ("50", "M", "300"), ("30", "F", "200"),
    ("40", "M", "100"), ("40", "M", "100"),
]  # fmt: skip
HOSTILE = '<script>alert("x")</script>&amp;"\'<img src=x onerror=alert(1)>'


@pytest.fixture
def release(tmp_path: Path) -> Path:
    path = tmp_path / "release.csv"
    lines = ["age,sex,zip,disease"] + [",".join([*r, "flu"]) for r in ROWS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--quiet"], out)
    return code, out.getvalue()


def test_json_is_the_envelope(release: Path) -> None:
    code, text = run("risk", str(release), *QI_ARGS, "--sampling-fraction", "0.5",
                     "--format", "json")  # fmt: skip
    assert code == 0
    env = Envelope.from_dict(json.loads(text))
    assert env.step == "risk" and env.safe is None and env.outcome == "estimated"
    got = {m["measure"]: m["value"] for m in env.details["measures"]}
    f = Counter(ROWS)
    assert got["prosecutor_highest_risk"] == float(Fraction(1, min(f.values())))
    assert got["prosecutor_success_rate"] == pytest.approx(len(f) / len(ROWS), abs=1e-9)
    assert env.details["population"]["sampling_fraction"] == 0.5


def test_text_explains_every_number(release: Path) -> None:
    code, text = run("risk", str(release), *QI_ARGS, "--population-size", "40")
    assert code == 0
    _, js = run("risk", str(release), *QI_ARGS, "--population-size", "40", "--format", "json")
    env = json.loads(js)
    flat = " ".join(text.split())
    for m in env["details"]["measures"]:
        assert m["label"] in text
        assert " ".join(m["explanation"].split()) in flat  # the sentence, folded for the terminal
    assert "no verdict" in text and "Highest prosecutor risk" in text


def test_no_suda_and_threshold(release: Path) -> None:
    code, text = run("risk", str(release), *QI_ARGS, "--no-suda", "--threshold", "0.5",
                     "--format", "json")  # fmt: skip
    env = json.loads(text)
    assert code == 0 and env["details"]["suda"] is None and env["details"]["threshold"] == 0.5


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--qi", "age", "--qi", "nope"], "--qi"),
        (["--sampling-fraction", "0"], "--sampling-fraction"),
        (["--sampling-fraction", "1.5"], "--sampling-fraction"),
        (["--sampling-fraction", "x"], "--sampling-fraction"),
        (["--population-size", "3"], "--population-size"),
        (["--population-size", "10", "--sampling-fraction", "0.5"], "--sampling-fraction"),
        (["--threshold", "0"], "--threshold"),
        (["--suda-max-size", "9"], "--suda-max-size"),
        (["--dis-fraction", "-1"], "--dis-fraction"),
        (["--population", "missing.csv"], "missing.csv"),
        (["--records", "scores.html"], "--records"),
    ],
)
def test_bad_input_exit_2_names_the_flag(
    release: Path, tmp_path: Path, args: list[str], flag: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    qi = [] if args[0] == "--qi" else QI_ARGS
    out = io.StringIO()
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main(["risk", str(release), *qi, *[str(tmp_path / a) if a.endswith((".csv", ".html"))
                                              else a for a in args], "--quiet"], out)  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert flag in err and err.count("\n") == 1
    assert out.getvalue() == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_population_smaller_than_the_sample(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pop = tmp_path / "pop.csv"
    pop.write_text("age,sex,zip\n30,M,100\n", encoding="utf-8")
    code = main(["risk", str(release), *QI_ARGS, "--population", str(pop), "--quiet"],
                io.StringIO())  # fmt: skip
    assert code == 2 and "--population has 1 records, fewer" in capsys.readouterr().err


def test_records_file(release: Path, tmp_path: Path) -> None:
    out = tmp_path / "scores.csv"
    code, text = run("risk", str(release), *QI_ARGS, "--records", str(out), "--format", "json")
    assert code == 0 and out.is_file()
    env = json.loads(text)
    assert env["outputs"]["records"] == str(out)
    lines = out.read_text().splitlines()
    assert lines[0].startswith('"row","suda_score","dis_suda_score"')
    assert len(lines) - 1 == env["details"]["suda"]["records_with_msu"]
    # the file holds row numbers and scores, never a QI value
    for row in lines[1:]:
        assert not any(f'"{v}"' in row for r in ROWS for v in r)


# ------------------------------------------------------------------------- the report
def envelope(release: Path, *extra: str) -> Envelope:
    code, text = run("risk", str(release), *QI_ARGS, "--format", "json", *extra)
    assert code == 0
    return Envelope.from_dict(json.loads(text))


def test_report_section_plots_the_envelope(release: Path) -> None:
    env = envelope(release, "--threshold", "0.4")
    report = build_release_report(release, sensitive="disease", group_columns=QIS, checks=[env])
    assert report.risk is not None
    assert ReleaseReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    html = render_html(report)
    root = parse(html)
    sec = by_id(root, "risk")
    hist = {h["size"]: h for h in env.details["class_sizes"]}
    bars = [r for r in find(sec, "rect") if r.attrs.get("data-series")]
    at_risk = {b.attrs["data-label"]: float(b.attrs["data-value"]) for b in bars
               if b.attrs["data-series"] == "at risk"}  # fmt: skip
    safe = {b.attrs["data-label"]: float(b.attrs["data-value"]) for b in bars
            if b.attrs["data-series"] == "not at risk"}  # fmt: skip
    for size in range(1, max(hist) + 1):
        h = hist.get(size)
        records = h["records"] if h else 0
        risky = records if h and Fraction(1, size) > Fraction(2, 5) else 0
        assert at_risk[str(size)] == risky and safe[str(size)] == records - risky
    text = sec.all_text()
    for m in env.details["measures"]:
        assert m["explanation"] in text
    contrib = env.details["suda"]["attribute_contributions"]
    hbars = {r.attrs["data-label"]: float(r.attrs["data-value"])
             for r in find(sec, "rect") if "data-series" not in r.attrs
             and r.attrs.get("data-label")}  # fmt: skip
    assert hbars == pytest.approx(contrib, abs=1e-9)


def test_report_without_risk_has_no_risk_section(release: Path) -> None:
    report = build_release_report(release, sensitive="disease", group_columns=QIS)
    assert report.risk is None and "risk" not in report.notes
    root = parse(render_html(report))
    assert not [el for el in root.iter() if el.attrs.get("id") == "risk"]


def test_report_risk_section_escapes(release: Path) -> None:
    env = envelope(release)
    d: dict[str, Any] = env.to_dict()
    d["name"] = HOSTILE
    d["summary"] = HOSTILE
    d["details"]["qis"] = [HOSTILE]
    d["details"]["population"]["source"] = HOSTILE
    d["details"]["measures"][0]["label"] = HOSTILE
    d["details"]["measures"][0]["explanation"] = HOSTILE
    d["details"]["measures"][1]["value"] = HOSTILE
    d["details"]["suda"]["attribute_contributions"] = {HOSTILE: 50.0}
    hostile = Envelope.from_dict(d)
    html = render_html(build_release_report(release, sensitive="disease", group_columns=QIS,
                                            checks=[hostile]))  # fmt: skip
    assert "<script>" not in html and "<img" not in html
    sec = by_id(parse(html), "risk")
    assert HOSTILE in sec.all_text()


@pytest.mark.parametrize(
    "junk",
    [
        {"class_sizes": [{"size": "x", "records": None}, 5, {"size": -1, "records": 3}]},
        {"class_sizes": "many", "measures": [1, None, {"value": float("nan")}], "qis": 7},
        {"suda": {"attribute_contributions": {"a": "lots", "b": float("inf")}}, "threshold": "?"},
        {"class_sizes": [{"size": 10**30, "records": 10**30, "groups": 1}]},
    ],
)
def test_report_reads_a_junk_risk_envelope_without_failing(
    release: Path, tmp_path: Path, junk: dict[str, Any]
) -> None:
    env = envelope(release).to_dict()
    env["details"].update(junk)
    path = tmp_path / "risk.json"
    path.write_text(json.dumps(env), encoding="utf-8")
    out = tmp_path / "r.html"
    code, _ = run("report", str(release), "--check", str(path), "--sensitive", "disease",
                  "--group", "age", "--out", str(out))  # fmt: skip
    assert code in (0, 1) and out.is_file()
    parse(out.read_text(encoding="utf-8"))


def test_report_flag_needs_the_manifest(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    code = main(["risk", str(release), *QI_ARGS, "--report", str(out), "--quiet"], io.StringIO())
    assert code == 2 and "--report needs the manifest" in capsys.readouterr().err
    assert not out.exists()


def test_report_flag_with_an_anonymized_release(tmp_path: Path) -> None:
    from airflow_privacy.core.datasets import load_adult

    src = tmp_path / "input.csv"
    import pyarrow.csv as pacsv

    pacsv.write_csv(load_adult().slice(0, 400), src)
    rel = tmp_path / "release.csv"
    code, _ = run("anonymize", str(src), "--qi", "age", "--qi", "sex", "--sensitive",
                  "occupation", "--method", "bucketize", "--criterion", "k-anonymity:k=3",
                  "--out", str(rel))  # fmt: skip
    assert code == 0
    out = tmp_path / "r.html"
    code, _ = run("risk", str(rel), "--qi", "age", "--qi", "sex", "--report", str(out))
    assert code == 0
    assert 'id="risk"' in out.read_text(encoding="utf-8")
