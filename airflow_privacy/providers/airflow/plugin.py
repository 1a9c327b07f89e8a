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

import logging
from functools import cache
from typing import TYPE_CHECKING, Any

from airflow.plugins_manager import AirflowPlugin
from fastapi import FastAPI

from airflow_privacy.providers.airflow.dashboard import DASHBOARD_APP
from airflow_privacy.providers.airflow.ui_app import SECURITY_HEADERS as SECURITY_HEADERS
from airflow_privacy.providers.airflow.ui_app import create_app as create_app
from airflow_privacy.providers.airflow.ui_ledger import AUTH_ENV as AUTH_ENV
from airflow_privacy.providers.airflow.ui_ledger import auth_mode as auth_mode
from airflow_privacy.providers.airflow.urls import URL_PREFIX as URL_PREFIX  # re-exported

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


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
