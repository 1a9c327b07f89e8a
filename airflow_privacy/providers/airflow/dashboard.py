"""The privacy widget of Airflow's dashboard (Home): the releases blocked, the last
publication of each dataset, and the DP budget left where a dataset has one.

Airflow 3.3 puts a plugin's ``react_apps`` entry with ``destination: "dashboard"`` on its
Home page: it imports the entry's ``bundle_url`` as a JavaScript module, which sets
``globalThis.AirflowPlugin`` to a component, and renders it with Airflow's own React.
:data:`DASHBOARD_JS` is that module, written by hand: its component draws one element, an
``<iframe>`` of the plugin's ``widget`` page (server-rendered like every ledger page, the
same authentication, following Airflow's theme), so it needs no build step and brings no
React of its own (an element is a plain object to React; the module uses no hook).

The page shows ledger metadata only (datasets, versions, dates, statuses, budgets): no value
of any release.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

from airflow_privacy.providers.airflow.urls import URL_PREFIX

#: the widgets shown at most per list
SHOWN = 8

DASHBOARD_APP: dict[str, str] = {
    "name": "Privacy releases",
    # relative to the UI's base URL, as the external views' hrefs
    "bundle_url": URL_PREFIX.strip("/") + "/dashboard.js",
    "destination": "dashboard",
    "url_route": "privacy-releases",
}

DASHBOARD_JS = (
    "// airflow-privacy: the dashboard widget (a component that frames the widget page)\n"
    'const ELEMENT = Symbol.for("react.transitional.element");\n'
    f'const src = new URL("{URL_PREFIX.strip("/")}/widget", document.baseURI).href;\n'
    """function PrivacyReleases() {
  return {
    $$typeof: ELEMENT, type: "iframe", key: null, ref: null, _owner: null, _store: {},
    props: {
      src: src, title: "Privacy releases", loading: "lazy",
      style: { width: "100%", height: "19rem", border: "0", colorScheme: "normal" },
    },
  };
}
globalThis.AirflowPlugin = PrivacyReleases;
export default PrivacyReleases;
"""
)


@dataclass(frozen=True)
class Blocked:
    uuid: str
    dataset: str
    version: str
    when: str


@dataclass(frozen=True)
class LastPublished:
    uuid: str
    dataset: str
    version: str
    when: str
    count: int


@dataclass(frozen=True)
class BudgetLeft:
    dataset: str
    unit: str
    cap: float
    left: float


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _when(iso: str | None) -> str:
    return (iso or "").split(".")[0].replace("T", " ")[:16]


def widget_body(
    root: str,
    blocked: Sequence[Blocked],
    published: Sequence[LastPublished],
    budgets: Sequence[BudgetLeft],
) -> str:
    """The widget page's body (every value escaped)."""
    parts = ['<div class="widget">']
    n = len(blocked)
    parts.append(
        f'<p class="lead"><a href="{_e(root)}/?status=blocked" target="_top">'
        f'<strong class="status status-blocked">{n:,}</strong> release{"s" if n != 1 else ""} '
        'blocked</a> · <a href="' + _e(root) + '/" target="_top">all releases</a></p>'
    )
    if blocked:
        rows = "".join(
            f'<tr><td><a href="{_e(root)}/releases/{_e(b.uuid)}" target="_top">'
            f'{_e(b.dataset)} v{_e(b.version)}</a></td><td class="date">{_e(_when(b.when))}'
            "</td></tr>"
            for b in list(blocked)[-SHOWN:][::-1]
        )
        parts.append(
            "<table><caption>Latest blocked</caption><thead><tr><th>Release</th><th>When</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )
    if published:
        rows = "".join(
            f'<tr><td>{_e(p.dataset)}</td><td><a href="{_e(root)}/releases/{_e(p.uuid)}" '
            f'target="_top">v{_e(p.version)}</a></td><td class="date">{_e(_when(p.when))}</td>'
            f'<td class="num">{p.count:,}</td></tr>'
            for p in list(published)[:SHOWN]
        )
        parts.append(
            "<table><caption>Last publication per dataset</caption><thead><tr><th>Dataset</th>"
            "<th>Version</th><th>Published</th><th>Releases published</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    else:
        parts.append("<p>No release has been published yet.</p>")
    if budgets:
        rows = "".join(
            f"<tr><td>{_e(b.dataset)}</td><td>{_e(b.unit)}</td>"
            f'<td class="num">{_num(b.left)} of {_num(b.cap)}</td>'
            f'<td><meter min="0" max="{b.cap:g}" value="{max(b.left, 0.0):g}" '
            f'aria-label="budget left of {_e(b.dataset)}"></meter></td></tr>'
            for b in list(budgets)[:SHOWN]
        )
        parts.append(
            "<table><caption>Differential privacy budget left</caption><thead><tr>"
            "<th>Dataset</th><th>Unit</th><th>Left</th><th></th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    parts.append("</div>")
    return "\n".join(parts)


def _num(x: float) -> str:
    return "unbounded" if math.isinf(x) else f"{x:.4g}"
