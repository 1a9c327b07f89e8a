"""``ReleaseVerdictNotifier``: the gate's verdict, its reasons and the report's link, sent
through any Airflow notifier (e-mail, Slack, ...) when the gate publishes and when it blocks.

Use it as the gate's callbacks::

    notify = ReleaseVerdictNotifier(send=SmtpNotifier(
        to="privacy-office@example.org",
        subject="{{ privacy_subject }}", html_content="<pre>{{ privacy_body }}</pre>",
    ))
    PublishReleaseOperator(..., on_success_callback=notify, on_failure_callback=notify)

``send`` is another notifier (``privacy_subject`` and ``privacy_body`` are added to the
context it renders its templates with), a function ``send(subject, body)``, or None: the
message is written to the task's log (the sample DAG's default). The reasons are shown as
the report shows them (:func:`airflow_privacy.core.redaction.redact`: a composition
witness's values left for one person are not repeated); nothing of the data is in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from airflow.sdk import BaseNotifier

MAX_REASONS = 10


def verdict_message(envelope: Mapping[str, Any] | None, link: str | None) -> tuple[str, str]:
    """The subject and body of the gate's verdict (``envelope``: its report envelope; None
    when it pushed none, e.g. it failed before deciding)."""
    from airflow_privacy.core.redaction import redact

    env = dict(envelope or {})
    attempt = env.get("attempt") or {}
    what = (
        f"{attempt.get('dataset')} v{attempt.get('version')}"
        if attempt.get("dataset")
        else "the release"
    )
    outcome = str(env.get("outcome") or "blocked")
    if outcome in ("published", "already-published"):
        subject = f"PUBLISHED: {what}" if outcome == "published" else f"ALREADY PUBLISHED: {what}"
    else:
        subject = f"BLOCKED: {what} was not published"
    lines = [redact(str(env.get("summary") or "the gate did not decide (it failed before)"))]
    reasons = [redact(str(r)) for r in env.get("reasons") or []]
    if reasons:
        lines.append("Reasons:")
        lines += [f"- {r}" for r in reasons[:MAX_REASONS]]
        if len(reasons) > MAX_REASONS:
            lines.append(f"- ... and {len(reasons) - MAX_REASONS} more (in the report)")
    for advice in env.get("advice") or []:
        if isinstance(advice, Mapping) and advice.get("text"):
            lines.append(f"The way forward: {redact(str(advice['text']))}")
    if link:
        lines.append(f"Report: {link}")
    return subject, "\n".join(lines)


class ReleaseVerdictNotifier(BaseNotifier):
    """Send the gate's verdict (module doc).

    :param send: another notifier (rendered with ``privacy_subject`` and ``privacy_body`` in
        its context), a function ``send(subject, body)``, or None (the task's log)
    """

    def __init__(self, *, send: BaseNotifier | Callable[[str, str], Any] | None = None) -> None:
        super().__init__()
        self.send = send

    def notify(self, context: Any) -> None:
        from airflow_privacy.providers.airflow.adapter import REPORT_KEY
        from airflow_privacy.providers.airflow.operators.report import attempt_page

        ti = context["ti"]
        env = ti.xcom_pull(task_ids=ti.task_id, key="return_value") or ti.xcom_pull(
            task_ids=ti.task_id, key=REPORT_KEY
        )
        if env is None and context.get("exception") is not None:
            # the gate failed before it decided (e.g. no attempt was opened): its own words
            env = {"outcome": "blocked", "summary": str(context["exception"])}
        attempt = (env or {}).get("attempt") or {}
        link = attempt_page(str(attempt["uuid"])) if attempt.get("uuid") else None
        subject, body = verdict_message(env, link)
        if self.send is None:
            self.log.info("%s\n%s", subject, body)
        elif isinstance(self.send, BaseNotifier):
            context["privacy_subject"], context["privacy_body"] = subject, body
            self.send(context)
        else:
            self.send(subject, body)
