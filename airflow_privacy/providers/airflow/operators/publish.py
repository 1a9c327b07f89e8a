"""``PublishReleaseOperator``: the gate. It publishes an attempt's release only if every
check of the attempt passed, as the ledger records it, and every task it depends on
succeeded; otherwise it blocks the attempt with every reason and fails.

An adapter over :func:`airflow_privacy.gate.attempts.publish`, the service behind
``airflow-privacy publish``. Its trigger rule is ``all_done``: it always runs, so a failed
check or a failed side task is a *reason* it names, not a cascade of "upstream failed"
tasks (a mapped task counts as succeeded only when every instance did:
:func:`failed_upstream`); the run is green only when this task published the release (or
found it already published).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.gate.steps.publish import PUBLISH
from airflow_privacy.providers.airflow.operators.base import AttemptOperator

OK_STATES = ("success",)


def failed_upstream(operator: Any, context: Any) -> dict[str, str]:
    """Every task this one depends on (directly or not) that did not succeed: task -> state.

    The states of this run are read with the task instance's ``get_task_states`` (the task
    SDK's public interface to Airflow's execution API). A mapped task succeeded only when
    every one of its instances did (the execution API keys them ``<task_id>_<map_index>``);
    its failed instances are named (``failed (map index 1 of 3)``). A mapped task expanded
    over nothing has no instance that did anything: Airflow marks it ``skipped``, and that is
    not a success (the conservative reading: a check mapped over no data checked nothing).
    A task without any instance is ``not run``. When the states cannot be read, the error
    fails the task: there is no fallback that could publish."""
    if not operator.has_dag():
        return {}
    upstream = sorted(operator.get_flat_relative_ids(upstream=True))
    if not upstream:
        return {}
    ti = context["ti"]
    # one call for all, except for tasks whose keys could be confused (a task ``x_1`` beside
    # a task ``x`` whose map index 1 is also keyed ``x_1``): each of those is asked alone
    confusable = {
        t
        for t in upstream
        for o in upstream
        if o != t and (_index(o, t) is not None or _index(t, o) is not None)
    }
    batches = [[t for t in upstream if t not in confusable]] + [[t] for t in sorted(confusable)]
    instances: dict[str, dict[int, str]] = {t: {} for t in upstream}
    for batch in batches:
        if not batch:
            continue
        found = ti.get_task_states(dag_id=ti.dag_id, task_ids=batch, run_ids=[ti.run_id])
        states = found.get(ti.run_id) if isinstance(found, dict) else None
        for key, state in dict(states or {}).items():
            task_id, index = _owner(str(key), batch)
            if task_id is not None:
                value = getattr(state, "value", state)
                instances[task_id][index] = "not run" if value is None else str(value)
    out: dict[str, str] = {}
    for task_id in upstream:
        bad = _not_succeeded(instances[task_id])
        if bad:
            out[task_id] = bad
    return out


def _index(key: str, task_id: str) -> int | None:
    """The map index when ``key`` is how the execution API names an instance of a mapped
    ``task_id`` (``<task_id>_<map_index>``), else None."""
    prefix = f"{task_id}_"
    rest = key[len(prefix) :]
    if key.startswith(prefix) and rest.isascii() and rest.isdigit():
        return int(rest)
    return None


def _owner(key: str, task_ids: Sequence[str]) -> tuple[str | None, int]:
    """The task (and map index, -1 unmapped) a key of ``get_task_states`` belongs to, among
    ``task_ids`` (a batch without confusable names)."""
    if key in task_ids:
        return key, -1
    for task_id in task_ids:
        index = _index(key, task_id)
        if index is not None:
            return task_id, index
    return None, -1


def _not_succeeded(instances: dict[int, str]) -> str | None:
    """None when every instance succeeded; else the states that did not, with their map
    indexes for a mapped task (``failed (map indexes 0, 2 of 3)``)."""
    if not instances:
        return "not run"
    mapped = {i: s for i, s in instances.items() if i >= 0}
    bad: dict[str, list[int]] = {}
    for index, state in sorted(instances.items()):
        if state not in OK_STATES:
            bad.setdefault(state, []).append(index)
    if not bad:
        return None
    parts = []
    for state, indexes in bad.items():
        where = [i for i in indexes if i >= 0]
        if not where:
            parts.append(state)
            continue
        label = "map index" if len(where) == 1 else "map indexes"
        parts.append(f"{state} ({label} {', '.join(map(str, where))} of {len(mapped)})")
    return ", ".join(parts)


class PublishReleaseOperator(AttemptOperator):
    """Publish the attempt's release when every check passed (the gate).

    :param release: the release file that was checked (path/URI); it is verified to be the
        content the attempt recorded, then copied with its manifest to ``publish_to``
    :param sql_table: instead of ``release``, the release table that was checked, on the SQL
        connection ``conn_id``: it is copied inside its database into a private snapshot,
        verified against the attempt's content digest and copied to the table ``publish_to``
        (``CREATE TABLE ... AS SELECT``; an existing table with other content is never
        replaced)
    :param publish_to: the folder (or URI prefix) the release is published into, or with
        ``sql_table`` the name of the published table; give each release its own (e.g. per
        run), so that none overwrites another's published files
    :param conn_id: the connection of URIs, or of ``sql_table``
    :param asset: an ``Asset`` (or its URI) the published release updates: declared as this
        task's outlet, its event emitted only when the gate publishes, with ``extra`` = the
        release id and UUID, dataset, version, attempt, outcome, policy version, the criteria
        passed and a DP release's budget (:mod:`airflow_privacy.providers.airflow.assets`).
        A DAG scheduled on it runs after a published release, never after a blocked one
    :param attempt: / :param attempt_task_id: the attempt to decide (see :class:`AttemptOperator`)
    Also ``privacy_ledger_conn_id``. The gate always fails when it does not publish. The
    trigger rule defaults to ``all_done``.

    Returns (XCom) the report envelope (step ``publish``, outcome ``published`` or
    ``already-published``). When blocked, the task fails with every reason (failed or
    missing checks, failed tasks, a changed file), the ledger records them, and the envelope
    is in XCom under ``privacy_report``.
    """

    #: derived from the step's declaration, plus the attempt
    template_fields: Sequence[str] = (*PUBLISH.template_fields(), "attempt")
    ui_color = "#fde9d9"

    def __init__(
        self,
        *,
        publish_to: str,
        release: str | None = None,
        sql_table: str | None = None,
        conn_id: str | None = None,
        asset: Any = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("trigger_rule", "all_done")
        self.asset = None
        if asset is not None:
            from airflow_privacy.providers.airflow.assets import as_asset

            self.asset = as_asset(asset)
            kwargs["outlets"] = [*(kwargs.get("outlets") or []), self.asset]
        super().__init__(**kwargs)
        self.release = release
        self.sql_table = sql_table
        self.publish_to = publish_to
        self.conn_id = conn_id
        if self.attempt is None and self.attempt_task_id is None:
            from airflow_privacy.errors import InputError

            raise InputError("give attempt or attempt_task_id: the attempt to decide")
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it (:mod:`airflow_privacy.gate.steps.publish`;
        :func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, PUBLISH, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.errors import InputError, ReleaseBlocked
        from airflow_privacy.gate.envelope import failed_task_reasons
        from airflow_privacy.providers.airflow import adapter

        failed = failed_upstream(self, context)
        try:
            opened: str | None = adapter.attempt_of(self, context)
        except InputError:
            opened = None

        def service(ctx: Any, _attempt: str | None) -> Any:
            if opened is None:
                reasons = "; ".join(failed_task_reasons(failed))
                raise ReleaseBlocked(
                    "nothing was published: no attempt was opened"
                    + (f" ({reasons})" if reasons else " (its task did not push one)")
                )
            values = self.check_arguments(parsing=False)
            values.update(attempt=opened, failed_tasks=failed, name=self.name, conn=self.conn_id)
            return PUBLISH.run(PUBLISH.request(values), ctx)

        result = adapter.execute(self, context, lambda ctx: service(ctx, opened), "fail")
        if self.asset is not None:  # reached only when the gate published (or had published)
            from airflow_privacy.providers.airflow.assets import asset_extra

            context["outlet_events"][self.asset].extra.update(asset_extra(result))
        return result
