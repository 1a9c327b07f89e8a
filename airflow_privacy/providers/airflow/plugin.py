"""``AirflowPrivacyPlugin``: the privacy ledger in the Airflow 3 UI, read-only.

The plugin mounts a FastAPI app under ``/privacy`` in the API server (``fastapi_apps``) and
adds "Privacy ledger" to the UI's Browse menu (``external_views``, shown in an iframe):

* ``GET /privacy/``: the releases (status as shown: published, publishing, blocked,
  superseded or candidate; dataset, version, date, verdict and reasons), filtered by dataset
  and status through a plain GET form;
* ``GET /privacy/releases/{uuid}`` (an integer id is accepted too; every link uses the
  UUID): the release's stored report (the HTML of :func:`airflow_privacy.report.render_html`),
  or, without one (or with ``?view=ledger``), what the ledger holds: the release's facts and
  every attempt to publish it with its status, reasons, checks and verdicts, and who set a
  blocked attempt aside, when and why;
* ``GET /privacy/api/releases`` (filters ``dataset``, ``status``),
  ``GET /privacy/api/releases/{uuid}`` (with its attempts) and
  ``GET /privacy/api/releases/{uuid}/report``: JSON;
* ``GET /privacy/api/openapi.json``: the app's OpenAPI description (FastAPI's own
  ``/openapi.json``, ``/docs`` and ``/redoc`` are turned off: they would not be
  authenticated).

Pages are server-rendered HTML without scripts or external resources; every value from the
ledger or a stored report (text and numbers alike) is escaped, and a stored report that does
not have the declared types is not rendered (the facts page says why). Reasons are shown,
in the pages and in the JSON, as the report shows them: a composition witness's values left
for one person are not repeated (:func:`airflow_privacy.report.checks.redact`); the key
fingerprint of identifier hashes is never returned; a stored report is redacted the same way
(:func:`redacted`) before it is rendered or returned.

The status shown is the latest attempt's when it matters: once the gate has decided, the
release's content counts as published, but until its files are copied its attempt is
``publishing``, and the release is shown as "publishing (files not yet in place)", never as
published.

No route writes. Reading never creates a ledger (``create=False``): a missing ledger is an
empty list saying so; nor does it migrate one (``migrate=False``): a ledger at an older
schema revision answers 503 saying it must be migrated first (any ``airflow-privacy`` command
that opens it does, e.g. ``airflow-privacy ledger list --ledger URL``, or the DAG's next run);
a GET never runs DDL on the ledger.

Which ledger: resolved in one place, :func:`airflow_privacy.ledger.location.resolve`, with
Airflow's connections as the API server sees them (``$AIRFLOW_PRIVACY_LEDGER_URL``, else the
connection ``privacy_ledger_default``, else ``$AIRFLOW_HOME/privacy_ledger.db``), per
request. A ledger that cannot be reached (a database down) answers 503 with the reason in
one line; database passwords never appear in a page or a JSON error.

Authentication: Airflow does not authenticate plugin apps (they are mounted apart from its
own routes), so this app does it with what Airflow offers plugins: the API server's
``get_user`` dependency (the UI's session cookie or a ``Bearer`` token) and the auth
manager's ``is_authorized_custom_view(method="GET", resource_name="Privacy Ledger")``, on
every route. ``AIRFLOW_PRIVACY_UI_AUTH=none`` turns that off, for a deployment that
authenticates in front of the API server (docs/ui.md); any other value than ``airflow`` or
``none`` is logged as an error and read as ``airflow`` (fail closed, the server still
starts).
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from airflow.plugins_manager import AirflowPlugin
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from airflow_privacy import __version__
from airflow_privacy.providers.airflow.dashboard import DASHBOARD_APP
from airflow_privacy.providers.airflow.urls import URL_PREFIX as URL_PREFIX  # re-exported
from airflow_privacy.report.theme import THEME_JS, dark_css

if TYPE_CHECKING:
    from airflow_privacy.ledger import AttemptInfo, ReleaseInfo, ReleaseLedger
    from airflow_privacy.ledger.location import ConnectionFields, LedgerLocation

log = logging.getLogger(__name__)

RESOURCE_NAME = "Privacy Ledger"  # the custom view the auth manager authorizes
AUTH_ENV = "AIRFLOW_PRIVACY_UI_AUTH"
AUTH_MODES = ("airflow", "none")
EXTERNAL_VIEW: dict[str, Any] = {
    "name": "Privacy ledger",
    "href": URL_PREFIX.strip("/") + "/",  # relative to the UI's base URL (no leading slash)
    "url_route": "privacy-ledger",  # shown inside the UI at /plugin/privacy-ledger
    "destination": "nav",
    "category": "browse",
}
RUN_VIEW: dict[str, Any] = {
    "name": "Privacy report",
    # the UI fills in the run: a tab of every DAG run, the report of the attempt it opened
    "href": URL_PREFIX.strip("/") + "/runs/{DAG_ID}/{RUN_ID}",
    "url_route": "privacy-report",
    "destination": "dag_run",
}
TASK_VIEW: dict[str, Any] = {
    "name": "Privacy report",
    # a tab of every task instance too: the report of the attempt its run opened
    "href": URL_PREFIX.strip("/") + "/runs/{DAG_ID}/{RUN_ID}",
    "url_route": "privacy-report-task",
    "destination": "task_instance",
}
STATUS_TEXT = {
    "published": "✓ PUBLISHED",
    "blocked": "✗ BLOCKED",
    "superseded": "↷ SUPERSEDED",
    "candidate": "… CANDIDATE",
    # attempts
    "open": "… OPEN",
    "publishing": "… PUBLISHING (files not yet in place)",
    "already-published": "✓ ALREADY PUBLISHED",
}
VERDICT_TEXT = {True: "✓ PASSED", False: "✗ FAILED", None: "– NO VERDICT"}
RETRY_AFTER_S = 30
#: how to bring a ledger to this version's schema (the UI never does it: reading is read-only)
MIGRATE_HINT = (
    "airflow-privacy ledger list --ledger <its URL> (any airflow-privacy command that opens "
    "the ledger migrates it; so does the DAG's next run)"
)


# ------------------------------------------------------------------------ configuration
def auth_mode() -> str:
    """``airflow`` (the default) or ``none``. Anything else fails closed: it is logged as an
    error and read as ``airflow``, so a typo never opens the ledger nor stops the server."""
    from airflow_privacy.providers.airflow.config import setting

    raw = setting("ui_auth")  # $AIRFLOW_PRIVACY_UI_AUTH, else [privacy] ui_auth
    mode = (raw or "airflow").strip().lower()
    if mode not in AUTH_MODES:
        log.error(
            "%s=%r is not one of %s: authentication stays on (read as 'airflow')",
            AUTH_ENV,
            (raw or "")[:40],
            ", ".join(AUTH_MODES),
        )
        return "airflow"
    return mode


def airflow_connection(conn_id: str) -> ConnectionFields | None:
    """A connection as the API server sees it (Airflow's secrets backends and metadata
    database); None when it is not defined. A connection store that cannot be read is
    :class:`~airflow_privacy.errors.LedgerUnavailable` (retry later), never "not defined"."""
    from airflow.models.connection import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException

    from airflow_privacy.errors import LedgerUnavailable
    from airflow_privacy.ledger.location import ConnectionFields

    try:
        conn = Connection.get_connection_from_secrets(conn_id)
        extra = conn.extra_dejson or {}
        fields = ConnectionFields(
            conn_id=conn_id,
            host=conn.host,
            port=conn.port,
            schema=conn.schema,
            login=conn.login,
            password=conn.password,
            extra=extra if isinstance(extra, dict) else {},
        )
    except AirflowNotFoundException:
        return None
    except Exception as exc:  # the metadata database or a secrets backend is down
        log.warning("cannot read connection %r: %s", conn_id, type(exc).__name__, exc_info=True)
        raise LedgerUnavailable(
            f"Airflow's connection {conn_id!r} cannot be read now ({type(exc).__name__}); "
            "try again later"
        ) from None
    return fields


def ledger_location() -> LedgerLocation:
    """The ledger the UI reads (module doc): the one resolution of
    :func:`airflow_privacy.ledger.location.resolve`, over Airflow's connections."""
    from airflow_privacy.ledger.location import resolve
    from airflow_privacy.providers.airflow.config import setting

    return resolve(None, lookup=airflow_connection, config=setting)


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


# ----------------------------------------------------------------------------- reading
class NoLedger(Exception):
    """No ledger at the location yet (a missing SQLite file, a database without ledger
    tables): nothing has been recorded there."""

    def __init__(self, where: str) -> None:
        super().__init__(f"no ledger yet at {where}: nothing has been recorded there")
        self.where = where


_MISSING = ("holds no ledger yet", "does not exist: nothing has been recorded")


def _secrets(url: str) -> list[str]:
    """The passwords in a ledger URL (``user:pass@``, ``?password=``), to scrub from any
    message as a second line of defence (messages already use the masked URL)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # an unparsable URL: nothing we can pick out safely
        return []
    found = [str(parsed.password)] if parsed.password else []
    for key, value in parsed.query.items():
        if "pass" in key.lower() or "secret" in key.lower():
            found.extend([value] if isinstance(value, str) else list(value))
    return [s for s in found if s and len(s) >= 3]


def _scrub(text: str, secrets: Sequence[str]) -> str:
    for s in secrets:
        text = text.replace(s, "***")
    return text


class OutdatedLedger(Exception):
    """The ledger's schema is not this version's: the UI does not migrate it (a GET never
    runs DDL on the ledger). 503, without ``Retry-After``: waiting does not fix it."""


@contextmanager
def open_ledger(location: LedgerLocation) -> Iterator[ReleaseLedger]:
    """The ledger at ``location``, read-only and never migrated: :class:`NoLedger` when there
    is none yet (never created), :class:`OutdatedLedger` when its schema is not this
    version's."""
    from airflow_privacy.errors import InputError
    from airflow_privacy.ledger import ReleaseLedger
    from airflow_privacy.ledger.engine import sqlite_exists

    where = location.display
    try:
        exists = sqlite_exists(location.url)
    except InputError:
        exists = None  # not a URL we can read: opening says why
    if exists is False:
        raise NoLedger(where)
    try:
        db = ReleaseLedger(location.url, create=False, migrate=False, key_env=location.key_env)
    except InputError as exc:
        if any(m in str(exc) for m in _MISSING):
            raise NoLedger(where) from None
        raise
    with db:
        _check_schema(db, where)
        yield db


def _check_schema(db: ReleaseLedger, where: str) -> None:
    """Read the ledger's schema revision (no DDL): at this version's head, or why not."""
    from sqlalchemy import inspect

    from airflow_privacy.errors import InputError
    from airflow_privacy.ledger.engine import READ, classify, url_secrets
    from airflow_privacy.ledger.migrate import current, head, known_revisions

    try:
        with db.engine.connect().execution_options(**READ) as conn, conn.begin():
            has_tables = inspect(conn).has_table("ledger_releases")
            rev = current(conn)
    except Exception as exc:  # a database down, a file that is not a database
        mapped = classify(exc, db.url, url_secrets(db.engine.url))
        if mapped is None:
            raise
        raise mapped from None
    target = head()
    if rev == target:
        return
    if rev is None:
        if has_tables:
            raise InputError(
                f"{where} has tables named like a ledger's but no ledger revision: it is not "
                "a ledger airflow-privacy wrote"
            )
        raise NoLedger(where)
    if rev not in known_revisions():
        raise OutdatedLedger(
            f"the ledger at {where} is at schema revision {rev!r}, written by a newer "
            f"airflow-privacy than the API server's (newest known: {target!r}): upgrade "
            "airflow-privacy on the API server"
        )
    raise OutdatedLedger(
        f"the ledger at {where} is at schema revision {rev!r}, older than this "
        f"airflow-privacy's {target!r}: it must be migrated before the UI can read it, and "
        f"the UI never changes the ledger. Migrate it with {MIGRATE_HINT}"
    )


@dataclass(frozen=True)
class _Shown:
    """A release as the list shows it: its info, its status as shown (:func:`shown_status`),
    the reasons of its status, when its report was stored."""

    info: ReleaseInfo
    status: str
    reasons: list[str]
    superseded: str | None
    report_at: str | None


def shown_status(info: ReleaseInfo, attempts: Sequence[AttemptInfo]) -> str:
    """The status a release is shown with: the ledger's (``published``, ``blocked``,
    ``superseded``, ``candidate``), except that content the gate allowed is ``publishing``
    while the attempt that published it has not yet put the files in place (the copy
    failed or is under way: the run is red, and re-running the publish task finishes it)."""
    if info.status == "published" and any(a.status == "publishing" for a in attempts):
        return "publishing"
    return info.status


def _shown(db: ReleaseLedger, info: ReleaseInfo, report_at: str | None) -> _Shown:
    """A release as the list shows it: the status from its attempts (:func:`shown_status`),
    the reasons behind it (the latest attempt's for blocked / superseded) and, when
    superseded, who set it aside, when and why."""
    attempts = db.attempts(info.id)
    status = shown_status(info, attempts)
    reasons = list(info.reasons)
    note = None
    if info.status in ("blocked", "superseded") and attempts:
        last = attempts[-1]
        note = _superseded_text(last) if last.status == "superseded" else None
        reasons = list(last.reasons) or reasons
    return _Shown(info, status, reasons, note, report_at)


def _superseded_text(a: AttemptInfo) -> str:
    return (
        f"superseded by {a.superseded_by or 'unknown'} on {_date(a.superseded_at or '')}: "
        f"{a.supersede_reason or 'no reason recorded'}"
    )


def redacted(value: Any) -> Any:
    """``value`` with :func:`airflow_privacy.report.checks.redact` applied to every string
    (the values a legacy composition reason left for one person are removed)."""
    from airflow_privacy.core.redaction import redact

    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value


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


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(text.split())
    return _short(line, limit)


# ---------------------------------------------------------------------------- HTML pages
_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1a1a1a; background: #fff;
       line-height: 1.45; }
h1 { font-size: 1.5rem; margin-top: 0; }
h2 { font-size: 1.2rem; margin-top: 1.5rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .3rem; }
table { border-collapse: collapse; width: 100%; margin-top: 1rem; }
caption { text-align: left; font-weight: 600; padding-bottom: .4rem; }
th, td { border: 1px solid #999; padding: .35rem .5rem; text-align: left; vertical-align: top; }
th { background: #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td { overflow-wrap: anywhere; }
td.date, .date, td.step { white-space: nowrap; }
td > p { margin: 0 0 .3rem; }
.table-wrap { overflow-x: auto; }
.status { font-weight: 700; white-space: nowrap; }
.status-published, .status-already-published, .verdict-passed { color: #0a5d1f; }
.status-blocked, .verdict-failed { color: #9b1111; }
.status-superseded { color: #4a3a7a; }
.status-candidate, .status-open, .status-publishing { color: #5b4a00; }
.verdict { font-weight: 700; white-space: nowrap; }
form { display: flex; gap: 1rem; align-items: end; flex-wrap: wrap; }
label { display: flex; flex-direction: column; font-weight: 600; }
select, button { font: inherit; padding: .2rem .4rem; }
nav.privacy-nav { margin-bottom: 1rem; padding: .5rem; border: 1px solid #999; }
ul.reasons { margin: 0; padding-left: 1.2rem; }
section.attempt { border-top: 2px solid #999; margin-top: 1.2rem; }
p.notice { padding: .5rem; border: 1px solid #999; background: #f6f6f6; }
""" + dark_css([
    ("body", "color: #e4e6ea; background: #16191d;"),
    ("th", "background: #2a2f36;"),
    ("th, td, nav.privacy-nav, p.notice", "border-color: #5d646e;"),
    ("section.attempt", "border-top-color: #5d646e;"),
    ("p.notice", "background: #23272e;"),
    ("a", "color: #8ab4f8;"),
    ("a:visited", "color: #c58af9;"),
    (".status-published, .status-already-published, .verdict-passed", "color: #7ee2a0;"),
    (".status-blocked, .verdict-failed", "color: #ff9a9a;"),
    (".status-superseded", "color: #c6b8ff;"),
    (".status-candidate, .status-open, .status-publishing", "color: #f2d36b;"),
])  # fmt: skip


def _is_uuid(text: str) -> bool:
    import uuid

    try:
        return str(uuid.UUID(text)) == text.lower()
    except ValueError:
        return False


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _root(request: Request) -> str:
    """The app's own path prefix (``/privacy`` when mounted by Airflow): absolute links."""
    return str(request.scope.get("root_path") or "").rstrip("/")


def _page(
    title: str,
    body: str,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
    *,
    root: str = "",
    widget: bool = False,
) -> HTMLResponse:
    """A ledger page: its CSS, the theme's script (``root``: the app's prefix), ``body``;
    a ``widget`` page is compact (the dashboard's frame)."""
    css = _CSS + (_WIDGET_CSS if widget else "")
    doc = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"{_theme_tag(root)}\n"
        f"<title>{_e(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n<main>\n"
        f"{body}\n</main>\n</body>\n</html>\n"
    )
    return HTMLResponse(doc, status_code=status_code, headers=headers)


def _theme_tag(root: str) -> str:
    return f'<script src="{_e(root)}/theme.js"></script>'


_WIDGET_CSS = """
body { margin: .25rem; font-size: .9rem; }
table { margin-top: .5rem; }
p.lead { margin: 0; font-size: 1rem; }
"""


def _widget_facts(db: ReleaseLedger) -> tuple[list[Any], list[Any], list[Any]]:
    """What the dashboard widget shows (:mod:`airflow_privacy.providers.airflow.dashboard`),
    from the ledger's metadata."""
    from airflow_privacy.gate.policy import dp_cap
    from airflow_privacy.providers.airflow.dashboard import Blocked, BudgetLeft, LastPublished

    blocked = [Blocked(r.uuid, r.dataset, r.version, r.updated_at)
               for r in db.list(status="blocked")]  # fmt: skip
    last: dict[str, LastPublished] = {}
    for r in db.list(status="published"):
        count = last[r.dataset].count + 1 if r.dataset in last else 1
        seen = last.get(r.dataset)
        when = r.published_at or r.updated_at
        if seen is None or when >= seen.when:
            last[r.dataset] = LastPublished(r.uuid, r.dataset, r.version, when, count)
        else:
            last[r.dataset] = LastPublished(seen.uuid, seen.dataset, seen.version, seen.when,
                                            count)  # fmt: skip
    published = sorted(last.values(), key=lambda p: p.when, reverse=True)
    budgets = []
    for dataset in db.datasets():
        b = db.dp_budget(dataset, dp_cap)
        if b.unit is not None and b.cap is not None:
            budgets.append(BudgetLeft(dataset, b.unit, b.cap, b.left))
    return blocked, published, budgets


def _status(status: Any) -> str:
    text = STATUS_TEXT.get(str(status), str(status).upper())
    slug = re.sub(r"[^a-z-]", "", str(status).lower())
    return f'<span class="status status-{slug}">{_e(text)}</span>'


def _verdict_of(safe: bool | None) -> str:
    text = VERDICT_TEXT.get(safe, "– NO VERDICT")
    slug = "passed" if safe is True else "failed" if safe is False else "none"
    return f'<span class="verdict verdict-{slug}">{_e(text)}</span>'


def _date(iso: Any) -> str:
    """``2026-11-22T07:53:21+00:00`` -> ``2026-11-22 07:53 UTC``."""
    text = str(iso or "")
    m = re.match(r"(\d{4}-\d\d-\d\d)T(\d\d:\d\d)", text)
    return f"{m.group(1)} {m.group(2)} UTC" if m else text


def _count(value: Any, unit: str) -> str:
    """``2,000 records`` / ``1 record``: a whole number with its unit; anything else (a
    tampered value) escaped as text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,} {_e(unit)}{'' if value == 1 else 's'}"
    return f"{_e(value)} {_e(unit)}s"


def _short(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reasons_list(reasons: Sequence[str], limit: int | None = None) -> str:
    shown = list(reasons if limit is None else reasons[:limit])
    items = "".join(f"<li>{_e(_short(r) if limit else r)}</li>" for r in shown)
    if limit is not None and len(reasons) > limit:
        items += f"<li>and {len(reasons) - limit} more reason(s)</li>"
    return f'<ul class="reasons">{items}</ul>'


def _verdict(row: _Shown) -> str:
    status = row.status
    reasons = redacted([str(r) for r in row.reasons])
    if status == "published":
        return "every check passed; published"
    if status == "publishing":
        return (
            "every check passed and the gate allowed it, but the files are not yet in place "
            "(re-run the publish task to finish)"
        )
    if status == "candidate":
        return "recorded, not yet published or blocked"
    if status == "superseded":
        note = _e(_short(redacted(row.superseded or "superseded")))
        head = f"<p>Blocked, then {note}.</p>"
        return head + (_reasons_list(reasons, 2) if reasons else "")
    if not reasons:
        return "blocked (no reason recorded)"
    return _reasons_list(reasons, 3)


def _options(values: Iterable[str], chosen: str | None, anything: str) -> str:
    opts = [f'<option value=""{" selected" if chosen is None else ""}>{_e(anything)}</option>']
    for v in values:
        sel = " selected" if v == chosen else ""
        opts.append(f'<option value="{_e(v)}"{sel}>{_e(v)}</option>')
    return "".join(opts)


def _release_href(root: str, info: ReleaseInfo) -> str:
    from urllib.parse import quote

    return f"{_e(root)}/releases/{_e(quote(str(info.uuid), safe=''))}"


def _list_body(
    root: str,
    rows: list[_Shown],
    datasets: list[str],
    dataset: str | None,
    status: str | None,
    missing: str | None,
) -> str:
    from airflow_privacy.ledger import STATUSES

    shown = list(datasets) + ([dataset] if dataset and dataset not in datasets else [])
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
    if missing is not None:
        table = (
            f'<p id="no-releases" class="notice">No releases: {_e(missing[:1].upper())}'
            f"{_e(missing[1:])}. The DAG's first release creates it.</p>"
        )
    elif not rows:
        table = f'<p id="no-releases">No releases{" match these filters" if what else ""}.</p>'
    else:
        columns = ("Release", "Dataset", "Version", "Status", "Recorded", "Records",
                   "Verdict and reasons", "Report")  # fmt: skip
        head = "".join(f'<th scope="col">{h}</th>' for h in columns)
        body = []
        for row in rows:
            r = row.info
            href = _release_href(root, r)
            rep = (
                f'<a href="{href}">read the report</a> '
                f'<span class="date">(stored {_e(_date(row.report_at))})</span>'
                if row.report_at
                else "none stored"
            )
            body.append(
                f'<tr data-release-id="{_e(r.id)}" data-release-uuid="{_e(r.uuid)}">'
                f'<th scope="row"><a href="{href}">#{_e(r.id)}</a></th>'
                f"<td>{_e(r.dataset)}</td><td>{_e(r.version)}</td><td>{_status(row.status)}</td>"
                f'<td class="date">{_e(_date(r.created_at))}</td>'
                f'<td class="num">{_count(r.records, "record")}</td>'
                f"<td>{_verdict(row)}</td><td>{rep}</td></tr>"
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


def _nav(root: str, info: ReleaseInfo, status: str, attempt: AttemptInfo | None = None) -> str:
    """The ledger's navigation above a stored report: back to the list, the JSON, and what
    the ledger says now (a later attempt may have changed the status). ``attempt``: the
    report is that attempt's own (its run's link), named with its status."""
    href = _release_href(root, info)
    json_href = (
        f"{_e(root)}/api/attempts/{_e(attempt.uuid)}/report"
        if attempt is not None
        else f"{_e(root)}/api/releases/{_e(info.uuid)}/report"
    )
    which = (
        f"The report of attempt {_e(attempt.uuid)} ({_status(attempt.status)}) · "
        if attempt is not None
        else ""
    )
    return (
        '<nav class="privacy-nav" aria-label="Privacy ledger" '
        'style="font-family: system-ui, sans-serif; margin: 0 0 1rem 0; padding: .5rem; '
        'border: 1px solid #999;">'
        f'<a href="{_e(root)}/">← All releases</a> · {which}'
        f'<a href="{json_href}">This report as JSON</a> · '
        f'<a href="{href}?view=ledger">Attempts and checks in the ledger</a> · '
        f"In the ledger now: {_status(status)}</nav>"
    )


def _with_nav(document: str, nav: str, root: str = "") -> str:
    """The report document with the ledger's navigation at the top of its body and the
    theme's script in its head."""
    head = re.search(r"<head[^>]*>", document, flags=re.IGNORECASE)
    if head is not None:
        document = document[: head.end()] + _theme_tag(root) + document[head.end() :]
    m = re.search(r"<body[^>]*>", document, flags=re.IGNORECASE)
    if m is None:
        return nav + document
    return document[: m.end()] + nav + document[m.end() :]


def _facts_body(
    root: str,
    info: ReleaseInfo,
    status: str,
    attempts: list[AttemptInfo],
    stored: dict[str, Any] | None,
    stored_at: str | None,
    problem: str | None,
    reported: Sequence[str] = (),
) -> str:
    rows: list[tuple[str, str]] = [
        ("Release", f"#{_e(info.id)}"),
        ("UUID", _e(info.uuid)),
        ("Dataset", _e(info.dataset)),
        ("Version", _e(info.version)),
        ("Status", _status(status)),
        ("Recorded", _e(_date(info.created_at))),
        ("Last change", _e(_date(info.updated_at))),
        ("Published", _e(_date(info.published_at)) if info.published_at else "not published"),
        ("Kind", _e(info.kind)),
        ("Sensitive column", _e(info.sensitive)),
        ("Quasi-identifiers", _e(", ".join(str(q) for q in info.qis))),
        ("Records", _count(info.records, "record")),
        ("Groups", _count(info.groups, "group")),
        ("Content hash", _e(info.content_hash)),
    ]
    cells = "".join(f'<tr><th scope="row">{_e(n)}</th><td>{v}</td></tr>' for n, v in rows)
    reasons = redacted([str(r) for r in info.reasons])
    why = f"<h2>Reasons</h2>{_reasons_list(reasons)}" if reasons else ""
    href = _release_href(root, info)
    if problem:
        note = (
            f'<p id="no-report" class="notice">The stored report (of '
            f"{_e(_date(stored_at))}) could not be read: {_e(problem)}. What the ledger "
            "holds is shown instead.</p>"
        )
    elif stored is not None:
        note = (
            f'<p id="report-link">A report is stored for this release (of '
            f'{_e(_date(stored_at))}): <a href="{href}">read the report</a>.</p>'
        )
    else:
        note = (
            '<p id="no-report">No report stored for this release. The DAG\'s '
            "<code>release_report</code> task stores one when it runs.</p>"
        )
    return (
        f'<nav class="privacy-nav" aria-label="Privacy ledger"><a href="{_e(root)}/">'
        "← All releases</a> · "
        f'<a href="{_e(root)}/api/releases/{_e(info.uuid)}">This release as JSON</a></nav>'
        f"<h1>Release #{_e(info.id)}: {_e(info.dataset)} v{_e(info.version)}</h1>"
        f"{note}"
        f'<table id="facts"><caption>What the ledger holds</caption><tbody>{cells}'
        f"</tbody></table>{why}{_attempts_body(attempts, root, reported)}"
    )


def _attempts_body(
    attempts: list[AttemptInfo], root: str = "", reported: Sequence[str] = ()
) -> str:
    """Every attempt to publish the release, newest first: status, reasons, checks with
    their verdicts, who superseded a blocked attempt, when and why, and a link to each
    attempt's own report (``reported``: the attempts that stored one)."""
    if not attempts:
        return (
            '<h2 id="attempts">Attempts to publish</h2>'
            "<p>No attempt to publish this release was recorded.</p>"
        )
    n = len(attempts)
    parts = [
        f'<h2 id="attempts">Attempts to publish ({n})</h2>'
        "<p>Newest first. The latest attempt decides the status shown.</p>"
    ]
    for i, a in reversed(list(enumerate(attempts, start=1))):
        hid = f"attempt-{i}"
        facts: list[tuple[str, str]] = [
            ("Status", _status(a.status)),
            ("Attempt UUID", _e(a.uuid)),
            ("Opened", _e(_date(a.created_at))),
            ("Decided", _e(_date(a.decided_at)) if a.decided_at else "not yet"),
            ("Required checks", _e(", ".join(str(r) for r in a.required)) or "none"),
        ]
        if a.first_release:
            facts.append(("First release", "yes: audited against nothing earlier"))
        if a.destination:
            facts.append(("Published to", _e(a.destination)))
        if a.status == "superseded" or a.superseded_by:
            facts.append(("Superseded", _e(redacted(_superseded_text(a)))))
        if a.uuid in reported:
            link = f'<a href="{_e(root)}/attempts/{_e(a.uuid)}">its release report</a>'
            facts.append(("Report", link))
        rows = "".join(f'<tr><th scope="row">{_e(k)}</th><td>{v}</td></tr>' for k, v in facts)
        latest = " (latest)" if i == n else ""
        reasons = redacted([str(r) for r in a.reasons])
        why = f'<h4 id="{hid}-reasons">Reasons</h4>{_reasons_list(reasons)}' if reasons else ""
        parts.append(
            f'<section class="attempt" id="{hid}" data-attempt-uuid="{_e(a.uuid)}" '
            f'aria-labelledby="{hid}-h"><h3 id="{hid}-h">Attempt {i} of {n}{latest}: '
            f"{_status(a.status)}</h3>"
            f'<table class="attempt-facts"><caption>Attempt {i} in the ledger</caption>'
            f"<tbody>{rows}</tbody></table>{why}{_checks_table(a, hid)}</section>"
        )
    return "".join(parts)


def _checks_table(a: AttemptInfo, hid: str) -> str:
    recorded = {c.name for c in a.checks}
    missing = [r for r in a.required if r not in recorded]
    if not a.checks and not missing:
        return "<p>No check was recorded for this attempt.</p>"
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in ("Check", "Step", "Verdict", "Outcome", "Recorded", "Summary and reasons")
    )
    body = []
    for c in a.checks:
        env = c.envelope if isinstance(c.envelope, dict) else {}
        summary = redacted(str(env.get("summary") or ""))
        reasons = redacted([str(r) for r in env.get("reasons") or []])
        text = f"<p>{_e(_short(summary))}</p>" if summary else ""
        text += _reasons_list(reasons, 5) if reasons else ""
        body.append(
            f'<tr><th scope="row">{_e(c.name)}</th><td class="step">{_e(c.step)}</td>'
            f"<td>{_verdict_of(c.safe)}</td><td>{_e(c.outcome)}</td>"
            f'<td class="date">{_e(_date(c.created_at))}</td><td>{text}</td></tr>'
        )
    for name in missing:
        body.append(
            f'<tr><th scope="row">{_e(name)}</th><td></td><td>{_verdict_of(None)}</td>'
            '<td>no result recorded</td><td class="date"></td>'
            "<td>required, but no result was recorded (its task failed or did not run)</td></tr>"
        )
    return (
        f'<div class="table-wrap"><table class="checks" id="{hid}-checks">'
        f"<caption>Checks of attempt {hid.rsplit('-', 1)[-1]}</caption>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def _login_url(request: Request) -> str | None:
    """The auth manager's sign-in page, sending the user back to the page asked for (its
    path and query: the same site); None outside the API server."""
    try:
        from airflow.api_fastapi.app import get_auth_manager

        back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return str(get_auth_manager().get_url_login(next_url=back))
    except Exception:  # no auth manager (a bare app in tests): Airflow's home instead
        return None


def _error_body(request: Request, status_code: int, detail: str, retry: bool = True) -> str:
    root = _root(request)
    if status_code == 401:
        home = root[: -len(URL_PREFIX)] + "/" if root.endswith(URL_PREFIX) else "/"
        target = _login_url(request) or home
        return (
            "<h1>Sign in first</h1><p>The privacy ledger is shown to signed-in Airflow users."
            f' <a id="sign-in" href="{_e(target)}">Sign in to Airflow</a>: you come back to '
            "this page.</p>"
        )
    if status_code == 403:
        return (
            "<h1>Not allowed</h1><p>Your Airflow role may not read the privacy ledger "
            f"(permission: GET on the custom view {_e(RESOURCE_NAME)}).</p>"
        )
    if status_code == 503 and not retry:  # the ledger's schema: waiting does not fix it
        return (
            "<h1>The ledger cannot be read by this version</h1>"
            f'<p id="error-reason">{_e(detail)}</p>'
            "<p>The releases recorded in it are unchanged; the page reads it again once its "
            "schema matches.</p>"
        )
    if status_code == 503:
        return (
            "<h1>The ledger is unavailable</h1>"
            f'<p id="error-reason">{_e(detail)}</p>'
            f"<p>Nothing is wrong with the releases themselves; try again in a moment "
            f'(<a href="{_e(root)}/">all releases</a>).</p>'
        )
    return (
        f'<h1>Error {status_code}</h1><p id="error-reason">{_e(detail)}</p>'
        f'<p><a href="{_e(root)}/">All releases</a></p>'
    )


# ---------------------------------------------------------------------------------- plugin
@cache
def _plugin_app() -> FastAPI:
    return create_app()


class _LazyApps:
    """``fastapi_apps`` built on first access, in the API server (the app imports Airflow's
    security module; the scheduler and the DAG processor load plugins too and never read
    it). A descriptor, not a property: it reads the same on the class and on the instance
    the ``airflow.plugins`` entry point makes."""

    def __get__(self, obj: object, owner: type | None = None) -> list[dict[str, Any]]:
        return [{"app": _plugin_app(), "url_prefix": URL_PREFIX, "name": "Privacy ledger"}]


class AirflowPrivacyPlugin(AirflowPlugin):
    """Registers the ledger view under ``/privacy`` in the Airflow 3 API server and the
    "Privacy ledger" entry of the UI's Browse menu (through the ``airflow.plugins`` entry
    point only)."""

    name = "airflow_privacy"
    fastapi_apps = _LazyApps()
    external_views = [EXTERNAL_VIEW, RUN_VIEW, TASK_VIEW]  # noqa: RUF012  (AirflowPlugin's)
    react_apps = [DASHBOARD_APP]  # noqa: RUF012  (the dashboard widget)
