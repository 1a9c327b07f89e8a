"""The privacy UI's FastAPI app: its routes, their authentication and security headers
(:mod:`airflow_privacy.providers.airflow.plugin` describes the UI)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from airflow_privacy import __version__
from airflow_privacy.providers.airflow.ui_ledger import (
    RETRY_AFTER_S,
    NoLedger,
    OutdatedLedger,
    _scrub,
    _secrets,
    airflow_access,
    auth_mode,
    ledger_location,
    open_ledger,
)
from airflow_privacy.providers.airflow.ui_pages import (
    _e,
    _error_body,
    _facts_body,
    _is_uuid,
    _list_body,
    _nav,
    _one_line,
    _page,
    _release_href,
    _root,
    _short,
    _Shown,
    _shown,
    _widget_facts,
    _with_nav,
    redacted,
    shown_status,
)
from airflow_privacy.providers.airflow.urls import URL_PREFIX as URL_PREFIX  # re-exported
from airflow_privacy.report.theme import THEME_JS

if TYPE_CHECKING:
    from airflow_privacy.ledger import AttemptInfo, ReleaseInfo, ReleaseLedger
    from airflow_privacy.ledger.location import LedgerLocation

log = logging.getLogger(__name__)


LIST_FIELDS = ("id", "uuid", "dataset", "version", "status", "created_at", "updated_at",
               "published_at", "kind", "records", "groups")  # fmt: skip


# -------------------------------------------------------------------------------- the app
Locate = Callable[[], "LedgerLocation | str"]


#: Sent with every answer of the app. The pages load one script of the app's own (the
#: theme's, :mod:`airflow_privacy.report.theme`), no external style or image (inline CSS
#: and inline SVG only), so the policy allows nothing else; they may be framed by Airflow's
#: own UI (same origin: the "Privacy ledger" view, the run tab, the dashboard widget), by
#: nothing else.
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; "
        "form-action 'self'; frame-ancestors 'self'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "SAMEORIGIN",
    "Referrer-Policy": "same-origin",
}


def create_app(auth: bool | None = None, location: Locate | None = None) -> FastAPI:
    """The ledger app. ``auth``: require Airflow's authentication on every route (default:
    unless ``AIRFLOW_PRIVACY_UI_AUTH=none``); ``location``: where the ledger is, asked per
    request (default :func:`ledger_location`; a URL string is taken as it is)."""
    if auth is None:
        auth = auth_mode() == "airflow"
    deps = [Depends(airflow_access())] if auth else []
    app = FastAPI(
        title="airflow-privacy ledger",
        version=__version__,
        dependencies=deps,
        openapi_url=None,  # unauthenticated otherwise: served below, behind the dependency
        docs_url=None,
        redoc_url=None,
    )
    locate = location or ledger_location

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        """Every answer, pages, JSON and errors alike, with :data:`SECURITY_HEADERS`."""
        response: Response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    def where(request: Request) -> LedgerLocation:
        from airflow_privacy.ledger.location import LedgerLocation

        loc = locate()
        if isinstance(loc, str):
            loc = LedgerLocation(loc, "the app's configuration")
        request.state.ledger_secrets = _secrets(loc.url)
        return loc

    def run(request: Request, fn: Callable[[], Response | Any]) -> Any:
        """``fn``'s answer, or the error it raised as a page (or JSON under ``/api/``):
        400 bad input, 404 not found, 503 ledger unavailable, 500 anything else (logged,
        not shown)."""
        from airflow_privacy.errors import InputError, LedgerUnavailable, PrivacyGateError

        try:
            return fn()
        except HTTPException:
            raise
        except NoLedger as exc:
            raise HTTPException(404, str(exc)) from None
        except OutdatedLedger as exc:
            raise HTTPException(503, _one_line(str(exc))) from None
        except LedgerUnavailable as exc:
            raise HTTPException(
                503, _one_line(str(exc)), headers={"Retry-After": str(RETRY_AFTER_S)}
            ) from None
        except (InputError, PrivacyGateError) as exc:
            raise HTTPException(400, _one_line(str(exc))) from None
        except Exception:
            log.exception("privacy ledger view failed on %s", request.url.path)
            raise HTTPException(
                500, "the ledger view failed; the API server's log has the details"
            ) from None

    @app.exception_handler(StarletteHTTPException)
    def _error(request: Request, exc: StarletteHTTPException) -> Response:
        detail = _scrub(str(exc.detail), getattr(request.state, "ledger_secrets", ()))
        headers = dict(exc.headers or {})
        if "/api/" in request.url.path:
            return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=headers)
        body = _error_body(request, exc.status_code, detail, "Retry-After" in headers)
        return _page(
            f"Error {exc.status_code}", body, exc.status_code, headers, root=_root(request)
        )

    def find(db: ReleaseLedger, ref: str) -> ReleaseInfo:
        from airflow_privacy.errors import InputError
        from airflow_privacy.ledger.integrity import LedgerCorrupt

        try:
            return db.resolve(ref)
        except LedgerCorrupt:
            raise  # 400, named: the ledger, not the reference, is at fault
        except InputError as exc:
            raise HTTPException(404, _one_line(str(exc))) from None

    @app.get("/", response_class=HTMLResponse)
    def releases_page(
        request: Request, dataset: str | None = None, status: str | None = None
    ) -> Response:
        def go() -> Response:
            from airflow_privacy.ledger import STATUSES

            ds, st = dataset or None, status or None
            if st is not None and st not in STATUSES:
                raise HTTPException(400, f"unknown status {st!r} (known: {', '.join(STATUSES)})")
            loc = where(request)
            shown: list[_Shown] = []
            datasets: list[str] = []
            missing = None
            try:
                with open_ledger(loc) as db:
                    datasets = db.datasets()
                    rows = db.list(dataset=ds, status=st)
                    reports = db.report_times(r.id for r in rows)
                    shown = [_shown(db, r, reports.get(r.id)) for r in rows]
            except NoLedger as exc:
                missing = str(exc)
            body = _list_body(_root(request), shown, datasets, ds, st, missing)
            return _page("Privacy ledger: releases", body, root=_root(request))

        result: Response = run(request, go)
        return result

    @app.get("/releases/{ref}", response_class=HTMLResponse)
    def release_page(request: Request, ref: str, view: str | None = None) -> Response:
        def go() -> Response:
            with open_ledger(where(request)) as db:
                info = find(db, ref)
                stored = db.report(info.id)
                stored_at = db.report_times([info.id]).get(info.id)
                attempts = db.attempts(info.id)
                reported = db.reported_attempts(info.id)
            root = _root(request)
            status = shown_status(info, attempts)
            problem = None
            if stored is not None and view != "ledger":
                try:
                    from airflow_privacy.report import ReleaseReport, render_html

                    # redacted like the JSON route: a legacy reason never shows a person's values
                    document = render_html(ReleaseReport.from_dict(redacted(stored)))
                    return HTMLResponse(_with_nav(document, _nav(root, info, status), root))
                except Exception as exc:  # a report of another version, or tampered with
                    log.warning("stored report of release %s not shown: %s", info.uuid, exc)
                    problem = _short(f"{type(exc).__name__}: {exc}")
            body = _facts_body(root, info, status, attempts, stored, stored_at, problem, reported)
            return _page(f"Release #{info.id}: {info.dataset} v{info.version}", body, root=root)

        result: Response = run(request, go)
        return result

    def find_attempt(db: ReleaseLedger, ref: str) -> AttemptInfo:
        from airflow_privacy.errors import InputError

        if not _is_uuid(ref):  # by UUID only: attempt numbers are not enumerable here
            raise HTTPException(404, "an attempt is named by its UUID")
        try:
            return db.attempt(ref)
        except InputError as exc:
            raise HTTPException(404, _one_line(str(exc))) from None

    @app.get("/attempts/{ref}", response_class=HTMLResponse)
    def attempt_page(request: Request, ref: str) -> Response:
        """One attempt's own report (what the "Privacy report" link of its run opens); its
        release's page when it stored none."""

        def go() -> Response:
            with open_ledger(where(request)) as db:
                a = find_attempt(db, ref)
                stored = db.attempt_report(a.uuid)
                attempts = db.attempts(a.release.id)
            root = _root(request)
            info = a.release
            status = shown_status(info, attempts)
            if stored is None:
                return RedirectResponse(f"{_release_href(root, info)}?view=ledger", 303)
            from airflow_privacy.report import ReleaseReport, render_html

            document = render_html(ReleaseReport.from_dict(redacted(stored)))
            nav = _nav(root, info, status, attempt=a)
            return HTMLResponse(_with_nav(document, nav, root))

        result: Response = run(request, go)
        return result

    @app.get("/runs/{dag_id}/{run_id}", response_class=HTMLResponse)
    def run_page(request: Request, dag_id: str, run_id: str) -> Response:
        """A DAG run's tab: the report of the attempt the run opened (its latest when it
        opened several), or a page saying it opened none."""

        def go() -> Response:
            try:
                with open_ledger(where(request)) as db:
                    attempts = db.run_attempts(dag_id, run_id)
            except NoLedger:
                attempts = []
            if attempts:
                return RedirectResponse(f"{_root(request)}/attempts/{attempts[0].uuid}", 303)
            body = (
                "<h1>Privacy report of a run</h1>"
                f"<p id='no-attempt'>Run <code>{_e(run_id)}</code> of DAG "
                f"<code>{_e(dag_id)}</code> opened no attempt to publish a release "
                "(yet): nothing of it is in the ledger.</p>"
                f"<p><a href='{_e(_root(request))}/'>All releases</a></p>"
            )
            return _page("Privacy report of a run", body, root=_root(request))

        result: Response = run(request, go)
        return result

    @app.get("/theme.js", include_in_schema=False)
    def theme_js() -> Response:
        """The pages' only script: they follow Airflow's light and dark theme."""
        return Response(THEME_JS, media_type="text/javascript; charset=utf-8",
                        headers={"Cache-Control": "max-age=3600"})  # fmt: skip

    @app.get("/dashboard.js", include_in_schema=False)
    def dashboard_js() -> Response:
        """The dashboard widget's module (:mod:`airflow_privacy.providers.airflow.dashboard`)."""
        from airflow_privacy.providers.airflow.dashboard import DASHBOARD_JS

        return Response(DASHBOARD_JS, media_type="text/javascript; charset=utf-8")

    @app.get("/widget", response_class=HTMLResponse)
    def widget_page(request: Request) -> Response:
        """The dashboard widget: releases blocked, the last publication of each dataset, the
        DP budget left (ledger metadata only)."""

        def go() -> Response:
            from airflow_privacy.providers.airflow.dashboard import widget_body

            try:
                with open_ledger(where(request)) as db:
                    blocked, published, budgets = _widget_facts(db)
            except NoLedger:
                blocked, published, budgets = [], [], []
            body = widget_body(_root(request), blocked, published, budgets)
            return _page("Privacy releases", body, root=_root(request), widget=True)

        result: Response = run(request, go)
        return result

    @app.get("/api/attempts/{ref}/report")
    def attempt_report(request: Request, ref: str) -> dict[str, Any]:
        def go() -> dict[str, Any]:
            with open_ledger(where(request)) as db:
                a = find_attempt(db, ref)
                stored = db.attempt_report(a.uuid)
            if stored is None:
                raise HTTPException(404, f"attempt {a.uuid} has no stored report")
            data: dict[str, Any] = redacted(stored)
            return data

        result: dict[str, Any] = run(request, go)
        return result

    @app.get("/api/releases")
    def releases(
        request: Request, dataset: str | None = None, status: str | None = None
    ) -> list[dict[str, Any]]:
        def go() -> list[dict[str, Any]]:
            out = []
            try:
                with open_ledger(where(request)) as db:
                    rows = db.list(dataset=dataset or None, status=status or None)
                    reports = db.report_times(r.id for r in rows)
                    for r in rows:
                        row = _shown(db, r, reports.get(r.id))
                        d = r.to_dict()
                        item = {k: d[k] for k in LIST_FIELDS}
                        item["status"] = row.status
                        item["reasons"] = row.reasons + ([row.superseded] if row.superseded else [])
                        item["report_stored_at"] = row.report_at
                        out.append(item)
            except NoLedger:
                return []
            data: list[dict[str, Any]] = redacted(out)
            return data

        result: list[dict[str, Any]] = run(request, go)
        return result

    @app.get("/api/releases/{ref}")
    def release(request: Request, ref: str) -> dict[str, Any]:
        def go() -> dict[str, Any]:
            with open_ledger(where(request)) as db:
                info = find(db, ref)
                attempts = db.attempts(info.id)
                stored_at = db.report_times([info.id]).get(info.id)
            d = info.to_dict()  # key_fingerprint: "recorded" or None, never the value
            d["status"] = shown_status(info, attempts)
            d["attempts"] = [a.public_dict() for a in attempts]
            d["report_stored_at"] = stored_at
            data: dict[str, Any] = redacted(d)
            return data

        result: dict[str, Any] = run(request, go)
        return result

    @app.get("/api/releases/{ref}/report")
    def release_report(request: Request, ref: str) -> dict[str, Any]:
        def go() -> dict[str, Any]:
            with open_ledger(where(request)) as db:
                info = find(db, ref)
                stored = db.report(info.id)
            if stored is None:
                raise HTTPException(404, f"release {info.uuid} has no stored report")
            data: dict[str, Any] = redacted(stored)
            return data

        result: dict[str, Any] = run(request, go)
        return result

    @app.get("/api/openapi.json", include_in_schema=False)
    def openapi() -> dict[str, Any]:
        return app.openapi()

    return app
