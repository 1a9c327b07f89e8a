"""``PublishReleaseOperator``: the gate. It publishes an attempt's release only if every
check of the attempt passed, as the ledger records it, and every task it depends on
succeeded; otherwise it blocks the attempt with every reason and fails.

An adapter over :func:`airflow_privacy.gate.attempts.publish`, the service behind
``airflow-privacy publish``. Its trigger rule is ``all_done``: it always runs, so a failed
check or a failed side task is a *reason* it names, not a cascade of "upstream failed"
tasks; the run is green only when this task published the release (or found it already
published).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.providers.airflow.operators.base import AttemptOperator
from airflow_privacy.providers.airflow.params import text

OK_STATES = ("success",)


def failed_upstream(operator: Any, context: Any) -> dict[str, str]:
    """Every task this one depends on (directly or not) that did not succeed: task -> state."""
    from airflow.sdk.execution_time.task_runner import RuntimeTaskInstance

    ti = context["ti"]
    if not operator.has_dag():
        return {}
    upstream = sorted(operator.get_flat_relative_ids(upstream=True))
    if not upstream:
        return {}
    # no fallback: when the states cannot be read the task fails (and nothing is published)
    found = RuntimeTaskInstance.get_task_states(
        dag_id=ti.dag_id, task_ids=upstream, run_ids=[ti.run_id]
    )
    states: dict[str, Any] = dict(found.get(ti.run_id, {})) if isinstance(found, dict) else {}
    out: dict[str, str] = {}
    for task_id in upstream:
        state = states.get(task_id)
        if isinstance(state, dict):  # mapped tasks: one state per index
            bad = {str(s) for s in state.values() if str(s) not in OK_STATES}
            if bad:
                out[task_id] = ", ".join(sorted(bad))
            continue
        value = getattr(state, "value", state)
        if str(value) not in OK_STATES:
            out[task_id] = str(value) if value is not None else "not run"
    return out


class PublishReleaseOperator(AttemptOperator):
    """Publish the attempt's release when every check passed (the gate).

    :param release: the release file that was checked (path/URI); it is verified to be the
        content the attempt recorded, then copied with its manifest to ``publish_to``
    :param publish_to: the folder (or URI prefix) the release is published into
    :param conn_id: the connection of URIs
    :param attempt: / :param attempt_task_id: the attempt to decide (see :class:`AttemptOperator`)
    Also ``privacy_ledger_conn_id``. The gate always fails when it does not publish. The
    trigger rule defaults to ``all_done``.

    Returns (XCom) the report envelope (step ``publish``, outcome ``published`` or
    ``already-published``). When blocked, the task fails with every reason (failed or
    missing checks, failed tasks, a changed file), the ledger records them, and the envelope
    is in XCom under ``privacy_report``.
    """

    template_fields: Sequence[str] = ("release", "publish_to", "attempt")
    ui_color = "#fde9d9"

    def __init__(
        self, *, release: str, publish_to: str, conn_id: str | None = None, **kwargs: Any
    ) -> None:
        kwargs.setdefault("trigger_rule", "all_done")
        super().__init__(**kwargs)
        self.release = release
        self.publish_to = publish_to
        self.conn_id = conn_id
        if self.attempt is None and self.attempt_task_id is None:
            from airflow_privacy.errors import InputError

            raise InputError("give attempt or attempt_task_id: the attempt to decide")

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.errors import InputError, ReleaseBlocked
        from airflow_privacy.gate.attempts import PublishRequest, publish
        from airflow_privacy.gate.refs import ReleaseRef
        from airflow_privacy.providers.airflow import adapter

        failed = failed_upstream(self, context)
        try:
            opened: str | None = adapter.attempt_of(self, context)
        except InputError:
            opened = None

        def service(ctx: Any, _attempt: str | None) -> Any:
            if opened is None:
                reasons = "; ".join(f"task {t} ended {s}" for t, s in sorted(failed.items()))
                raise ReleaseBlocked(
                    "nothing was published: no attempt was opened"
                    + (f" ({reasons})" if reasons else " (its task did not push one)")
                )
            return publish(
                PublishRequest(
                    attempt=opened,
                    release=ReleaseRef(path=text(self.release, "release"), conn=self.conn_id),
                    destination=text(self.publish_to, "publish_to"),
                    failed_tasks=failed,
                    name=self.name,
                    conn=self.conn_id,
                ),
                ctx,
            )

        return adapter.execute(self, context, lambda ctx: service(ctx, opened), "fail")
