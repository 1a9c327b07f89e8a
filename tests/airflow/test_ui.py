"""The plugin's ledger pages (server-rendered HTML) and JSON API, on a seeded ledger; and
Airflow's authentication of the plugin app inside the real API server app."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow.plugin import (
    EXTERNAL_VIEW,
    AirflowPrivacyPlugin,
    create_app,
)
from tests.airflow.ui_seed import EVIL, Seeded, seed_ledger

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
    assert not any(t == "script" for t, _ in p.tags), "no scripts (ledger strings are escaped)"
    for tag, attrs in p.tags:
        for name in ("src", "href", "action"):
            value = attrs.get(name) or ""
            assert not re.match(r"^\s*(https?:)?//", value), f"external {tag} {name}={value}"
            assert not value.lower().startswith("javascript:")
        assert tag not in ("iframe", "object", "embed")
        if tag == "link":
            assert attrs.get("rel") != "stylesheet"
    assert "@import" not in doc
    return p


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    return seed_ledger(tmp_path_factory.mktemp("ui-ledger"))


@pytest.fixture(scope="module")
def client(seeded: Seeded) -> TestClient:
    return TestClient(create_app(auth=False, url=lambda: seeded.url))


def _rows(doc: str) -> list[str]:
    return re.findall(r'<tr data-release-id="(\d+)">', doc)


def test_list_shows_every_release_escaped_with_status_in_words(
    client: TestClient, seeded: Seeded
) -> None:
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    p = assert_plain_page(r.text)
    assert _rows(r.text) == [str(seeded.published), str(seeded.blocked), str(seeded.candidate)]
    text = " ".join(p.text)
    for words in ("✓ PUBLISHED", "✗ BLOCKED", "… CANDIDATE", "2,000 records", "1,500 records"):
        assert words in text, words
    assert EVIL not in r.text and html_escaped(EVIL) in r.text  # names and reasons escaped
    assert html_escaped(seeded.blocked_reason)[:80] in r.text
    headers = [a for t, a in p.tags if t == "th"]
    assert len(headers) >= 8 and any(a.get("scope") == "col" for a in headers)
    assert any(t == "caption" for t, _ in p.tags)
    # the blocked release's row links to its page
    assert f'href="/releases/{seeded.blocked}"' in r.text


def html_escaped(text: str) -> str:
    import html

    return html.escape(text, quote=True)


def test_filters_by_dataset_and_status(client: TestClient, seeded: Seeded) -> None:
    blocked = client.get("/", params={"status": "blocked"})
    assert _rows(blocked.text) == [str(seeded.blocked)]
    assert "1 release(s) with status blocked" in blocked.text
    adult = client.get("/", params={"dataset": "adult", "status": ""})
    assert _rows(adult.text) == [str(seeded.published), str(seeded.candidate)]
    both = client.get("/", params={"dataset": "adult", "status": "published"})
    assert _rows(both.text) == [str(seeded.published)]
    assert '<option value="adult" selected>' in both.text  # the form keeps the filter
    none = client.get("/", params={"dataset": "nobody", "status": "blocked"})
    assert _rows(none.text) == [] and "No releases match these filters." in none.text
    assert_plain_page(none.text)
    bad = client.get("/", params={"status": "<b>x</b>"})
    assert bad.status_code == 400 and "<b>x</b>" not in bad.text
    assert_plain_page(bad.text)


def test_release_page_shows_the_stored_report_with_a_way_back(
    client: TestClient, seeded: Seeded
) -> None:
    r = client.get(f"/releases/{seeded.blocked}")
    assert r.status_code == 200
    p = parse(r.text)
    assert 'href="/"' in r.text and "All releases" in r.text
    assert any(t == "svg" for t, _ in p.tags), "plots are inline SVG"
    assert EVIL not in r.text
    body = r.text.split("<body", 1)[1]
    # the verdict first: the blocked status and its first reason come before any plot
    first_svg = body.find("<svg")
    assert 0 < body.find("BLOCKED") < first_svg or 0 < body.find("blocked") < first_svg
    assert 0 < body.find(html_escaped(seeded.blocked_reason)[:60]) < first_svg
    published = client.get(f"/releases/{seeded.published}")
    assert published.status_code == 200 and "<svg" in published.text


def test_release_without_report_shows_the_ledger_facts(client: TestClient, seeded: Seeded) -> None:
    r = client.get(f"/releases/{seeded.candidate}")
    assert r.status_code == 200
    p = assert_plain_page(r.text)
    assert "No report stored for this release" in r.text
    text = " ".join(p.text)
    assert "… CANDIDATE" in text and "1,500 records" in text and "occupation" in text
    missing = client.get("/releases/999")
    assert missing.status_code == 404 and "release #999 does not exist" in missing.text
    assert_plain_page(missing.text)


def test_json_api_and_read_only(client: TestClient, seeded: Seeded) -> None:
    listed = client.get("/api/releases", params={"status": "blocked"}).json()
    assert [r["id"] for r in listed] == [seeded.blocked]
    assert listed[0]["dataset"].endswith(EVIL)  # JSON carries the text as it is
    report = client.get(f"/api/releases/{seeded.blocked}/report").json()
    with ReleaseLedger(seeded.url) as ledger:
        assert report == ledger.report(seeded.blocked)
    assert client.get(f"/api/releases/{seeded.candidate}/report").status_code == 404
    assert client.get("/api/releases/999").status_code == 404
    for path in ("/", f"/releases/{seeded.blocked}", "/api/releases"):
        assert client.post(path).status_code == 405
        assert client.delete(path).status_code == 405


def test_a_missing_ledger_is_an_empty_list(tmp_path: Path) -> None:
    app = create_app(auth=False, url=lambda: f"sqlite:///{tmp_path / 'none.db'}")
    r = TestClient(app).get("/")
    assert r.status_code == 200 and "No releases." in r.text
    assert not (tmp_path / "none.db").exists()  # reading never creates a ledger


def test_plugin_declares_the_app_and_the_navigation_entry() -> None:
    for plugin in (AirflowPrivacyPlugin, AirflowPrivacyPlugin()):  # provider: class; folder
        (app,) = plugin.fastapi_apps
        assert app["url_prefix"] == "/privacy" and app["app"] is not None
    (view,) = AirflowPrivacyPlugin.external_views
    assert view is EXTERNAL_VIEW
    assert not view["href"].startswith("/") and view["url_route"] == "privacy-ledger"
    json.dumps(view)


AUTH_PROBE = """
import json, sys
from fastapi.testclient import TestClient
from airflow.api_fastapi.app import create_app
from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser
app = create_app(apps="core")
am = app.state.auth_manager
c = TestClient(app)
viewer = am.generate_jwt(SimpleAuthManagerUser(username="officer", role="viewer"))
nobody = am.generate_jwt(SimpleAuthManagerUser(username="nobody", role=None))
out = {
    "anonymous": c.get("/privacy/").status_code,
    "anonymous_api": c.get("/privacy/api/releases").status_code,
    "anonymous_body": c.get("/privacy/").text,
    "cookie": c.get("/privacy/", cookies={"_token": viewer}).status_code,
    "cookie_body": c.get("/privacy/", cookies={"_token": viewer}).text,
    "bearer": c.get("/privacy/api/releases",
                    headers={"Authorization": "Bearer " + viewer}).status_code,
    "forged": c.get("/privacy/api/releases",
                    headers={"Authorization": "Bearer " + viewer[:-4] + "AAAA"}).status_code,
    "no_role": c.get("/privacy/api/releases",
                     headers={"Authorization": "Bearer " + nobody}).status_code,
}
print("RESULT " + json.dumps(out))
"""


def test_the_api_server_authenticates_and_authorizes_the_plugin_app(
    tmp_path: Path, seeded: Seeded
) -> None:
    home = tmp_path / "airflow-home"
    (home / "plugins").mkdir(parents=True)
    (home / "plugins" / "airflow_privacy_plugin.py").write_text(
        (ROOT / "plugins" / "airflow_privacy_plugin.py").read_text()
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": "officer:viewer",
            "AIRFLOW_PRIVACY_LEDGER_URL": seeded.url,
            "PYTHONPATH": str(ROOT),
        }
    )
    airflow = str(Path(sys.executable).with_name("airflow"))
    migrate = subprocess.run([airflow, "db", "migrate"], env=env, capture_output=True,
                             text=True, timeout=300)  # fmt: skip
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    proc = subprocess.run([sys.executable, "-c", AUTH_PROBE], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)  # fmt: skip
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert proc.returncode == 0 and line, proc.stdout[-2000:] + proc.stderr[-3000:]
    out = json.loads(line[0][len("RESULT ") :])
    assert out["anonymous"] == 401 and "Sign in first" in out["anonymous_body"]
    assert out["anonymous_api"] == 401
    assert out["cookie"] == 200 and f'data-release-id="{seeded.blocked}"' in out["cookie_body"]
    assert 'href="/privacy/releases/' in out["cookie_body"]  # links work under the mount
    assert out["bearer"] == 200
    assert out["forged"] in (401, 403)
    assert out["no_role"] == 403


def test_pages_do_not_repeat_the_values_left_for_one_person(tmp_path: Path) -> None:
    from airflow_privacy.core.composition import PublishedRelease

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    reason = (
        "3 of the 40 people are pinned to their sensitive value. Worst: row 12: "
        "{'HIV'} left after intersecting a group age=3* with b v1 group age=30-39."
    )
    release = PublishedRelease.from_groups(["age"], "disease", [(["3*"], {"HIV": 1, "flu": 1})])
    with ReleaseLedger(url) as ledger:
        info = ledger.record("clinic", release, status="blocked", reasons=[reason])
    client = TestClient(create_app(auth=False, url=lambda: url))
    for page in ("/", f"/releases/{info.id}"):
        text = client.get(page).text
        assert "row 12 pinned down after intersecting a group age=3*" in text, page
        assert "HIV" not in text, page
    assert client.get(f"/api/releases/{info.id}").json()["reasons"] == [reason]  # as stored
