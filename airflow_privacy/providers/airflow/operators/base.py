"""What every check operator shares: the attempt it records under, its check name, the
ledger connection and what an unsafe verdict does to the task."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_privacy.ledger.location import DEFAULT_CONN_ID
from airflow_privacy.providers.airflow import adapter
from airflow_privacy.providers.airflow.params import text

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope


class GateOperator(BaseOperator):
    """Base of the gate's operators (not used on its own).

    :param attempt: the UUID of the attempt to record the result under (templated), e.g.
        ``"{{ ti.xcom_pull(task_ids='open_attempt')['attempt']['uuid'] }}"``
    :param attempt_task_id: instead of ``attempt``, the task id of the
        :class:`OpenAttemptOperator` whose attempt to record under
    :param check_name: the check's name within the attempt (default: the task id); the
        attempt's ``required_checks`` name checks by it
    :param privacy_ledger_conn_id: the ledger connection (default
        ``privacy_ledger_default``; ``$AIRFLOW_PRIVACY_LEDGER_URL`` wins over the default
        connection; without either, ``$AIRFLOW_HOME/privacy_ledger.db``)
    :param on_unsafe: what a failed verdict does to this task: ``fail`` (default:
        ``AirflowFailException``, no retries), ``skip``, or ``continue`` (the verdict is
        recorded, the task succeeds; the gate still blocks)
    """

    gate_fields: ClassVar[tuple[str, ...]] = ("attempt", "check_name")

    def __init__(
        self,
        *,
        attempt: str | None = None,
        attempt_task_id: str | None = None,
        check_name: str | None = None,
        privacy_ledger_conn_id: str = DEFAULT_CONN_ID,
        on_unsafe: str = "fail",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.attempt = attempt
        self.attempt_task_id = attempt_task_id
        self.check_name = check_name
        self.privacy_ledger_conn_id = text(privacy_ledger_conn_id, "privacy_ledger_conn_id")
        self.on_unsafe = adapter.check_on_unsafe(on_unsafe)
        if attempt is not None and attempt_task_id is not None:
            from airflow_privacy.errors import InputError

            raise InputError("give attempt or attempt_task_id, not both")

    @property
    def name(self) -> str:
        return str(self.check_name or self.task_id)

    def run_service(
        self, context: Mapping[str, Any], service: Callable[[GateContext, str | None], Envelope]
    ) -> dict[str, Any]:
        """Run ``service(ctx, attempt)`` through the adapter (errors, XCom, verdict)."""

        def call(ctx: GateContext) -> Envelope:
            return service(ctx, adapter.attempt_of(self, context))

        return adapter.execute(self, context, call, self.on_unsafe)
