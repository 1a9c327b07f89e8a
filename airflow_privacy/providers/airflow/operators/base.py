"""The operators' bases: each operator has the arguments its step uses, and no others.

* :class:`PrivacyOperator`: runs a gate service through the adapter
  (:mod:`airflow_privacy.providers.airflow.adapter`: errors, XCom, verdicts);
* :class:`LedgerOperator`: + ``privacy_ledger_conn_id`` (steps that use the ledger);
* :class:`AttemptOperator`: + ``attempt`` / ``attempt_task_id`` (steps of an attempt);
* :class:`CheckOperator`: + ``check_name`` and ``on_unsafe`` (steps that give a verdict).

Arguments are checked as :mod:`airflow_privacy.providers.airflow.params` says: when the DAG
is parsed every value that is not a template, when the task runs every value; a given
argument that is blank (a template that renders empty) is bad input, never its default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_privacy.ledger.location import DEFAULT_CONN_ID
from airflow_privacy.providers.airflow import adapter
from airflow_privacy.providers.airflow.params import (
    Args,
    airflow_words,
    choice,
    is_template,
    text,
)

if TYPE_CHECKING:
    import jinja2
    from airflow.sdk.definitions.context import Context

    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope


class PrivacyOperator(BaseOperator):
    """Base of the provider's operators (not used on its own)."""

    on_unsafe: str = "fail"
    #: templated arguments for which a blank rendering documentedly means the default
    blank_means_default: ClassVar[frozenset[str]] = frozenset()
    #: the template fields that held a template before rendering (set when rendered)
    _templated_args: tuple[str, ...] = ()

    def render_template_fields(
        self, context: Context, jinja_env: jinja2.Environment | None = None
    ) -> None:
        """Render, remembering which arguments were templates: one that renders blank is
        bad input when the task runs (``params.check_rendered``)."""
        self._templated_args = tuple(
            f for f in self.template_fields if is_template(getattr(self, f, None))
        )
        super().render_template_fields(context, jinja_env)

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument of the operator checked (``params.Args``): when the DAG is parsed
        (``parsing``: templates wait) and again when the task runs, where the checked
        values are what the service gets."""
        return {}

    def _check_at_parse_time(self) -> None:
        with airflow_words():
            self.check_arguments(parsing=True)

    @property
    def name(self) -> str:
        """The step's name in its envelope (and in its attempt): the task id."""
        return str(self.task_id)

    def run_service(
        self, context: Mapping[str, Any], service: Callable[[GateContext], Envelope]
    ) -> dict[str, Any]:
        """Run ``service(ctx)`` through the adapter (errors, XCom, verdict)."""
        return adapter.execute(self, context, service, self.on_unsafe)

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Any:
        """The task's OpenLineage lineage, from its envelope
        (:mod:`airflow_privacy.providers.airflow.lineage`; None without the OpenLineage
        provider)."""
        from airflow_privacy.providers.airflow.lineage import operator_lineage

        return operator_lineage(getattr(self, "_privacy_envelope", None))

    def get_openlineage_facets_on_failure(self, task_instance: Any) -> Any:
        """A blocked or refused task's lineage: its assertions say what failed."""
        from airflow_privacy.providers.airflow.lineage import operator_lineage

        return operator_lineage(getattr(self, "_privacy_envelope", None))


class LedgerOperator(PrivacyOperator):
    """An operator that uses the ledger.

    :param privacy_ledger_conn_id: the ledger connection (default
        ``privacy_ledger_default``; ``$AIRFLOW_PRIVACY_LEDGER_URL`` wins over the default
        connection; without either, ``$AIRFLOW_HOME/privacy_ledger.db``). A connection named
        here that does not exist is bad input.
    """

    def __init__(self, *, privacy_ledger_conn_id: str = DEFAULT_CONN_ID, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.privacy_ledger_conn_id = text(privacy_ledger_conn_id, "privacy_ledger_conn_id")


class AttemptOperator(LedgerOperator):
    """An operator that works on an attempt opened by :class:`OpenAttemptOperator`.

    :param attempt: the attempt's UUID (templated), e.g.
        ``"{{ ti.xcom_pull(task_ids='open_attempt')['attempt']['uuid'] }}"``
    :param attempt_task_id: instead of ``attempt``, the task id of the
        :class:`OpenAttemptOperator` whose attempt to use
    """

    def __init__(
        self, *, attempt: str | None = None, attempt_task_id: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if attempt is not None and attempt_task_id is not None:
            from airflow_privacy.errors import InputError

            raise InputError("give attempt or attempt_task_id, not both")
        self.attempt = attempt
        self.attempt_task_id = attempt_task_id
        with airflow_words():
            args = Args(self, parsing=True)
            args.text("attempt", optional=True)
            args.text("attempt_task_id", optional=True)

    def attempt_service(
        self, context: Mapping[str, Any], service: Callable[[GateContext, str | None], Envelope]
    ) -> dict[str, Any]:
        """Run ``service(ctx, attempt)`` (the attempt resolved inside: a missing one is bad
        input like any other)."""
        return self.run_service(
            context, lambda ctx: service(ctx, adapter.attempt_of(self, context))
        )


class CheckOperator(AttemptOperator):
    """A check recorded under an attempt (optional: without one, the verdict is only
    reported).

    :param check_name: the check's name within the attempt (default: the task id); the
        attempt's ``required_checks`` name checks by it
    :param on_unsafe: what a failed verdict does to this task: ``fail`` (default:
        ``AirflowFailException``, no retries), ``skip``, or ``continue`` (the verdict is
        recorded and the task succeeds; the gate still blocks, naming this check)
    """

    def __init__(
        self, *, check_name: str | None = None, on_unsafe: str = "fail", **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.check_name = check_name
        with airflow_words():
            Args(self, parsing=True).label("check_name", optional=True)
            self.on_unsafe = choice(on_unsafe, "on_unsafe", adapter.ON_UNSAFE)

    @property
    def name(self) -> str:
        return str(self.check_name or self.task_id)
