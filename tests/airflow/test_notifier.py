"""ReleaseVerdictNotifier: the gate's verdict, redacted reasons and the report link, through
another notifier's templates, a function, or the log."""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseNotifier

from airflow_privacy.providers.airflow import get_provider_info
from airflow_privacy.providers.airflow.notifier import ReleaseVerdictNotifier, verdict_message

ATTEMPT = {
    "uuid": "0b1c2d3e-4f5a-4978-9abc-def012345678", "dataset": "survey", "version": "3",
    "status": "blocked", "release_id": 3, "release_uuid": "x", "release_status": "x",
}  # fmt: skip
BLOCKED = {
    "step": "publish", "outcome": "blocked", "safe": False, "attempt": ATTEMPT,
    "summary": "survey v3 was NOT published: 1 reason(s)",
    "reasons": ["audit: row 147: {'AIDS'} left after intersecting A group x with B group y"],
    "advice": [{"text": "release noisy marginals with differential privacy instead"}],
}  # fmt: skip


class FakeTI:
    task_id = "publish"

    def __init__(self, pushed: dict[str, Any]) -> None:
        self.pushed = pushed

    def xcom_pull(self, task_ids: str, key: str = "return_value") -> Any:
        return self.pushed.get(key)


class Capture(BaseNotifier):
    template_fields = ("subject", "body")

    def __init__(self) -> None:
        super().__init__()
        self.subject, self.body = "{{ privacy_subject }}", "{{ privacy_body }}"
        self.sent: list[tuple[str, str]] = []

    def notify(self, context: Any) -> None:
        self.sent.append((self.subject, self.body))


def test_a_block_is_sent_redacted_with_its_link_through_another_notifier() -> None:
    inner = Capture()
    notifier = ReleaseVerdictNotifier(send=inner)
    notifier({"ti": FakeTI({"privacy_report": BLOCKED})})
    ((subject, body),) = inner.sent
    assert subject == "BLOCKED: survey v3 was not published"
    assert "row 147 pinned down after intersecting" in body and "AIDS" not in body
    assert "The way forward: release noisy marginals" in body
    assert body.endswith(f"/privacy/attempts/{ATTEMPT['uuid']}")


def test_a_publication_is_sent_to_a_function_and_a_missing_envelope_to_the_log() -> None:
    got: list[tuple[str, str]] = []
    published = {**BLOCKED, "outcome": "published", "safe": True, "reasons": [], "advice": [],
                 "summary": "published survey v3 (release #3)"}  # fmt: skip
    ReleaseVerdictNotifier(send=lambda s, b: got.append((s, b)))(
        {"ti": FakeTI({"return_value": published})}
    )
    assert got[0][0] == "PUBLISHED: survey v3" and "Reasons" not in got[0][1]
    subject, body = verdict_message(None, None)
    assert subject == "BLOCKED: the release was not published"
    assert "failed before" in body
    ReleaseVerdictNotifier()({"ti": FakeTI({})})  # no envelope, no channel: logged, no error


def test_the_notifier_is_in_the_provider_metadata() -> None:
    assert get_provider_info()["notifications"] == [
        "airflow_privacy.providers.airflow.notifier.ReleaseVerdictNotifier"
    ]
