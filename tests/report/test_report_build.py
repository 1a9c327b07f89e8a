"""The release report (issue 9): every section for a full run, the verdict first, valid
self-contained HTML, escaping, the plain-data round trip, and charts that show the engines'
numbers (the curve, the skyline, PVP_C, the MaxEnt heatmap, the group sizes)."""

from __future__ import annotations

import io
import json
import re
import statistics
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.cli import main
from airflow_privacy.core.anonymize import anonymize
from airflow_privacy.core.criteria.skyline import find_skyline
from airflow_privacy.core.criteria.worst_case import disclosure_curve
from airflow_privacy.core.datasets import load_adult
from airflow_privacy.core.io import read_bucketization
from airflow_privacy.core.maxent import BucketRelease, estimate
from airflow_privacy.core.model import ReleaseSpec
from airflow_privacy.core.redaction import redact
from airflow_privacy.errors import InputError
from airflow_privacy.gate.envelope import Envelope
from airflow_privacy.report import ReleaseReport, build_release_report, maxent_heatmap, render_html
from airflow_privacy.report.checks import rows_of
from airflow_privacy.report.maxent import rank_label
from airflow_privacy.report.values import size_bins
from tests.report_html_checker import Element, by_id, find, parse

QIS = ["age", "marital-status", "race", "sex"]
SENS = "occupation"
SECTIONS = ("verdict", "release", "criteria", "curve", "skyline", "composition", "maxent",
            "utility")  # fmt: skip
HOSTILE = '<script>alert("x")</script>&amp;"\'<img src=x onerror=alert(1)>'


def _release(table: pa.Table, path: Path, seed: int) -> Path:
    r = anonymize(table, QIS, SENS, "bucketize", [("k-anonymity", {"k": 4}),
                  ("ck-safety", {"c": 0.8, "k": 2})], seed=seed)  # fmt: skip
    pq.write_table(r.release, path)
    Path(f"{path}.manifest.json").write_text(json.dumps(r.manifest.to_dict()))
    return path


def _cli(*argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = main([*argv, "--format", "json", "--quiet"], out)
    assert code in (0, 1), code
    return code, json.loads(out.getvalue())


def _env(name: str, data: dict[str, Any]) -> Envelope:
    """A command's ``--format json`` output read back as the envelope of check ``name``."""
    return replace(Envelope.from_dict(data), name=name)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real run on 2,000 Adult records: a bucketized release, an earlier overlapping one,
    and the report envelopes of check (three criteria), maxent and audit, by name."""
    d = tmp_path_factory.mktemp("report")
    adult = load_adult()
    original = adult.slice(0, 2000)
    pq.write_table(original, d / "input.parquet")
    release = _release(original, d / "release.parquet", 0)
    _release(adult.slice(1000, 2000), d / "prior.parquet", 1)
    rel = str(release)
    base = [rel, "--sensitive", SENS, "--group", "bucket"]
    checks = {
        "ck": _cli("check", *base, "--criterion", "ck-safety", "--c", "0.7", "--k", "2")[1],
        "sky": _cli("check", *base, "--criterion", "skyline", "--point", "1,1,1,0.9")[1],
        "kanon": _cli("check", *base, "--criterion", "k-anonymity", "--k", "4")[1],
        "maxent": _cli("maxent", rel, "--sensitive", SENS, "--bucket", "bucket",
                       *[a for q in QIS for a in ("--qi", q)], "--c", "0.95")[1],
        "audit": _cli("audit", rel, "--population", str(d / "input.parquet"), "--prior",
                      str(d / "prior.parquet"), "--no-ledger", "--top", "5")[1],
    }  # fmt: skip
    envelopes = {name: _env(name, data) for name, data in checks.items()}
    return {"dir": d, "release": release, "checks": envelopes}


@pytest.fixture(scope="module")
def full(run: dict[str, Any]) -> tuple[ReleaseReport, str, Element]:
    report = build_release_report(
        run["release"], dataset="adult", version="2", release_id=7, status="published",
        checks=list(run["checks"].values()),
    )  # fmt: skip
    html = render_html(report)
    return report, html, parse(html)


def _section(root: Element, sid: str) -> Element:
    sec = by_id(root, sid)
    assert sec.tag == "section"
    return sec


def _points(svg: Element) -> Iterator[tuple[str, int, float, float]]:
    for el in svg.iter():
        if el.attrs.get("class") == "point":
            y = el.attrs.get("cy")
            if y is None and "y" in el.attrs:  # square markers: the rect's centre
                y = str(float(el.attrs["y"]) + float(el.attrs["height"]) / 2)
            if y is None:  # other shapes (polygons): not compared
                y = "nan"
            yield (el.attrs["data-series"], int(el.attrs["data-x"]),
                   float(el.attrs["data-value"]), float(y))  # fmt: skip


# ------------------------------------------------------------------ whole report
def test_every_section_present_for_a_full_run(full: tuple[ReleaseReport, str, Element]) -> None:
    report, _, root = full
    main_el = find(root, "main")[0]
    h2 = [e.attrs.get("id") for e in main_el.iter() if e.tag == "h2"]
    assert h2 == [f"{s}-h" for s in SECTIONS] + ["reading-h"]
    for sid in ("curve", "skyline", "composition", "maxent", "utility"):
        sec = _section(root, sid)
        assert find(sec, "svg"), sid
        assert find(sec, "table"), sid
        assert "not run" not in sec.all_text(), sid
    assert find(_section(root, "maxent"), "svg", id="maxent-heatmap")
    assert report.composition is not None and report.composition.worst
    assert report.maxent is not None and report.maxent.heatmap is not None
    assert report.notes == {}
    crits = {(r.source, r.criterion) for r in report.criteria}
    assert {("ck", "ck-safety"), ("sky", "skyline"), ("kanon", "k-anonymity"),
            ("maxent", "maxent"), ("audit", "composition"),
            ("anonymizer (manifest)", "ck-safety")} <= crits  # fmt: skip


def test_every_chart_has_an_adjacent_table(full: tuple[ReleaseReport, str, Element]) -> None:
    _, _, root = full
    for sec in find(root, "section"):
        kids = sec.iter()
        for i, el in enumerate(kids):
            if el.tag == "svg":
                after = kids[i + 1 :]
                assert any(e.tag == "table" for e in after), sec.attrs["id"]
    for table in find(root, "table"):
        assert find(table, "th") and find(table, "caption")


def test_sections_without_input_say_not_run(run: dict[str, Any]) -> None:
    report = build_release_report(run["release"], checks=[run["checks"]["ck"]])
    root = parse(render_html(report))
    assert report.composition is None and report.maxent is None
    for sid in ("composition", "maxent"):
        text = _section(root, sid).all_text()
        assert "not run" in text
    assert "not run" not in _section(root, "curve").all_text()


def test_the_html_is_self_contained(full: tuple[ReleaseReport, str, Element]) -> None:
    _, html, _ = full
    low = html.lower()
    assert "<script" not in low and "<link" not in low and "<img" not in low
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", low)
    assert "@import" not in low and "@font-face" not in low
    # the only URI is the SVG namespace, an identifier that is never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == {"http://www.w3.org/2000/svg"}


# ------------------------------------------------------------------------- verdict
def test_a_blocked_release_leads_with_its_reason(run: dict[str, Any]) -> None:
    reason = "composition: 3 people pinned <b>down</b> & exposed"
    report = build_release_report(
        run["release"], status="blocked", reasons=[reason, "maxent: second"],
        checks=list(run["checks"].values()),
    )  # fmt: skip
    root = parse(render_html(report))
    body = find(root, "body")[0]
    flow = [e for e in body.iter() if e.tag in ("h1", "h2", "p")]
    assert flow[0].tag == "h1"
    assert flow[1].tag == "h2" and flow[1].all_text() == "Verdict: BLOCKED"
    assert flow[2].tag == "p" and reason in flow[2].all_text()  # escaped, read back as text
    assert "nothing was published" in flow[2].all_text()
    assert report.verdict.reasons[0] == reason
    assert "BLOCKED" in find(root, "title")[0].all_text()


def _failing(env: Envelope, name: str, reason: str | None = None) -> Envelope:
    """``env`` as a failed check named ``name`` (its first result failed, with ``reason``)."""
    first = {**env.results[0], "safe": False}
    if reason is not None:
        first["reason"] = reason
    return replace(env, name=name, safe=False, outcome="failed", results=[first])


def test_a_blocked_release_without_reasons_gives_the_failed_checks(run: dict[str, Any]) -> None:
    failing = _failing(run["checks"]["ck"], "gate", "disclosure 0.9 reaches c")
    report = build_release_report(run["release"], status="blocked", checks=[failing])
    assert report.verdict.reasons == ["gate: ck-safety: disclosure 0.9 reaches c"]
    assert report.verdict.checks_failed == 1


def test_checked_verdict_counts_failures(run: dict[str, Any]) -> None:
    failing = _failing(run["checks"]["ck"], "a")
    sky = replace(run["checks"]["sky"], name="b")
    report = build_release_report(run["release"], checks=[failing, sky])
    assert report.verdict.status == "checked"
    assert report.verdict.headline.startswith("CHECKED (not a publication decision): 1 of")
    assert report.verdict.checks_failed == 1


# ------------------------------------------------------------------ numbers in charts
def test_the_curve_is_the_engines_curve(
    run: dict[str, Any], full: tuple[ReleaseReport, str, Element]
) -> None:
    report, _, root = full
    b = read_bucketization(run["release"], ReleaseSpec(SENS, ("bucket",)))
    k_max = min(len(b.values) - 1, 10)
    engine = disclosure_curve(b, k_max)
    assert report.curve is not None and report.curve.k_max == k_max
    assert report.curve.c == 0.8  # the anonymizer's ck-safety c, from the manifest
    svg = by_id(root, "curve-chart")
    pts = list(_points(svg))
    assert len(pts) == 2 * (k_max + 1)
    top, ph = 20, 320 - 20 - 52  # svg.TOP, HEIGHT - TOP - BOTTOM
    for series, k, value, y in pts:
        p = engine[k]
        want = (p.implications if series == "implications" else p.negations).max_disclosure
        assert value == want
        assert y == pytest.approx(top + (1 - want) * ph, abs=0.01)
    assert float(find(svg, "line", **{"class": "threshold"})[0].attrs["data-value"]) == 0.8


def test_the_skyline_is_skylinefind(
    run: dict[str, Any], full: tuple[ReleaseReport, str, Element]
) -> None:
    report, _, root = full
    b = read_bucketization(run["release"], ReleaseSpec(SENS, ("bucket",)))
    sky = report.skyline
    assert sky is not None and sky.c == 0.9  # the checked skyline point's c
    engine = find_skyline(b, 0.9, *sky.bounds)
    assert sky.staircase == [list(r) for r in engine.staircase]
    assert sky.points == [list(p) for p in engine.points]
    drawn = {(s, k): v for s, k, v, _ in _points(by_id(root, "skyline-chart"))}
    for li, row in enumerate(engine.staircase):
        for k, m in enumerate(row):
            assert drawn.get((f"l = {li}", k)) == (m if m >= 0 else None)


def test_pvp_bars_are_the_audits(
    run: dict[str, Any], full: tuple[ReleaseReport, str, Element]
) -> None:
    _, _, root = full
    audit = run["checks"]["audit"].details
    bars = [e for e in by_id(root, "pvp-chart").iter() if e.attrs.get("class") == "bar"]
    ganta = [float(e.attrs["data-value"]) for e in bars if e.attrs["data-series"].startswith("C")]
    post = [float(e.attrs["data-value"]) for e in bars if e.attrs["data-series"] == "posterior"]
    assert ganta == [r["pvp"] for r in audit["pvp"]]
    assert post == [r["posterior_pvp"] for r in audit["pvp"]]


def test_the_heatmap_is_the_maxent_posterior(
    run: dict[str, Any], full: tuple[ReleaseReport, str, Element]
) -> None:
    """Without knowledge the report recomputes P*(s | q); it must equal the engine's, each
    row sorted from the most likely value down, the columns named by rank, never by value."""
    report, _, root = full
    table = pq.read_table(run["release"])
    result = estimate(BucketRelease.from_arrow(table, QIS, SENS, "bucket"))
    rel = result.release
    hm = report.maxent.heatmap if report.maxent else None
    assert hm is not None and hm.values == [rank_label(j) for j in range(len(hm.values))]
    assert hm.values[:3] == ["1st", "2nd", "3rd"]
    assert len(hm.values) == min(len(rel.values), 24)
    labels = [rel.describe_qi(q) for q in range(len(rel.qi_values))]
    for row in hm.rows:
        q = labels.index(row.label)
        assert row.records == int(rel.qi_counts[q])
        ranked = sorted(result.posterior[q].tolist(), reverse=True)[: len(hm.values)]
        assert row.posterior == pytest.approx(ranked, abs=1e-9)
    maxent_html = _section(root, "maxent").all_text()
    for value in rel.values:  # which value a QI value is likely to hold is not shown
        assert f"{value}" not in maxent_html, value
    best = [max(r.posterior) for r in hm.rows]
    assert best == sorted(best, reverse=True)
    assert best[0] == pytest.approx(result.max_posterior, abs=1e-9)
    cells = [e for e in by_id(root, "maxent-heatmap").iter() if e.attrs.get("class") == "cell"]
    assert len(cells) == len(hm.rows) * len(hm.values)
    for c in cells:
        i, j = int(c.attrs["data-row"]), int(c.attrs["data-col"])
        assert float(c.attrs["data-value"]) == hm.rows[i].posterior[j]


def test_a_given_heatmap_is_used_and_an_operator_report_without_one_says_so(
    run: dict[str, Any],
) -> None:
    table = pq.read_table(run["release"])
    result = estimate(BucketRelease.from_arrow(table, QIS, SENS, "bucket"))
    env: Envelope = run["checks"]["maxent"]
    with_rows = replace(
        env, name="m", details={**env.details, "heatmap": maxent_heatmap(result, 3)}
    )
    rep = build_release_report(run["release"], checks=[with_rows])
    assert rep.maxent is not None and rep.maxent.heatmap is not None
    assert len(rep.maxent.heatmap.rows) == 3
    # an estimate recorded without its heatmap rows (e.g. trimmed for an XCom) says so
    without = replace(
        env, name="m", details={k: v for k, v in env.details.items() if k != "heatmap"}
    )
    rep = build_release_report(run["release"], checks=[without])
    assert rep.maxent is not None and rep.maxent.heatmap is None
    assert rep.maxent.heatmap_note == "the estimate carries no P*(s | q) rows to draw"
    assert rep.maxent.max_posterior == env.details["max_posterior"]
    text = _section(parse(render_html(rep)), "maxent").all_text()
    assert "the estimate carries no P*(s | q) rows to draw" in text


def test_group_sizes_are_the_releases(
    run: dict[str, Any], full: tuple[ReleaseReport, str, Element]
) -> None:
    report, _, root = full
    b = read_bucketization(run["release"], ReleaseSpec(SENS, ("bucket",)))
    u = report.utility
    sizes = b.sizes.tolist()
    assert (u.min_size, u.max_size) == (min(sizes), max(sizes))
    assert u.median_size == statistics.median(sizes)
    assert sum(x.groups for x in u.histogram) == b.n_groups
    assert sum(x.records for x in u.histogram) == b.n_records
    for x in u.histogram:
        assert x.groups == sum(x.low <= s <= x.high for s in sizes)
    bars = [e for e in by_id(root, "sizes-chart").iter() if e.attrs.get("class") == "bar"]
    assert [float(e.attrs["data-value"]) for e in bars] == [x.groups for x in u.histogram]
    assert {m.name for m in u.metrics} >= {"reconstruction-error", "average-class-size"}


def test_size_bins_cover_every_size_once() -> None:
    for top in (1, 7, 10, 11, 20, 21, 99, 100, 101, 12345):
        bins = size_bins(top)
        covered = [s for lo, hi in bins for s in range(lo, hi + 1)]
        assert covered[:top] == list(range(1, top + 1))
        assert bins[-1][0] <= top <= bins[-1][1]


# ----------------------------------------------------------- privacy and escaping
def test_no_individual_value_in_the_report(
    run: dict[str, Any], full: tuple[ReleaseReport, str, Element]
) -> None:
    report, html, _ = full
    audit: Envelope = run["checks"]["audit"]
    worst = audit.details["worst"]
    assert worst, "the fixture must breach someone"
    # the envelope itself names the worst people by row only
    assert all("qis" not in w and "intersection" not in w for w in worst)
    assert "most_likely" not in json.dumps(audit.to_dict())
    stored = json.dumps(report.to_dict())
    comp = json.dumps(report.to_dict()["composition"])
    assert '"qis"' not in comp and '"intersection"' not in comp and '"values"' not in comp
    assert "most_likely" not in stored
    assert "left after intersecting" not in stored and "left after intersecting" not in html
    assert report.composition is not None
    assert [w.id for w in report.composition.worst] == [f"row {w['row']}" for w in worst]
    population = pq.read_table(run["dir"] / "input.parquet").to_pylist()
    for w in worst:
        person = population[w["row"]]
        qi_text = ", ".join(f"{q}={person[q]}" for q in QIS)
        assert qi_text not in stored and qi_text not in html


def test_redact_keeps_releases_and_drops_values() -> None:
    text = ("PVP = 1%. Worst: row 12: {'HIV', 'a}b'} left after intersecting A group x=1 "
            "(3 values) with B group y=2 (2 values).")  # fmt: skip
    out = redact(text)
    assert "HIV" not in out and "a}b" not in out
    assert out.endswith("row 12 pinned down after intersecting A group x=1 (3 values) with B "
                        "group y=2 (2 values).")  # fmt: skip


def test_named_people_of_maxent_are_not_shown(run: dict[str, Any], tmp_path: Path) -> None:
    """A knowledge file naming a person pins her value: the envelope and the report count
    her and give her largest posterior, never her name or her value."""
    table = pq.read_table(run["release"]).to_pylist()
    alice = table[0]
    bucket = [r[SENS] for r in table if r["bucket"] == alice["bucket"]]
    value = sorted(set(bucket))[0]
    people = ", ".join(f"{q}: {json.dumps(alice[q])}" for q in QIS)
    knowledge = tmp_path / "k.yaml"
    knowledge.write_text(
        f"people:\n  Alice: {{{people}}}\nknowledge:\n"
        f"  - person: Alice\n    value: {json.dumps(value)}\n    probability: 1\n"
    )
    code, data = _cli("maxent", str(run["release"]), "--sensitive", SENS, "--bucket", "bucket",
                      *[a for q in QIS for a in ("--qi", q)], "--knowledge", str(knowledge),
                      "--c", "0.9")  # fmt: skip
    assert code == 1 and data["safe"] is False
    assert data["details"]["max_posterior"] == pytest.approx(1.0, abs=1e-9)
    assert "Alice" not in json.dumps(data)
    env = _env("m", data)
    rep = build_release_report(
        run["release"], status="blocked", checks=[env], reasons=list(env.reasons)
    )
    html = render_html(rep)
    stored = json.dumps(rep.to_dict())
    for text in (html, stored):
        assert "Alice" not in text
        assert f"has {value!r}" not in text
    assert rep.maxent is not None and rep.maxent.people == 1
    assert rep.maxent.people_max_posterior == pytest.approx(1.0, abs=1e-9)
    assert (
        "1 named people in the knowledge (not listed)" in _section(parse(html), "maxent").all_text()
    )


def _hostile_release(tmp_path: Path) -> Path:
    rows = ["g,s"] + [f'"{HOSTILE}",v{i % 3}' for i in range(6)] + [f"b,{HOSTILE}"] * 2
    rows += ["b,v1"] * 2
    path = tmp_path / "hostile.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_hostile_strings_are_escaped(tmp_path: Path) -> None:
    path = _hostile_release(tmp_path)
    checks = [
        Envelope(step="validate", name=HOSTILE, outcome="failed", safe=False, summary=HOSTILE,
                 reasons=[HOSTILE])
    ]  # fmt: skip
    report = build_release_report(
        path, sensitive="s", group_columns=["g"], dataset=HOSTILE, version=HOSTILE,
        status="blocked", reasons=[HOSTILE], checks=checks,
    )  # fmt: skip
    html = render_html(report)
    root = parse(html)  # no element came from data
    assert "<script" not in html and "<img" not in html
    assert HOSTILE in by_id(root, "verdict").all_text()
    assert HOSTILE in find(root, "h1")[0].all_text()
    # a hostile sensitive value reaches the charts' text only as text
    assert any(HOSTILE in e.all_text() for e in find(root, "td") + find(root, "p"))


# ---------------------------------------------------------------- plain-data round trip
def test_round_trip_through_json(full: tuple[ReleaseReport, str, Element]) -> None:
    report, html, _ = full
    d = report.to_dict()
    text = json.dumps(d, allow_nan=False)
    again = ReleaseReport.from_dict(json.loads(text))
    assert again == report
    assert again.to_dict() == d
    assert render_html(again) == html


@st.composite
def _counts(draw: st.DrawFn) -> list[list[int]]:
    groups = draw(st.integers(1, 5))
    values = draw(st.integers(1, 4))
    rows = draw(
        st.lists(
            st.lists(st.integers(0, 4), min_size=values, max_size=values),
            min_size=groups,
            max_size=groups,
        )
    )
    return [r if sum(r) else [1, *r[1:]] for r in rows]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(counts=_counts(), status=st.sampled_from(["published", "blocked", "candidate", "checked"]),
       label=st.text(max_size=12))  # fmt: skip
def test_random_releases_round_trip_and_render(
    tmp_path: Path, counts: list[list[int]], status: str, label: str
) -> None:
    """Any small release: the report round-trips exactly, renders to valid HTML, and its
    curve is the engine's."""
    groups, values = [], []
    for g, row in enumerate(counts):
        for v, cnt in enumerate(row):
            groups += [f"{label}g{g}"] * cnt
            values += [f"{label}v{v}"] * cnt
    path = tmp_path / "r.csv"
    pacsv.write_csv(pa.table({"grp": groups, "sens": values}), path)
    report = build_release_report(
        path, sensitive="sens", group_columns=["grp"], status=status, dataset=label,
        reasons=[label] if label.strip() else (),
    )  # fmt: skip
    assert ReleaseReport.from_dict(json.loads(json.dumps(report.to_dict()))) == report
    root = parse(render_html(report))
    b = read_bucketization(path, ReleaseSpec("sens", ("grp",)))
    engine = disclosure_curve(b, report.curve.k_max if report.curve else 0)
    assert report.curve is not None
    assert [(p.implications, p.negations) for p in report.curve.points] == [
        (p.implications.max_disclosure, p.negations.max_disclosure) for p in engine
    ]
    assert report.utility.groups == b.n_groups and report.facts.records == b.n_records
    flow = [e for e in find(root, "body")[0].iter() if e.tag in ("h1", "h2")]
    assert flow[1].attrs.get("id") == "verdict-h"
    assert np.isfinite([p.implications for p in report.curve.points]).all()


# ------------------------------------------------------------------------- inputs
def test_sections_are_chosen_by_step(run: dict[str, Any]) -> None:
    """Each envelope goes where its ``step`` says: criteria rows from a check's results, the
    composition section from ``audit``, the MaxEnt section from ``maxent``, a pass / fail
    row from a step without results (Great Expectations), nothing from the anonymizer."""
    c = run["checks"]
    assert [(r.source, r.criterion) for r in rows_of(c["ck"])] == [("ck", "ck-safety")]
    assert [(r.source, r.criterion) for r in rows_of(c["maxent"])] == [("maxent", "maxent")]
    assert [(r.source, r.criterion) for r in rows_of(c["audit"])] == [("audit", "composition")]
    gx = Envelope(step="validate", name="validate_release", outcome="passed", safe=True,
                  summary="3 expectations hold")  # fmt: skip
    (row,) = rows_of(gx)
    assert (row.source, row.criterion, row.passed, row.measure) == (
        "validate_release", "validate_release", True, "pass / fail"
    )  # fmt: skip
    anon = Envelope(step="anonymize", name="anonymize", outcome="written", safe=True,
                    summary="written", results=list(c["ck"].results))  # fmt: skip
    assert rows_of(anon) == []
    # an audit's numbers in a check that is not an audit are not read as a composition audit
    renamed = replace(c["ck"], details={**c["ck"].details, **c["audit"].details})
    rep = build_release_report(run["release"], checks=[renamed])
    assert rep.composition is None and "composition" in rep.notes


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"safe": "false"}, "safe must be true, false or null, got 'false'"),
        ({"safe": 0}, "safe must be true, false or null, got 0"),
        ({"step": "guess"}, "unknown step 'guess'"),
        ({"schema": 2}, "envelope schema 2 is not 1"),
    ],
)
def test_envelopes_are_read_strictly(
    run: dict[str, Any], change: dict[str, Any], message: str
) -> None:
    """A verdict that is not a boolean (or null) never reads as "passed"."""
    data = {**run["checks"]["ck"].to_dict(), **change}
    with pytest.raises(InputError, match=re.escape(message)):
        Envelope.from_dict(data, "check file")
    old = {"criterion": "ck-safety", "safe": True, "value": 0.5}  # the old top-level shape
    with pytest.raises(InputError, match="not a report envelope of this version"):
        Envelope.from_dict(old, "check file")
    no_verdict = {k: v for k, v in run["checks"]["ck"].to_dict().items() if k != "safe"}
    with pytest.raises(InputError, match="missing safe"):
        Envelope.from_dict(no_verdict, "check file")


def test_operator_envelopes_are_read(run: dict[str, Any], tmp_path: Path) -> None:
    """The envelopes the operators record (the same shape as the commands' JSON, under the
    task's name): CheckSafetyOperator, CompositionAuditOperator, a Great Expectations task
    and an anonymizer."""
    ck: Envelope = run["checks"]["ck"]
    audit: Envelope = run["checks"]["audit"]
    gx = Envelope(step="validate", name="validate_release", outcome="passed", safe=True,
                  summary="3 expectations hold", details={"expectations": 3})  # fmt: skip
    anon = Envelope(step="anonymize", name="anonymize", outcome="written", safe=True,
                    summary="bucketize: written",
                    outputs={"release": "r", "manifest": "m"})  # fmt: skip
    checks = [replace(ck, name="check_safety"), replace(audit, name="composition_audit"), gx, anon]
    rep = build_release_report(run["release"], status="blocked", checks=checks)
    comp = rep.composition
    assert comp is not None and comp.passed is False and comp.source == "composition_audit"
    assert [w.id for w in comp.worst] == [f"row {w['row']}" for w in audit.details["worst"]]
    assert comp.worst[0].id == f"row {audit.results[0]['witness']['row']}"
    assert [r.pvp for r in comp.pvp] == [r["pvp"] for r in audit.details["pvp"]]
    assert comp.overlap_size == audit.details["overlap_size"]
    sources = [(r.source, r.criterion) for r in rep.criteria]
    assert ("check_safety", "ck-safety") in sources
    assert ("composition_audit", "composition") in sources
    assert ("validate_release", "validate_release") in sources
    assert not any(s == "anonymize" for s, _ in sources)
    parse(render_html(rep))
    # a declared first release: the audit had nothing to intersect with, and says so
    code, data = _cli("audit", str(run["release"]), "--population",
                      str(run["dir"] / "input.parquet"), "--ledger", str(tmp_path / "none.db"),
                      "--first-release")  # fmt: skip
    assert code == 0 and data["details"]["first_release"] is True
    assert not (tmp_path / "none.db").exists()
    rep = build_release_report(run["release"], checks=[_env("audit", data)])
    assert rep.composition is not None and rep.composition.passed is True
    assert "declared first release" in rep.composition.note
    parse(render_html(rep))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"status": "approved"}, "status must be one of"),
        ({"c": 1.5}, "c must be in"),
        ({"skyline_c": 0.0}, "--skyline-c must be in"),
        ({"k_max": -1}, "--k-max must be"),
        ({"sensitive": "nope"}, "sensitive column 'nope' does not exist"),
        ({"group_columns": ["nope"]}, "group column 'nope' does not exist"),
    ],
)
def test_bad_input_names_the_parameter(
    run: dict[str, Any], kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        build_release_report(run["release"], **kwargs)


def test_parameter_names_follow_the_front_end(run: dict[str, Any]) -> None:
    """The same message names the option on the command line and the argument in Airflow."""
    from airflow_privacy.errors import speaking

    with speaking("airflow"):
        with pytest.raises(InputError) as info:
            build_release_report(run["release"], k_max=-1)
        assert str(info.value) == "k_max must be a whole number in [0, 1000], got -1"
    with pytest.raises(InputError) as info:
        build_release_report(run["release"], skyline_c=2)
    assert str(info.value) == "--skyline-c must be in (0, 1], got 2"


def test_without_a_manifest_the_columns_must_be_named(tmp_path: Path) -> None:
    path = _hostile_release(tmp_path)
    with pytest.raises(InputError, match="sensitive"):
        build_release_report(path)
    with pytest.raises(InputError, match="group"):
        build_release_report(path, sensitive="s")
    with pytest.raises(InputError, match="does not exist"):
        build_release_report(tmp_path / "missing.csv", sensitive="s", group_columns=["g"])


def test_explicit_k_max_and_confidences(run: dict[str, Any]) -> None:
    rep = build_release_report(run["release"], k_max=3, c=0.5, skyline_c=0.6)
    assert rep.curve is not None and [p.k for p in rep.curve.points] == [0, 1, 2, 3]
    assert rep.curve.c == 0.5
    assert rep.skyline is not None and rep.skyline.c == 0.6


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("group 'zip=130**, age=<30' has 'HIV' at 100.0% of its 3 records vs 10.0% in the whole",
         "group 'zip=130**, age=<30' has a sensitive value at 100.0% of its 3 records vs 10.0%"),
        ("group 'g=1' has entropy log(1) < log(2) in 'disease' ('HIV' is 100% of its 3 records)",
         "group 'g=1' has entropy log(1) < log(2) in 'disease' (its most frequent value is 100%"),
        ("group 'g=1' has 'HIV' 6 times but only 1 record", "group 'g=1' has a sensitive value 6"),
        ("knows that (1) the target does not have 'Flu'; (2) if person #2 of group 'g=2' has "
         "'Cold', then the target has 'HIV' concludes that a person in group 'g=1' has 'HIV' "
         "with probability 1",
         "the target does not have a sensitive value; (2) if person #2 of group 'g=2' has a "
         "sensitive value, then the target has a sensitive value concludes that a person in "
         "group 'g=1' has a sensitive value with probability 1"),
        ("knows (1) the target does not have 'Flu' or 'Cold'; (2) the values of 2 other people "
         "in the target's group ('Gout', 'Asthma'); (3) the value of a person in group 'g=2' "
         "('Mumps') concludes",
         "does not have a sensitive value; (2) the values of 2 other people in the target's "
         "group; (3) the value of a person in group 'g=2' concludes"),
        ("maxent: the maximum-entropy estimate says a person with sex=F has 'HIV' with "
         "probability 1.0000", "sex=F has a sensitive value with probability 1.0000"),
    ],
)  # fmt: skip
def test_redact_drops_the_values_old_reasons_quoted(old: str, new: str) -> None:
    """Envelopes recorded before witnesses stopped naming a group's value are shown without
    the values (report/checks.py): the report is stored in the ledger and shown in the UI."""
    out = redact(old)
    assert new in out, out
    for value in ("HIV", "Flu", "Cold", "Gout", "Asthma", "Mumps"):
        assert value not in out


def test_bar_chart_slants_labels_wider_than_their_slot() -> None:
    """Many long labels (the risk section's group-size bins) are slanted and the chart grows
    to hold them; a few short ones stay level."""
    from airflow_privacy.report import svg

    long_labels = [f"{10**i}-{2 * 10**i}" for i in range(20)]
    series = [svg.Series("records", [1.0] * 20)]
    slanted = svg.bar_chart("c", "t", "d", long_labels, series, x_label="x", y_label="y")
    assert slanted.count('transform="rotate(-45') == 20
    assert f'height="{svg.HEIGHT + 44}"' in slanted
    level = svg.bar_chart("c", "t", "d", ["1", "2", "3"], [svg.Series("r", [1.0, 2.0, 3.0])],
                          x_label="x", y_label="y")  # fmt: skip
    assert "rotate(-45" not in level and f'height="{svg.HEIGHT}"' in level
