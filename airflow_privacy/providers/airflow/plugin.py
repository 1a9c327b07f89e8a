"""``AirflowPrivacyPlugin``: the privacy ledger in the Airflow 3 UI, read-only.

The plugin mounts a FastAPI app under ``/privacy`` in the API server (``fastapi_apps``) and
adds "Privacy ledger" to the UI's Browse menu (``external_views``, shown in an iframe):

* ``GET /privacy/``: the releases (status, dataset, version, date, verdict and reasons),
  filtered by dataset and status through a plain GET form;
* ``GET /privacy/releases/{id}``: the release's stored report (the HTML of
  :func:`airflow_privacy.report.render_html`), or the ledger's facts when none is stored;
* ``GET /privacy/api/releases`` (filters ``dataset``, ``status``),
  ``GET /privacy/api/releases/{id}`` and ``GET /privacy/api/releases/{id}/report``: JSON.

Pages are server-rendered HTML without scripts or external resources; every ledger string
is escaped, and reasons are shown as the report shows them (a composition witness's values
left for one person are not repeated; the JSON API returns the ledger as it is). No route
writes. The ledger is the one named by ``AIRFLOW_PRIVACY_LEDGER_URL``,
else the ``privacy_ledger_default`` connection's, else the SQLite file under
``AIRFLOW_HOME`` (the default of :class:`PrivacyLedgerHook`).

Authentication: Airflow does not authenticate plugin apps (they are mounted apart from its
own routes), so this app does it with what Airflow offers plugins: the API server's
``get_user`` dependency (the UI's session cookie or a ``Bearer`` token) and the auth
manager's ``is_authorized_custom_view(method="GET", resource_name="Privacy Ledger")``.
``AIRFLOW_PRIVACY_UI_AUTH=none`` turns that off, for a deployment that authenticates in
front of the API server (docs/ui.md).
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from airflow_privacy import __version__

URL_PREFIX = "/privacy"
RESOURCE_NAME = "Privacy Ledger"  # the custom view the auth manager authorizes
AUTH_ENV = "AIRFLOW_PRIVACY_UI_AUTH"
AUTH_MODES = ("airflow", "none")
EXTERNAL_VIEW: dict[str, Any] = {
    "name": "Privacy ledger",
    "href": "privacy/",  # relative to the UI's base URL (no leading slash)
    "url_route": "privacy-ledger",  # shown inside the UI at /plugin/privacy-ledger
    "destination": "nav",
    "category": "browse",
}
STATUS_TEXT = {
    "published": "✓ PUBLISHED",
    "blocked": "✗ BLOCKED",
    "candidate": "… CANDIDATE",
}


def ledger_url() -> str:
    """The ledger the UI reads: ``$AIRFLOW_PRIVACY_LEDGER_URL``, else the default
    connection's URL, else the SQLite file under ``AIRFLOW_HOME``."""
    from airflow_privacy.providers.airflow.hooks.ledger import default_ledger_path

    url = os.environ.get("AIRFLOW_PRIVACY_LEDGER_URL")
    if url:
        return url
    try:
        from airflow_privacy.providers.airflow.hooks.ledger import PrivacyLedgerHook

        return PrivacyLedgerHook().url().render_as_string(hide_password=False)
    except Exception:  # no connection store reachable here: the hook's default file
        return f"sqlite:///{default_ledger_path()}"


def auth_mode() -> str:
    mode = (os.environ.get(AUTH_ENV) or "airflow").strip().lower()
    if mode not in AUTH_MODES:
        raise ValueError(f"{AUTH_ENV} must be one of {', '.join(AUTH_MODES)}, got {mode!r}")
    return mode


def airflow_access() -> Callable[..., None]:
    """A FastAPI dependency: Airflow's authenticated user, authorized by the auth manager
    to GET the custom view ``Privacy Ledger`` (401 without a valid session or token, 403
    without the permission). Imports the API server's security module: call it there."""
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.core_api.security import get_user

    def require(user: Any = Depends(get_user)) -> None:  # noqa: B008  (FastAPI's idiom)
        allowed = get_auth_manager().is_authorized_custom_view(
            method="GET", resource_name=RESOURCE_NAME, user=user
        )
        if not allowed:
            raise HTTPException(status_code=403, detail="Forbidden")

    return require


def create_app(auth: bool | None = None, url: Callable[[], str] = ledger_url) -> FastAPI:
    """The ledger app. ``auth``: require Airflow's authentication (default: unless
    ``AIRFLOW_PRIVACY_UI_AUTH=none``); ``url``: where the ledger is (read per request)."""
    if auth is None:
        auth = auth_mode() == "airflow"
    deps = [Depends(airflow_access())] if auth else []
    app = FastAPI(
        title="airflow-privacy ledger",
        version=__version__,
        dependencies=deps,
        docs_url=None,
        redoc_url=None,
    )

    @app.exception_handler(HTTPException)
    def _error(request: Request, exc: HTTPException) -> Response:
        if "/api/" in request.url.path:
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code)
        return _page(f"Error {exc.status_code}", _error_body(request, exc), exc.status_code)

    def ledger(create: bool = False) -> Any:
        from airflow_privacy.ledger import ReleaseLedger

        return ReleaseLedger(url(), create=create)

    @app.get("/", response_class=HTMLResponse)
    def releases_page(
        request: Request, dataset: str | None = None, status: str | None = None
    ) -> Response:
        from airflow_privacy.errors import InputError
        from airflow_privacy.ledger import STATUSES

        dataset = dataset or None
        status = status or None
        if status is not None and status not in STATUSES:
            raise HTTPException(400, f"unknown status {status!r} (known: {', '.join(STATUSES)})")
        try:
            with ledger() as db:
                everything = db.list()
                rows = db.list(dataset=dataset, status=status)
                reports = db.report_times(r.id for r in rows)
        except InputError as exc:
            if "does not exist" not in str(exc):
                raise HTTPException(400, str(exc)) from None
            everything, rows, reports = [], [], {}
        datasets = sorted({r.dataset for r in everything})
        body = _list_body(_root(request), rows, reports, datasets, dataset, status)
        return _page("Privacy ledger: releases", body)

    @app.get("/releases/{release_id}", response_class=HTMLResponse)
    def release_page(request: Request, release_id: int) -> Response:
        from airflow_privacy.errors import InputError

        try:
            with ledger() as db:
                info = db.info(release_id)
                stored = db.report(release_id)
                stored_at = db.report_times([release_id]).get(release_id)
        except InputError as exc:
            raise HTTPException(404, str(exc)) from None
        root = _root(request)
        problem = None
        if stored is not None:
            try:
                from airflow_privacy.report import ReleaseReport, render_html

                document = render_html(ReleaseReport.from_dict(stored))
                return HTMLResponse(_with_nav(document, _nav(root, info.id)))
            except Exception as exc:  # a report stored by another version: say so
                problem = f"{type(exc).__name__}: {exc}"
        body = _facts_body(root, info.to_dict(), stored_at, problem)
        return _page(f"Release #{info.id}: {info.dataset} v{info.version}", body)

    @app.get("/api/releases")
    def releases(dataset: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
        from airflow_privacy.errors import InputError

        try:
            with ledger() as db:
                rows = db.list(dataset=dataset, status=status)
        except InputError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        keep = ("id", "dataset", "version", "status", "created_at", "updated_at", "kind",
                "records", "groups", "reasons")  # fmt: skip
        return [{k: r.to_dict()[k] for k in keep} for r in rows]

    @app.get("/api/releases/{release_id}")
    def release(release_id: int) -> dict[str, Any]:
        from airflow_privacy.errors import InputError

        try:
            with ledger() as db:
                info: dict[str, Any] = db.info(release_id).to_dict()
                return info
        except InputError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from None

    @app.get("/api/releases/{release_id}/report")
    def release_report(release_id: int) -> dict[str, Any]:
        from airflow_privacy.errors import InputError

        try:
            with ledger() as db:
                stored = db.report(release_id)
        except InputError as exc:
            raise HTTPException(status_code=404, detail=str(exc)) from None
        if stored is None:
            raise HTTPException(status_code=404, detail=f"release #{release_id} has no report")
        out: dict[str, Any] = stored
        return out

    return app


# ---------------------------------------------------------------------------- HTML pages
_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1a1a1a; background: #fff;
       line-height: 1.45; }
h1 { font-size: 1.5rem; margin-top: 0; }
table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
caption { text-align: left; font-weight: 600; padding-bottom: .4rem; }
th, td { border: 1px solid #999; padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td { overflow-wrap: anywhere; }
td.date { white-space: nowrap; }
.table-wrap { overflow-x: auto; }
.status { font-weight: 700; white-space: nowrap; }
.status-published { color: #0a5d1f; }
.status-blocked { color: #9b1111; }
.status-candidate { color: #5b4a00; }
form { display: flex; gap: 1rem; align-items: end; flex-wrap: wrap; }
label { display: flex; flex-direction: column; font-weight: 600; }
select, button { font: inherit; padding: .2rem .4rem; }
nav.privacy-nav { margin-bottom: 1rem; padding: .5rem; border: 1px solid #999; }
ul.reasons { margin: 0; padding-left: 1.2rem; }
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _root(request: Request) -> str:
    """The app's own path prefix (``/privacy`` when mounted by Airflow): absolute links."""
    return str(request.scope.get("root_path") or "").rstrip("/")


def _page(title: str, body: str, status_code: int = 200) -> HTMLResponse:
    doc = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n<main>\n"
        f"{body}\n</main>\n</body>\n</html>\n"
    )
    return HTMLResponse(doc, status_code=status_code)


def _status(status: str) -> str:
    text = STATUS_TEXT.get(status, status.upper())
    return f'<span class="status status-{_e(status)}">{_e(text)}</span>'


def _date(iso: str) -> str:
    """``2026-11-22T07:53:21+00:00`` -> ``2026-11-22 07:53 UTC``."""
    m = re.match(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d)", iso)
    return f"{m.group(1)} {m.group(2)} UTC" if m else iso


def _redacted(reasons: Iterable[str]) -> list[str]:
    """Reasons as the report shows them: a composition witness's values left for one person
    are not repeated (:func:`airflow_privacy.report.checks.redact`)."""
    from airflow_privacy.report.checks import redact

    return [redact(str(r)) for r in reasons]


def _verdict(status: str, reasons: list[str]) -> str:
    reasons = _redacted(reasons)
    if status == "published":
        return "every check passed; published"
    if status == "candidate":
        return "recorded, not yet published or blocked"
    if not reasons:
        return "blocked (no reason recorded)"
    shown = reasons[:3]
    items = "".join(f"<li>{_e(_short(r))}</li>" for r in shown)
    more = f"<li>and {len(reasons) - 3} more reason(s)</li>" if len(reasons) > 3 else ""
    return f'<ul class="reasons">{items}{more}</ul>'


def _short(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _options(values: Iterable[str], chosen: str | None, anything: str) -> str:
    opts = [f'<option value=""{" selected" if chosen is None else ""}>{_e(anything)}</option>']
    for v in values:
        sel = " selected" if v == chosen else ""
        opts.append(f'<option value="{_e(v)}"{sel}>{_e(v)}</option>')
    return "".join(opts)


def _list_body(
    root: str,
    rows: list[Any],
    reports: dict[int, str],
    datasets: list[str],
    dataset: str | None,
    status: str | None,
) -> str:
    from airflow_privacy.ledger import STATUSES

    shown = [d for d in datasets] + ([dataset] if dataset and dataset not in datasets else [])
    form = (
        f'<form method="get" action="{_e(root)}/" aria-label="Filter releases">'
        f'<label for="f-dataset">Dataset<select id="f-dataset" name="dataset">'
        f"{_options(shown, dataset, 'all datasets')}</select></label>"
        f'<label for="f-status">Status<select id="f-status" name="status">'
        f"{_options(STATUSES, status, 'any status')}</select></label>"
        '<button type="submit">Filter</button>'
        f'<a href="{_e(root)}/">Clear filters</a></form>'
    )
    what = []
    if dataset:
        what.append(f"dataset {dataset!r}")
    if status:
        what.append(f"status {status}")
    caption = f"{len(rows)} release(s)" + (f" with {' and '.join(what)}" if what else "")
    if not rows:
        table = f'<p id="no-releases">No releases{" match these filters" if what else ""}.</p>'
    else:
        columns = ("Release", "Dataset", "Version", "Status", "Recorded", "Records",
                   "Verdict and reasons", "Report")  # fmt: skip
        head = "".join(f'<th scope="col">{h}</th>' for h in columns)
        body = []
        for r in rows:
            link = f'<a href="{_e(root)}/releases/{r.id}">#{r.id}</a>'
            stored = reports.get(r.id)
            rep = (
                f'<a href="{_e(root)}/releases/{r.id}">read the report</a> '
                f'<span class="date">(stored {_e(_date(stored))})</span>'
                if stored
                else "none stored"
            )
            body.append(
                f'<tr data-release-id="{r.id}"><th scope="row">{link}</th>'
                f"<td>{_e(r.dataset)}</td><td>{_e(r.version)}</td><td>{_status(r.status)}</td>"
                f'<td class="date">{_e(_date(r.created_at))}</td>'
                f'<td class="num">{r.records:,} records</td>'
                f"<td>{_verdict(r.status, list(r.reasons))}</td><td>{rep}</td></tr>"
            )
        table = (
            f'<div class="table-wrap"><table id="releases"><caption>{_e(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
        )
    return (
        "<h1>Privacy ledger: releases</h1>"
        "<p>What was published, what was blocked and why. Open a release for its report."
        f' Machine-readable: <a href="{_e(root)}/api/releases">JSON</a>.</p>'
        f"{form}{table}"
    )


def _nav(root: str, release_id: int) -> str:
    return (
        '<nav class="privacy-nav" aria-label="Privacy ledger" '
        'style="font-family: system-ui, sans-serif; margin: 0 0 1rem 0; padding: .5rem; '
        'border: 1px solid #999;">'
        f'<a href="{_e(root)}/">← All releases</a> · '
        f'<a href="{_e(root)}/api/releases/{release_id}/report">This report as JSON</a></nav>'
    )


def _with_nav(document: str, nav: str) -> str:
    """The report document with the ledger's navigation at the top of its body."""
    m = re.search(r"<body[^>]*>", document, flags=re.IGNORECASE)
    if m is None:
        return nav + document
    return document[: m.end()] + nav + document[m.end() :]


def _facts_body(root: str, info: dict[str, Any], stored_at: str | None, problem: str | None) -> str:
    rows = [
        ("Release", f"#{info['id']}"),
        ("Dataset", info["dataset"]),
        ("Version", info["version"]),
        ("Status", None),
        ("Recorded", _date(info["created_at"])),
        ("Last change", _date(info["updated_at"])),
        ("Kind", info["kind"]),
        ("Sensitive column", info["sensitive"]),
        ("Quasi-identifiers", ", ".join(info["qis"])),
        ("Records", f"{info['records']:,} records"),
        ("Groups", f"{info['groups']:,} groups"),
        ("Content hash", info["content_hash"]),
    ]
    cells = []
    for name, value in rows:
        shown = _status(info["status"]) if value is None else _e(value)
        cells.append(f'<tr><th scope="row">{_e(name)}</th><td>{shown}</td></tr>')
    reasons = _redacted(info.get("reasons") or [])
    why = (
        "<h2>Reasons</h2><ul>" + "".join(f"<li>{_e(r)}</li>" for r in reasons) + "</ul>"
        if reasons
        else ""
    )
    note = (
        f'<p id="no-report">The stored report (of {_e(_date(stored_at or ""))}) could not be '
        f"read: {_e(problem)}.</p>"
        if problem
        else '<p id="no-report">No report stored for this release. The DAG\'s '
        "<code>release_report</code> task stores one when it runs.</p>"
    )
    return (
        f'<nav class="privacy-nav" aria-label="Privacy ledger"><a href="{_e(root)}/">'
        "← All releases</a></nav>"
        f"<h1>Release #{_e(info['id'])}: {_e(info['dataset'])} v{_e(info['version'])}</h1>"
        f"{note}"
        f'<table id="facts"><caption>What the ledger holds</caption><tbody>{"".join(cells)}'
        f"</tbody></table>{why}"
    )


def _error_body(request: Request, exc: HTTPException) -> str:
    root = _root(request)
    if exc.status_code == 401:
        home = root[: -len(URL_PREFIX)] + "/" if root.endswith(URL_PREFIX) else "/"
        return (
            "<h1>Sign in first</h1><p>The privacy ledger is shown to signed-in Airflow users."
            f' <a href="{_e(home)}">Open Airflow and sign in</a>, then come back.</p>'
        )
    if exc.status_code == 403:
        return (
            "<h1>Not allowed</h1><p>Your Airflow role may not read the privacy ledger "
            f"(permission: GET on the custom view {_e(RESOURCE_NAME)!s}).</p>"
        )
    return (
        f"<h1>Error {exc.status_code}</h1><p>{_e(exc.detail)}</p>"
        f'<p><a href="{_e(root)}/">All releases</a></p>'
    )


# ---------------------------------------------------------------------------------- plugin
@cache
def _plugin_app() -> FastAPI:
    return create_app()


class _LazyApps:
    """``fastapi_apps`` built on first access, in the API server (the app imports Airflow's
    security module). A descriptor, not a property: Airflow registers a provider's plugin
    as the class itself and a plugins-folder plugin as an instance; both read it."""

    def __get__(self, obj: object, owner: type | None = None) -> list[dict[str, Any]]:
        return [{"app": _plugin_app(), "url_prefix": URL_PREFIX, "name": "Privacy ledger"}]


class AirflowPrivacyPlugin(AirflowPlugin):
    """Registers the ledger view under ``/privacy`` in the Airflow 3 API server and the
    "Privacy ledger" entry of the UI's Browse menu."""

    name = "airflow_privacy"
    fastapi_apps = _LazyApps()
    external_views = [EXTERNAL_VIEW]  # noqa: RUF012  (AirflowPlugin's declared attribute)
