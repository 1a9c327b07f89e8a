"""The HTML of the privacy UI's pages: server-rendered, without scripts or external
resources, every value escaped (:mod:`airflow_privacy.providers.airflow.plugin` describes the
UI)."""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request
from fastapi.responses import HTMLResponse

from airflow_privacy.providers.airflow.ui_ledger import RESOURCE_NAME
from airflow_privacy.providers.airflow.urls import URL_PREFIX as URL_PREFIX  # re-exported
from airflow_privacy.report.theme import dark_css

if TYPE_CHECKING:
    from airflow_privacy.ledger import AttemptInfo, ReleaseInfo, ReleaseLedger

log = logging.getLogger(__name__)


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
