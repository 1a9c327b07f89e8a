"""The plugin's ledger pages (server-rendered HTML) and JSON API, on a seeded ledger; and
Airflow's authentication of the plugin app inside the real API server app."""

from __future__ import annotations

import html
import json
import logging
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from airflow_privacy.core.composition import PublishedRelease
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow import plugin as plugin_module
from airflow_privacy.providers.airflow import ui_app, ui_ledger, ui_pages
from airflow_privacy.providers.airflow.dashboard import DASHBOARD_APP
from airflow_privacy.providers.airflow.plugin import (
    AUTH_ENV,
    EXTERNAL_VIEW,
    AirflowPrivacyPlugin,
    auth_mode,
    create_app,
)
from tests.airflow.metadata_db import migrated_home
from tests.airflow.ui_seed import EVIL, STEWARD, SUPERSEDE_REASON, Seeded, seed_ledger
from tests.ledger.support import DIGEST, gate_rules

ROOT = Path(__file__).resolve().parents[2]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "path", "rect", "circle", "line", "polyline", "polygon", "ellipse",
        "use", "stop"}  # fmt: skip


class _Tags(HTMLParser):
    """Checks that every element is closed in order (no broken tags) and collects facts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID and (not self.stack or self.stack[-1] != tag):
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(doc: str) -> _Tags:
    p = _Tags()
    p.feed(doc)
    p.close()
    assert not p.errors, p.errors[:5]
    assert p.stack == [], f"unclosed: {p.stack}"
    return p


def assert_plain_page(doc: str) -> _Tags:
    """Valid nesting, a language, a heading, no scripts, nothing loaded from elsewhere."""
    p = parse(doc)
    assert doc.lstrip().lower().startswith("<!doctype html>")
    assert any(t == "html" and a.get("lang") for t, a in p.tags)
    assert any(t == "h1" for t, _ in p.tags)
    # one script: the app's own theme script, by its path, with nothing inline
    scripts = [a for t, a in p.tags if t == "script"]
    assert len(scripts) <= 1 and all((a.get("src") or "").endswith("/theme.js") for a in scripts), (
        "no scripts but the theme's (ledger strings are escaped)"
    )
    assert all(not body.strip() for body in re.findall(r"<script[^>]*>(.*?)</script>", doc, re.S))
    assert not any(t == "img" for t, _ in p.tags), "no images (ledger strings are escaped)"
    for tag, attrs in p.tags:
        for name in ("src", "href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"^\s*(https?:)?//", value), f"external {tag} {name}={value}"
            assert not value.lower().startswith("javascript:")
        assert not any(a.startswith("on") for a in attrs), f"event handler on {tag}"
        assert tag not in ("iframe", "object", "embed")
        if tag == "link":
            assert attrs.get("rel") != "stylesheet"
    assert "@import" not in doc
    return p


def esc(text: str) -> str:
    return html.escape(text, quote=True)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    return seed_ledger(tmp_path_factory.mktemp("ui-ledger"))


@pytest.fixture(scope="module")
def client(seeded: Seeded) -> TestClient:
    return TestClient(create_app(auth=False, location=lambda: seeded.url))


def _rows(doc: str) -> list[int]:
    return [int(x) for x in re.findall(r'<tr data-release-id="(\d+)"', doc)]


# ------------------------------------------------------------------------------ the list
def test_list_shows_every_release_escaped_with_status_in_words(
    client: TestClient, seeded: Seeded
) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    p = assert_plain_page(r.text)
    assert _rows(r.text) == seeded.all
    text = " ".join(p.text)
    for words in ("✓ PUBLISHED", "✗ BLOCKED", "… CANDIDATE", "↷ SUPERSEDED", "2,000 records",
                  "1,500 records", "1,000 records"):  # fmt: skip
        assert words in text, words
    assert EVIL not in r.text and esc(EVIL) in r.text  # names and reasons escaped
    assert esc(seeded.blocked_reason)[:80] in r.text  # the latest attempt's reason
    # the superseded release says who set it aside and why (escaped)
    assert f"superseded by {STEWARD}" in text and SUPERSEDE_REASON in text
    headers = [a for t, a in p.tags if t == "th"]
    assert len(headers) >= 8 and any(a.get("scope") == "col" for a in headers)
    assert any(t == "caption" for t, _ in p.tags)
    # every link to a release uses its UUID, never its id
    for rid in seeded.all:
        assert f'href="/releases/{seeded.uuid(rid)}"' in r.text
        assert f'href="/releases/{rid}"' not in r.text
    assert re.findall(r'data-release-uuid="([0-9a-f-]{36})"', r.text) == [
        seeded.uuid(i) for i in seeded.all
    ]


def test_filters_by_dataset_and_status(client: TestClient, seeded: Seeded) -> None:
    blocked = client.get("/", params={"status": "blocked"})
    assert _rows(blocked.text) == [seeded.blocked]
    assert "1 release(s) with status blocked" in blocked.text
    superseded = client.get("/", params={"status": "superseded"})
    assert _rows(superseded.text) == [seeded.superseded]
    assert '<option value="superseded" selected>' in superseded.text
    adult = client.get("/", params={"dataset": "adult", "status": ""})
    assert _rows(adult.text) == [seeded.published, seeded.candidate, seeded.superseded]
    both = client.get("/", params={"dataset": "adult", "status": "published"})
    assert _rows(both.text) == [seeded.published]
    assert '<option value="adult" selected>' in both.text  # the form keeps the filter
    none = client.get("/", params={"dataset": "nobody", "status": "blocked"})
    assert _rows(none.text) == [] and "No releases match these filters." in none.text
    assert_plain_page(none.text)
    bad = client.get("/", params={"status": "<b>x</b>"})
    assert bad.status_code == 400 and "<b>x</b>" not in bad.text
    assert_plain_page(bad.text)


# ------------------------------------------------------------------------- release pages
def test_release_page_shows_the_stored_report_with_a_way_back(
    client: TestClient, seeded: Seeded
) -> None:
    uuid = seeded.uuid(seeded.blocked)
    r = client.get(f"/releases/{uuid}")
    assert r.status_code == 200
    p = parse(r.text)
    assert 'href="/"' in r.text and "All releases" in r.text
    assert f'href="/api/releases/{uuid}/report"' in r.text  # the JSON, by UUID
    assert f'href="/releases/{uuid}?view=ledger"' in r.text  # the attempts, by UUID
    assert any(t == "svg" for t, _ in p.tags), "plots are inline SVG"
    assert [a.get("src") for t, a in p.tags if t == "script"] == ["/theme.js"]  # the only one
    assert EVIL not in r.text
    body = r.text.split("<body", 1)[1]
    # the verdict first: the blocked status and its first reason come before any plot
    first_svg = body.find("<svg")
    assert 0 < body.find("BLOCKED") < first_svg or 0 < body.find("blocked") < first_svg
    assert 0 < body.find(esc(seeded.blocked_reason)[:60]) < first_svg
    published = client.get(f"/releases/{seeded.uuid(seeded.published)}")
    assert published.status_code == 200 and "<svg" in published.text
    # an integer id is still accepted (old links), and shows the same report
    by_id = client.get(f"/releases/{seeded.blocked}")
    assert by_id.status_code == 200 and esc(seeded.blocked_reason)[:60] in by_id.text
    # the ledger's view of a release with a report: its attempts, and a link to the report
    ledger = client.get(f"/releases/{uuid}", params={"view": "ledger"})
    assert_plain_page(ledger.text)
    assert 'id="attempts"' in ledger.text and f'href="/releases/{uuid}"' in ledger.text


def _section(doc: str, attempt: int) -> str:
    m = re.search(rf'<section class="attempt" id="attempt-{attempt}".*?</section>', doc, re.S)
    assert m, f"attempt {attempt} not shown"
    return m.group(0)


def test_release_without_report_shows_the_ledger_facts_and_attempts(
    client: TestClient, seeded: Seeded
) -> None:
    r = client.get(f"/releases/{seeded.uuid(seeded.candidate)}")
    assert r.status_code == 200
    p = assert_plain_page(r.text)
    assert "No report stored for this release" in r.text
    text = " ".join(p.text)
    assert "… CANDIDATE" in text and "1,500 records" in text and "occupation" in text
    assert seeded.uuid(seeded.candidate) in text
    open_attempt = _section(r.text, 1)
    assert "… OPEN" in open_attempt and "not yet" in open_attempt  # undecided
    assert "check_safety" in open_attempt and "✓ PASSED" in open_attempt

    sup = client.get(f"/releases/{seeded.uuid(seeded.superseded)}")
    assert sup.status_code == 200
    assert_plain_page(sup.text)
    assert "↷ SUPERSEDED" in sup.text
    attempt = _section(sup.text, 1)
    # who superseded it, when and why (escaped), the gate's reason, every check's verdict
    assert f"superseded by {esc(STEWARD)} on 20" in attempt
    assert esc(SUPERSEDE_REASON) in attempt and EVIL not in sup.text
    assert "composition_audit: no result was recorded" in attempt
    assert "✓ PASSED" in attempt  # check_safety
    assert re.search(r"composition_audit</th>.*?NO VERDICT.*?no result recorded", attempt, re.S)

    blocked = client.get(f"/releases/{seeded.uuid(seeded.blocked)}", params={"view": "ledger"})
    attempt = _section(blocked.text, 1)
    assert "✗ BLOCKED" in attempt and "✗ FAILED" in attempt
    assert esc(f"reviewer note: {EVIL}") in attempt and "blocked by officer" in attempt

    for missing in ("/releases/999", "/releases/00000000-0000-4000-8000-000000000000"):
        page = client.get(missing)
        assert page.status_code == 404 and "does not exist" in page.text, missing
        assert_plain_page(page.text)
    bad = client.get("/releases/<b>x</b>")
    assert bad.status_code == 404 and "<b>" not in bad.text


# --------------------------------------------------------------------------------- JSON
def test_json_api_and_read_only(client: TestClient, seeded: Seeded) -> None:
    listed = client.get("/api/releases", params={"status": "blocked"}).json()
    assert [r["id"] for r in listed] == [seeded.blocked]
    assert listed[0]["uuid"] == seeded.uuid(seeded.blocked)
    assert listed[0]["dataset"].endswith(EVIL)  # JSON carries the text as it is
    assert listed[0]["reasons"][0] == seeded.blocked_reason  # the attempt's reasons
    assert listed[0]["report_stored_at"]
    sup = client.get("/api/releases", params={"status": "superseded"}).json()
    assert any(r.startswith(f"superseded by {STEWARD}") for r in sup[0]["reasons"])

    uuid = seeded.uuid(seeded.blocked)
    report = client.get(f"/api/releases/{uuid}/report").json()
    with ReleaseLedger(seeded.url, create=False) as ledger:
        assert report == ledger.report(seeded.blocked)
    assert client.get(f"/api/releases/{seeded.blocked}/report").json() == report  # id too

    one = client.get(f"/api/releases/{seeded.uuid(seeded.superseded)}").json()
    assert one["status"] == "superseded" and one["id"] == seeded.superseded
    (attempt,) = one["attempts"]
    assert attempt["status"] == "superseded" and attempt["superseded_by"] == STEWARD
    assert attempt["supersede_reason"] == SUPERSEDE_REASON and attempt["superseded_at"]
    assert [(c["name"], c["safe"]) for c in attempt["checks"]] == [("check_safety", True)]
    assert "envelope" not in attempt["checks"][0]
    assert one["key_fingerprint"] is None and "release" not in attempt

    candidate = seeded.uuid(seeded.candidate)
    assert client.get(f"/api/releases/{candidate}/report").status_code == 404
    missing = client.get("/api/releases/999")
    assert missing.status_code == 404 and "does not exist" in missing.json()["detail"]
    for path in ("/", f"/releases/{uuid}", "/api/releases", f"/api/releases/{uuid}"):
        assert client.post(path).status_code == 405
        assert client.delete(path).status_code == 405
        assert client.put(path).status_code == 405


def test_every_answer_carries_the_security_headers(client: TestClient, seeded: Seeded) -> None:
    """Pages, JSON, a missing release and a refused method: each with the content security
    policy (nothing loads but inline CSS), nosniff and same-origin framing only."""
    from airflow_privacy.providers.airflow.plugin import SECURITY_HEADERS

    uuid = seeded.uuid(seeded.blocked)
    answers = [
        client.get("/"), client.get(f"/releases/{uuid}"), client.get("/api/releases"),
        client.get(f"/api/releases/{uuid}/report"), client.get("/api/releases/999"),
        client.get("/releases/999"), client.post("/"),
    ]  # fmt: skip
    assert [a.status_code for a in answers] == [200, 200, 200, 200, 404, 404, 405]
    for answer in answers:
        for name, value in SECURITY_HEADERS.items():
            assert answer.headers.get(name) == value, (answer.url, name)
    csp = SECURITY_HEADERS["Content-Security-Policy"]
    # the one script the pages load is the app's own theme script: nothing inline runs
    assert "default-src 'none'" in csp and "script-src 'self';" in csp
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    page = answers[1].text
    assert page.replace("&lt;script", "").count("<script") == 1
    assert '<script src="/theme.js"></script>' in page
    theme = client.get("/theme.js")
    assert theme.status_code == 200 and theme.headers["content-type"].startswith("text/javascript")
    assert 'getItem("theme")' in theme.text and "data-theme" in theme.text


def test_json_never_returns_the_key_fingerprint(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    release = PublishedRelease.from_groups(["age"], "disease", [(["3*"], {"flu": 2, "cold": 1})])
    with ReleaseLedger(url, hash_key=bytes(range(32))) as ledger:
        info = ledger.record("clinic", release, status="published", identifiers=["a", "b"])
        fingerprint = info.key_fingerprint
    assert fingerprint
    client = TestClient(create_app(auth=False, location=lambda: url))
    one = client.get(f"/api/releases/{info.uuid}")
    assert one.json()["key_fingerprint"] == "recorded" and fingerprint not in one.text
    for path in ("/", f"/releases/{info.uuid}", "/api/releases"):
        assert fingerprint not in client.get(path).text


# ------------------------------------------------------------------------ missing ledger
def test_a_missing_ledger_is_an_empty_list(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'none.db'}?password=qs-s3cret"
    client = TestClient(create_app(auth=False, location=lambda: url))
    r = client.get("/")
    assert r.status_code == 200
    assert_plain_page(r.text)
    assert "No ledger yet at sqlite:///" in r.text and "none.db" in r.text
    assert "qs-s3cret" not in r.text  # the location is shown masked
    assert client.get("/api/releases").json() == []
    one = client.get("/releases/00000000-0000-4000-8000-000000000000")
    assert one.status_code == 404 and "no ledger yet" in one.text
    assert not (tmp_path / "none.db").exists()  # reading never creates a ledger

    empty = tmp_path / "empty.db"  # a database without ledger tables
    with sqlite3.connect(empty) as con:
        con.execute("CREATE TABLE other (x INTEGER)")
    con.close()
    client = TestClient(create_app(auth=False, location=lambda: f"sqlite:///{empty}"))
    r = client.get("/")
    assert r.status_code == 200 and "No ledger yet at" in r.text
    with sqlite3.connect(empty) as con:
        tables = {t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    con.close()
    assert tables == {"other"}  # no ledger tables were created


# ------------------------------------------------------------- where the ledger comes from
def _connection(**fields: Any) -> Any:
    from airflow.models.connection import Connection

    return Connection(conn_id="privacy_ledger_default", conn_type="privacyledger", **fields)


def test_the_ledger_is_located_through_airflows_connections(
    tmp_path: Path, seeded: Seeded, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$AIRFLOW_PRIVACY_LEDGER_URL``, else the connection ``privacy_ledger_default`` as the
    API server reads it (``Connection.get_connection_from_secrets``), else
    ``$AIRFLOW_HOME/privacy_ledger.db``; a connection store that fails is a 503."""
    from airflow.models.connection import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException

    asked: list[str] = []
    stored: dict[str, Any] = {}

    def from_secrets(conn_id: str, team_name: str | None = None) -> Any:
        asked.append(conn_id)
        if conn_id in stored:
            return stored[conn_id]
        raise AirflowNotFoundException(f"The conn_id `{conn_id}` isn't defined")

    monkeypatch.setattr(Connection, "get_connection_from_secrets", from_secrets)
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_URL", raising=False)
    monkeypatch.delenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    client = TestClient(create_app(auth=False))  # the default: ledger_location()

    # no connection: the default file under AIRFLOW_HOME, which does not exist yet
    r = client.get("/")
    assert asked == ["privacy_ledger_default"]
    assert r.status_code == 200 and "No ledger yet at" in r.text
    assert str(tmp_path / "home" / "privacy_ledger.db") in r.text
    assert not (tmp_path / "home").exists()

    # the connection (a SQLite ledger by path) as the API server's connection store has it
    path = seeded.url.removeprefix("sqlite:///")
    stored["privacy_ledger_default"] = _connection(extra=json.dumps({"dialect": "sqlite",
                                                                     "path": path}))  # fmt: skip
    r = client.get("/")
    assert _rows(r.text) == seeded.all
    one = client.get(f"/api/releases/{seeded.uuid(seeded.published)}")
    assert one.status_code == 200 and one.json()["dataset"] == "adult"

    # the environment variable wins over the connection
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", f"sqlite:///{tmp_path / 'other.db'}")
    asked.clear()
    r = client.get("/")
    assert "other.db" in r.text and _rows(r.text) == [] and asked == []
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_URL")

    # a PostgreSQL connection whose password must never be shown; nothing listens on port 1
    stored["privacy_ledger_default"] = _connection(
        host="127.0.0.1", port=1, schema="ledger", login="officer", password="pw-fr0m-conn"
    )
    for path in ("/", "/api/releases"):
        r = client.get(path)
        assert r.status_code == 503 and "pw-fr0m-conn" not in r.text, (path, r.text)

    # the connection store itself fails (the metadata database is down): 503, not 500
    def broken(conn_id: str, team_name: str | None = None) -> Any:
        raise RuntimeError("could not connect to the metadata database")

    monkeypatch.setattr(Connection, "get_connection_from_secrets", broken)
    page = client.get("/")
    assert page.status_code == 503 and "cannot be read now" in page.text
    assert_plain_page(page.text)
    api = client.get("/api/releases")
    assert api.status_code == 503 and "privacy_ledger_default" in api.json()["detail"]


def test_the_lookup_goes_through_the_one_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    import airflow_privacy.ledger.location as location

    seen: list[Any] = []
    real = location.resolve

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("lookup"))
        return real(*args, **kwargs)

    monkeypatch.setattr(location, "resolve", spy)
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", "sqlite:////nonexistent/x.db")
    loc = ui_ledger.ledger_location()
    assert seen == [ui_ledger.airflow_connection] and loc.url == "sqlite:////nonexistent/x.db"


# ---------------------------------------------------------------------------- security
def test_an_unavailable_ledger_is_a_503_without_the_password() -> None:
    url = "postgresql+psycopg://officer:s3cret-pw@127.0.0.1:1/ledger?password=qs-s3cret"
    client = TestClient(create_app(auth=False, location=lambda: url))
    for path in ("/", "/releases/00000000-0000-4000-8000-000000000000"):
        r = client.get(path)
        assert r.status_code == 503, (path, r.status_code, r.text[:500])
        assert_plain_page(r.text)
        assert "unavailable" in r.text and "Traceback" not in r.text
        assert "s3cret-pw" not in r.text and "qs-s3cret" not in r.text
        assert r.headers.get("retry-after")
    for path in ("/api/releases", "/api/releases/1", "/api/releases/1/report"):
        r = client.get(path)
        assert r.status_code == 503, path
        detail = r.json()["detail"]
        assert "\n" not in detail and "unavailable" in detail
        assert "s3cret-pw" not in r.text and "qs-s3cret" not in r.text


def test_a_message_carrying_the_password_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second line of defence: even a message that quotes the raw URL shows no password."""
    from contextlib import contextmanager

    from airflow_privacy.errors import InputError, LedgerUnavailable

    url = "postgresql+psycopg://officer:s3cret-pw@db.internal/ledger?password=qs-s3cret"
    error: list[type[Exception]] = [LedgerUnavailable]

    @contextmanager
    def leaky(location: Any) -> Iterator[None]:
        raise error[0](f"cannot use {location.url}")
        yield

    monkeypatch.setattr(ui_app, "open_ledger", leaky)
    client = TestClient(create_app(auth=False, location=lambda: url))
    for kind, status in ((LedgerUnavailable, 503), (InputError, 400)):
        error[0] = kind
        for path in ("/", "/api/releases", "/releases/1", "/api/releases/1"):
            r = client.get(path)
            assert r.status_code == status and "***" in r.text, (path, r.text)
            assert "s3cret-pw" not in r.text and "qs-s3cret" not in r.text, path


def _tampered_ledger(tmp_path: Path, seeded: Seeded) -> tuple[str, str, Path]:
    """A ledger whose stored report has markup where numbers belong (valid JSON, wrong
    types): (URL, release uuid, the ledger file)."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    release = PublishedRelease.from_groups(["age"], "disease", [(["3*"], {"flu": 2, "cold": 1})])
    with ReleaseLedger(seeded.url, create=False) as source:
        report = source.report(seeded.blocked)
    assert report is not None
    report["facts"]["release_id"] = "<script>window.pwned=2</script>"
    report["verdict"]["checks_run"] = "<img src=x onerror=alert(3)>"
    report["facts"]["groups"] = "<script>window.pwned=4</script>"
    with ReleaseLedger(url) as ledger:
        info = ledger.record("clinic", release, status="published")
        (attempt,) = ledger.attempts(info.id)
        ledger.attach_report(attempt.uuid, report)
    return url, info.uuid, tmp_path / "ledger.db"


def test_every_stored_value_is_escaped_numbers_included(tmp_path: Path, seeded: Seeded) -> None:
    url, uuid, db = _tampered_ledger(tmp_path, seeded)
    client = TestClient(create_app(auth=False, location=lambda: url))
    for path in ("/", f"/releases/{uuid}"):
        r = client.get(path)
        assert r.status_code == 200, (path, r.text[:500])
        assert_plain_page(r.text)  # no <script>, no <img>, no event handler
        assert "<script>" not in r.text and "<img" not in r.text
    page = client.get(f"/releases/{uuid}").text
    # the stored report is refused (wrong types) and the facts page says why, escaped
    assert "could not be read" in page and "release_id" in page
    assert esc("<script>window.pwned=2</script>") in page
    # markup stored in a number column (SQLite keeps text in an INTEGER column): the ledger
    # is named as corrupted (table, row, column), the markup never shown
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE ledger_releases SET n_records = ?, n_groups = ?",
            ("<img src=x onerror=alert(1)>", "<script>window.pwned=4</script>"),
        )
    con.close()
    for path in ("/", f"/releases/{uuid}", "/api/releases"):
        r = client.get(path)
        assert r.status_code == 400, (path, r.text[:500])
        assert "table ledger_releases, row 1, column n_records" in r.text, path
        assert "<script>" not in r.text and "<img" not in r.text and "pwned" not in r.text
        if not path.startswith("/api"):
            assert_plain_page(r.text)


def test_every_route_requires_authentication_and_the_openapi_routes_are_off() -> None:
    app = create_app(auth=True)
    require = ui_ledger.airflow_access  # the dependency factory
    assert require is not None
    paths = set()
    for route in app.routes:
        assert isinstance(route, APIRoute), f"{route} is not an authenticated API route"
        calls = [d.call for d in route.dependant.dependencies]
        assert any(getattr(c, "__name__", "") == "require" for c in calls), route.path
        paths.add(route.path)
    assert "/openapi.json" not in paths and "/docs" not in paths and "/redoc" not in paths
    client = TestClient(create_app(auth=False))
    for path in ("/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect"):
        assert client.get(path).status_code == 404, path
    schema = client.get("/api/openapi.json").json()
    assert "/api/releases/{ref}" in schema["paths"]


def test_an_invalid_auth_mode_fails_closed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(AUTH_ENV, "off")
    with caplog.at_level(logging.ERROR, logger=ui_ledger.__name__):
        assert auth_mode() == "airflow"
        app = create_app()  # no exception: the API server starts
    assert any(AUTH_ENV in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)
    for route in app.routes:  # authentication stays on
        assert isinstance(route, APIRoute) and route.dependant.dependencies, route
    monkeypatch.setenv(AUTH_ENV, " None ")
    assert auth_mode() == "none"
    monkeypatch.delenv(AUTH_ENV)
    assert auth_mode() == "airflow"


# ------------------------------------------------------------------------------- plugin
def test_plugin_declares_the_app_and_the_navigation_entry() -> None:
    for plugin in (AirflowPrivacyPlugin, AirflowPrivacyPlugin()):  # class; entry point: instance
        (app,) = plugin.fastapi_apps
        assert app["url_prefix"] == "/privacy" and app["app"] is not None
    view, run_view, task_view = AirflowPrivacyPlugin.external_views
    assert view is EXTERNAL_VIEW
    assert not view["href"].startswith("/") and view["url_route"] == "privacy-ledger"
    # a tab of every DAG run and task instance: the UI fills in {DAG_ID} and {RUN_ID}
    assert run_view["destination"] == "dag_run" and task_view["destination"] == "task_instance"
    assert run_view["href"] == task_view["href"] == "privacy/runs/{DAG_ID}/{RUN_ID}"
    assert run_view["url_route"] != task_view["url_route"]
    json.dumps([view, run_view, task_view])


def test_a_runs_tab_opens_the_report_of_the_attempt_it_opened(tmp_path: Path) -> None:
    """The run tab's route: the attempt the run opened (by its origin), else a page saying
    it opened none; every reference escaped."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    from tests.policy_setup import record_policy

    record_policy(url, "adult")
    with ReleaseLedger(url, create=True) as db:
        origin = {"front_end": "airflow", "dag_id": "privacy_release", "run_id": "manual__1",
                  "task_id": "open_attempt", "try_number": 1}  # fmt: skip
        release = PublishedRelease.from_groups(["age"], "disease", [(["3*"], {"flu": 2})])
        first = db.open_attempt("adult", release, required=["check"], first_release=True,
                                origin=origin, content_digest=DIGEST)  # fmt: skip
    client = TestClient(create_app(auth=False, location=lambda: url))
    r = client.get("/runs/privacy_release/manual__1", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].endswith(f"/attempts/{first.uuid}")
    other = client.get("/runs/privacy_release/manual__2")
    assert other.status_code == 200 and "opened no attempt" in other.text
    assert_plain_page(other.text)
    odd = client.get("/runs/d/%3Cb%3Ex")
    assert odd.status_code == 200 and "<b>x" not in odd.text and "&lt;b&gt;x" in odd.text


AUTH_PROBE = """
import json, sys
from fastapi.testclient import TestClient
from airflow.api_fastapi.app import create_app
from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
from airflow import plugins_manager
app = create_app(apps="core")
am = app.state.auth_manager
c = TestClient(app)
viewer = am.generate_jwt(SimpleAuthManagerUser(username="officer", role="viewer"))
nobody = am.generate_jwt(SimpleAuthManagerUser(username="nobody", role=None))
bearer = {"Authorization": "Bearer " + viewer}
uuid = sys.argv[1]
out = {
    "plugins": [p.name for p in plugins_manager._get_plugins()[0]],
    "anonymous": c.get("/privacy/").status_code,
    "anonymous_api": c.get("/privacy/api/releases").status_code,
    "anonymous_release": c.get("/privacy/releases/" + uuid).status_code,
    "anonymous_body": c.get("/privacy/").text,
    "cookie": c.get("/privacy/", cookies={"_token": viewer}).status_code,
    "cookie_body": c.get("/privacy/", cookies={"_token": viewer}).text,
    "cookie_release": c.get("/privacy/releases/" + uuid, cookies={"_token": viewer}).status_code,
    "bearer": c.get("/privacy/api/releases", headers=bearer).status_code,
    "bearer_release": c.get("/privacy/api/releases/" + uuid, headers=bearer).json(),
    "forged": c.get("/privacy/api/releases",
                    headers={"Authorization": "Bearer " + viewer[:-4] + "AAAA"}).status_code,
    "no_role": c.get("/privacy/api/releases",
                     headers={"Authorization": "Bearer " + nobody}).status_code,
    "openapi": {p: [c.get("/privacy" + p).status_code, c.get("/privacy" + p,
                    headers=bearer).status_code]
                for p in ("/openapi.json", "/docs", "/redoc", "/api/openapi.json")},
    "openapi_body": c.get("/privacy/openapi.json").text,
    # the theme script, the dashboard module and the widget: signed in only, like the rest
    "new_routes": {p: [c.get("/privacy" + p).status_code,
                       c.get("/privacy" + p, cookies={"_token": viewer}).status_code]
                   for p in ("/theme.js", "/dashboard.js", "/widget")},
    "widget_body": c.get("/privacy/widget", cookies={"_token": viewer}).text,
    "react_apps": [a for p in plugins_manager._get_plugins()[0] if p.name == "airflow_privacy"
                   for a in p.react_apps],
}
print("RESULT " + json.dumps(out))
"""


def test_the_api_server_authenticates_and_authorizes_the_plugin_app(
    tmp_path: Path, seeded: Seeded
) -> None:
    """The real API server app, the plugin loaded from its ``airflow.plugins`` entry point
    (no plugins folder), and ``AIRFLOW_PRIVACY_UI_AUTH`` set to an invalid value: the server
    still starts, logs the error, and keeps authentication on."""
    home = tmp_path / "airflow-home"
    (home / "plugins").mkdir(parents=True)  # empty: the entry point registers the plugin
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "officer:viewer",
            "AIRFLOW_PRIVACY_LEDGER_URL": seeded.url,
            AUTH_ENV: "disabled",  # invalid: must fail closed, not stop the server
            "PYTHONPATH": str(ROOT),
        }
    )
    migrated_home(home)
    uuid = seeded.uuid(seeded.blocked)
    proc = subprocess.run([sys.executable, "-c", AUTH_PROBE, uuid], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)  # fmt: skip
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert proc.returncode == 0 and line, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = json.loads(line[0][len("RESULT ") :])
    assert out["plugins"].count("airflow_privacy") == 1  # registered once
    assert AUTH_ENV in proc.stdout + proc.stderr  # the invalid value is logged
    assert out["anonymous"] == 401 and "Sign in first" in out["anonymous_body"]
    # the sign-in link comes back to the page asked for
    assert re.search(r'id="sign-in" href="[^"]*login\?next=%2Fprivacy%2F"', out["anonymous_body"])
    assert out["anonymous_api"] == 401 and out["anonymous_release"] == 401
    assert out["cookie"] == 200 and f'data-release-id="{seeded.blocked}"' in out["cookie_body"]
    assert f'href="/privacy/releases/{uuid}"' in out["cookie_body"]  # links work under the mount
    assert out["cookie_release"] == 200
    assert out["bearer"] == 200 and out["bearer_release"]["uuid"] == uuid
    assert out["forged"] in (401, 403)
    assert out["no_role"] == 403
    # FastAPI's generated routes are off; the schema is served only to signed-in users
    assert out["openapi"]["/openapi.json"] == [404, 404], out["openapi"]
    assert out["openapi"]["/docs"] == [404, 404] and out["openapi"]["/redoc"] == [404, 404]
    assert out["openapi"]["/api/openapi.json"] == [401, 200]
    assert "/api/releases" not in out["openapi_body"]
    assert out["new_routes"] == {p: [401, 200] for p in ("/theme.js", "/dashboard.js", "/widget")}
    assert f'href="/privacy/releases/{uuid}"' in out["widget_body"]  # the blocked one, linked
    assert '<script src="/privacy/theme.js"></script>' in out["widget_body"]
    (app,) = out["react_apps"]
    assert app["destination"] == "dashboard" and app["bundle_url"] == "privacy/dashboard.js"


def test_pages_do_not_repeat_the_values_left_for_one_person(tmp_path: Path) -> None:
    """A legacy composition reason (written before envelopes left values out) is shown
    without the person's values, in the pages and in the JSON alike."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    reason = (
        "3 of the 40 people are pinned to their sensitive value. Worst: row 12: "
        "{'HIV'} left after intersecting a group age=3* with b v1 group age=30-39."
    )
    legacy = "row 9896: {'Prof-specialty', 'Craft-repair'} left after intersecting a v1 group x"
    release = PublishedRelease.from_groups(["age"], "disease", [(["3*"], {"HIV": 1, "flu": 1})])
    with ReleaseLedger(url) as ledger:
        attempt = ledger.open_attempt("clinic", release, required=["composition_audit"],
                                      first_release=True, content_digest=DIGEST)  # fmt: skip
        ledger.record_check(
            attempt.uuid,
            name="composition_audit",
            step="audit",
            safe=False,
            outcome="failed",
            envelope={"step": "audit", "name": "composition_audit", "outcome": "failed",
                      "safe": False, "summary": legacy, "reasons": [reason, legacy]},
            content_digest=DIGEST)  # fmt: skip
        ledger.decide(attempt.uuid, rules=gate_rules)
        ledger.block(attempt.uuid, [reason])
        info = ledger.info(attempt.release.id)
    client = TestClient(create_app(auth=False, location=lambda: url))
    for page in ("/", f"/releases/{info.uuid}", "/api/releases", f"/api/releases/{info.uuid}"):
        text = client.get(page).text
        assert "row 12 pinned down after intersecting a group age=3*" in text, page
        assert "HIV" not in text and "Prof-specialty" not in text, page
        assert "Craft-repair" not in text, page
    one = client.get(f"/api/releases/{info.uuid}").json()
    assert "row 9896 pinned down after intersecting" in one["attempts"][0]["checks"][0]["summary"]


def test_a_stored_report_is_rendered_redacted(tmp_path: Path) -> None:
    """A stored report carrying a legacy composition reason (a person's values) is shown
    as the JSON route gives it: redacted, in the HTML page too."""
    seeded = seed_ledger(tmp_path / "seed")
    legacy = "row 4242: {'Prof-specialty', 'Craft-repair'} left after intersecting a v1 group x"
    with ReleaseLedger(seeded.url, create=False) as db:
        stored = db.report(seeded.blocked)
        assert stored is not None
        stored["verdict"]["reasons"] = [legacy, *stored["verdict"]["reasons"]]
        attempt = db.attempts(seeded.blocked)[-1].uuid
        db.attach_report(attempt, stored)
    client = TestClient(create_app(auth=False, location=lambda: seeded.url))
    uuid = seeded.uuid(seeded.blocked)
    as_json = client.get(f"/api/releases/{uuid}/report")
    page = client.get(f"/releases/{uuid}")
    assert page.status_code == 200 and "<svg" in page.text  # the report, not the facts page
    for text in (as_json.text, page.text):
        assert "row 4242 pinned down after intersecting a v1 group x" in text
        assert "Prof-specialty" not in text and "Craft-repair" not in text
    # one redaction for pages and JSON
    assert not any(hasattr(m, "_redacted") for m in (plugin_module, ui_app, ui_pages))


def _old_ledger(path: Path, revision: str) -> str:
    """A real ledger at an older schema revision (migrated up to ``revision`` only)."""
    from alembic import command
    from sqlalchemy import create_engine

    from airflow_privacy.ledger.migrate import alembic_config, quiet_alembic

    url = f"sqlite:///{path}"
    engine = create_engine(url)
    with quiet_alembic(), engine.begin() as conn:
        command.upgrade(alembic_config(conn), revision)
    engine.dispose()
    return url


def _schema(path: Path) -> tuple[str, list[str]]:
    with sqlite3.connect(path) as con:
        (rev,) = con.execute("SELECT version_num FROM ledger_alembic_version").fetchone()
        ddl = sorted(s for (s,) in con.execute("SELECT sql FROM sqlite_master") if s)
    con.close()
    return rev, ddl


def test_the_ui_never_migrates_an_outdated_ledger(tmp_path: Path) -> None:
    """Reading is read-only: an older schema is not upgraded by a GET (no DDL on the
    production ledger); the pages and the JSON say it needs migrating, with a 503."""
    from airflow_privacy.ledger.migrate import head

    path = tmp_path / "old.db"
    url = _old_ledger(path, "0003_attempts")
    assert head() != "0003_attempts"
    before = _schema(path)
    client = TestClient(create_app(auth=False, location=lambda: url))
    for route in ("/", "/releases/1", "/api/releases", "/api/releases/1", "/api/releases/1/report"):
        r = client.get(route)
        assert r.status_code == 503, (route, r.status_code, r.text[:500])
        text = r.json()["detail"] if route.startswith("/api/") else r.text
        assert "0003_attempts" in text and "migrat" in text, (route, text[:1000])
        assert "airflow-privacy ledger" in text, (route, text[:1000])
        assert "Retry-After" not in r.headers  # waiting does not fix it
        if not route.startswith("/api/"):
            assert_plain_page(r.text)
            assert "try again in a moment" not in r.text
    assert _schema(path) == before  # nothing was changed

    newer = tmp_path / "newer.db"
    url = _old_ledger(newer, "head")
    with sqlite3.connect(newer) as con:
        con.execute("UPDATE ledger_alembic_version SET version_num = '9999_future'")
    con.close()
    client = TestClient(create_app(auth=False, location=lambda: url))
    r = client.get("/api/releases")
    assert r.status_code == 503 and "newer airflow-privacy" in r.json()["detail"]
    # a current ledger reads as before
    current = tmp_path / "current.db"
    url = _old_ledger(current, "head")
    assert TestClient(create_app(auth=False, location=lambda: url)).get("/").status_code == 200


def test_a_release_whose_files_are_not_in_place_is_not_shown_published(tmp_path: Path) -> None:
    """After the gate decides, the content is published but the attempt is ``publishing``
    until the files are copied: the list, the page and the JSON say so, not PUBLISHED."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    release = PublishedRelease.from_groups(["age"], "disease", [(["3*"], {"flu": 2, "cold": 1})])
    passed = {"step": "check", "name": "check", "outcome": "passed", "safe": True,
              "summary": "ok", "reasons": []}  # fmt: skip
    with ReleaseLedger(url) as db:
        a = db.open_attempt(
            "clinic", release, required=["check"], first_release=True, content_digest=DIGEST
        )
        db.record_check(a.uuid, name="check", step="check", safe=True, outcome="passed",
                        envelope=passed, content_digest=DIGEST)  # fmt: skip
        decided = db.decide(
            a.uuid, rules=gate_rules, destination=str(tmp_path / "pub" / "r.parquet")
        )
        assert decided.status == "publishing"
        assert db.info(a.release.id).status == "published"  # the content counts as published
    client = TestClient(create_app(auth=False, location=lambda: url))
    listed = client.get("/")
    assert_plain_page(listed.text)
    row = re.search(r"<tr data-release-id=.*?</tr>", listed.text, re.S)
    assert row is not None
    assert "PUBLISHED" not in row.group(0) and "PUBLISHING" in row.group(0)
    assert "files not yet in place" in row.group(0)
    page = client.get(f"/releases/{a.release.uuid}")
    facts = re.search(r'<table id="facts">.*?</table>', page.text, re.S)
    assert facts is not None and "✓ PUBLISHED" not in facts.group(0)
    assert "PUBLISHING" in facts.group(0)
    (item,) = client.get("/api/releases").json()
    assert item["status"] == "publishing"
    assert client.get(f"/api/releases/{a.release.uuid}").json()["status"] == "publishing"
    with ReleaseLedger(url, create=False) as db:
        db.finish_publish(a.uuid)
    listed = client.get("/")
    assert "✓ PUBLISHED" in listed.text and "PUBLISHING" not in listed.text
    assert client.get("/api/releases").json()[0]["status"] == "published"


def test_every_attempt_has_its_own_report_and_a_rerun_never_hides_the_deciding_one(
    tmp_path: Path,
) -> None:
    """A later run of published content (an ``already-published`` attempt) stores its own
    report: the release page keeps showing the one of the attempt that published it, each
    attempt's page (what its run's "Privacy report" link opens) shows its own, and the
    attempts list links every report. Attempts are named by UUID only."""
    seeded = seed_ledger(tmp_path / "seed")
    with ReleaseLedger(seeded.url, create=False) as db:
        deciding = db.attempts(seeded.published)[-1]
        stored = db.report(seeded.published)
        assert stored is not None and deciding.status == "published"
        rel = db.release(seeded.published)
        info = db.info(seeded.published)
        again = db.open_attempt(info.dataset, rel, required=["check"], content_digest=DIGEST)
        assert again.status == "already-published"
        rerun = dict(stored)
        rerun["verdict"] = dict(stored["verdict"], headline="RE-RUN: composition audit not run")
        db.attach_report(again.uuid, rerun)
    client = TestClient(create_app(auth=False, location=lambda: seeded.url))
    page = client.get(f"/releases/{seeded.uuid(seeded.published)}")
    assert page.status_code == 200 and "RE-RUN" not in page.text  # the deciding report
    own = client.get(f"/attempts/{again.uuid}")
    assert own.status_code == 200 and "RE-RUN: composition audit not run" in own.text
    assert f"The report of attempt {again.uuid}" in own.text
    first = client.get(f"/attempts/{deciding.uuid}")
    assert first.status_code == 200 and "RE-RUN" not in first.text
    as_json = client.get(f"/api/attempts/{again.uuid}/report").json()
    assert as_json["verdict"]["headline"] == "RE-RUN: composition audit not run"
    ledger_view = client.get(f"/releases/{seeded.uuid(seeded.published)}?view=ledger").text
    for a in (deciding.uuid, again.uuid):
        assert f'href="/attempts/{a}"' in ledger_view
    assert client.get("/attempts/1").status_code == 404  # never by number
    # an attempt without a stored report: its release's attempts
    with ReleaseLedger(seeded.url, create=False) as db:
        open_one = db.attempts(seeded.candidate)[-1]
    moved = client.get(f"/attempts/{open_one.uuid}", follow_redirects=False)
    assert moved.status_code == 303 and moved.headers["location"].endswith("?view=ledger")


def test_a_dp_release_is_shown_with_its_report(tmp_path: Path) -> None:
    """A differentially private release (no groups) on the ledger pages: its page, its
    stored report (the budget, the cells) and the JSON API; nothing of it crashes a page."""
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.policy import Policy
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.steps.dp_release import DP_RELEASE
    from airflow_privacy.gate.steps.report import REPORT
    from tests.policy_setup import record_policy

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "survey", policy=Policy(dp={"unit": "rho", "cap": 1.0}))
    data = tmp_path / "d.csv"
    data.write_text("sex\n" + "M\nF\n" * 50)
    keys = tmp_path / "sex.csv"
    keys.write_text(f"M\nF\n{EVIL}\n")
    out = tmp_path / "noisy.csv"
    env = DP_RELEASE.run(DP_RELEASE.request({
        "source": ReleaseRef(path=str(data)), "dataset": "survey", "marginals": ["sex"],
        "keys": {"sex": str(keys)}, "rho": 0.5, "out": str(out), "ledger": url,
    }), GateContext())  # fmt: skip
    assert env.attempt is not None
    asked = {"release": ReleaseRef(path=str(out)), "attempt": env.attempt.uuid, "ledger": url}
    REPORT.run(REPORT.request(asked), GateContext())
    client = TestClient(create_app(auth=False, location=lambda: url))
    page = client.get(f"/releases/{env.attempt.release_uuid}")
    assert page.status_code == 200
    assert_plain_page(page.text)
    assert "Differential privacy" in page.text and "never reset" in page.text
    assert "<th>Estimate</th>" in page.text  # one marginal: nothing to make consistent
    assert "made consistent" not in page.text
    assert EVIL not in page.text and esc(EVIL) in page.text  # a key value is escaped
    ledger_view = client.get(f"/releases/{env.attempt.release_uuid}", params={"view": "ledger"})
    assert ledger_view.status_code == 200
    assert_plain_page(ledger_view.text)
    assert "dp-marginals" in ledger_view.text
    listed = client.get("/api/releases").json()
    assert [r["kind"] for r in listed] == ["dp-marginals"]


def test_the_dashboard_widget_shows_blocked_published_and_budget_left(
    tmp_path: Path, seeded: Seeded, client: TestClient
) -> None:
    """The widget page (what the dashboard's module frames): the releases blocked, linked by
    UUID; the last publication of each dataset; a DP budget, after a spend; ledger metadata
    only, escaped; the module sets the component Airflow renders."""
    page = client.get("/widget")
    assert page.status_code == 200
    text = page.text
    assert f'href="/releases/{seeded.uuid(seeded.blocked)}"' in text
    blocked = int(re.search(r'status-blocked">(\d+)</strong>', text).group(1))  # type: ignore[union-attr]
    from airflow_privacy.ledger import ReleaseLedger

    with ReleaseLedger(seeded.url) as db:
        assert blocked == len(db.list(status="blocked"))
        (pub,) = [r for r in db.list(status="published") if r.id == seeded.published]
    assert f'href="/releases/{pub.uuid}"' in text and "Last publication per dataset" in text
    assert "budget left" not in text  # no dataset has a DP budget here
    assert EVIL not in text
    # a DP budget, spent once
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.policy import Policy
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.steps.dp_release import DP_RELEASE
    from tests.policy_setup import record_policy

    url = f"sqlite:///{tmp_path / 'dp.db'}"
    record_policy(url, f"survey{EVIL}", policy=Policy(dp={"unit": "rho", "cap": 1.0}))
    data = tmp_path / "d.csv"
    data.write_text("sex\n" + "M\nF\n" * 20)
    keys = tmp_path / "sex.csv"
    keys.write_text("M\nF\n")
    DP_RELEASE.run(DP_RELEASE.request({
        "source": ReleaseRef(path=str(data)), "dataset": f"survey{EVIL}", "marginals": ["sex"],
        "keys": {"sex": str(keys)}, "rho": 0.25, "out": str(tmp_path / "n.csv"), "ledger": url,
    }), GateContext())  # fmt: skip
    other = TestClient(create_app(auth=False, location=lambda: url)).get("/widget").text
    assert "Differential privacy budget left" in other and "0.75 of 1" in other
    assert EVIL not in other and esc(f"survey{EVIL}") in other
    assert "No release has been published yet." in other
    empty = TestClient(create_app(auth=False, location=lambda: f"sqlite:///{tmp_path / 'x.db'}"))
    assert "0</strong> releases blocked" in empty.get("/widget").text  # no ledger yet: zeros
    module = client.get("/dashboard.js")
    assert module.headers["content-type"].startswith("text/javascript")
    assert "globalThis.AirflowPlugin = PrivacyReleases" in module.text
    assert 'new URL("privacy/widget", document.baseURI)' in module.text
    from airflow_privacy.providers.airflow.plugin import AirflowPrivacyPlugin

    assert AirflowPrivacyPlugin.react_apps == [DASHBOARD_APP]
