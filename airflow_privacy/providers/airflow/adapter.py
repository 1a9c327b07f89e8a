"""How an operator calls the gate layer: one mapping of its errors and envelopes onto task
outcomes, shared by every operator.

* the service's envelope is the task's XCom (its return value, and under the key
  ``privacy_report`` even when the task then fails);
* a verdict of ``False`` fails the task with ``AirflowFailException`` (no retries: retrying
  cannot change a verdict) unless ``on_unsafe`` says ``skip`` or ``continue``;
* :class:`~airflow_privacy.errors.InputError` and
  :class:`~airflow_privacy.errors.IllegalTransition` fail the task without retries;
  :class:`~airflow_privacy.errors.ReleaseBlocked` fails it with the gate's reasons;
* :class:`~airflow_privacy.errors.LedgerUnavailable` raises a plain error, so the task's
  ``retries`` apply (a database outage is not bad input);
* messages name operator arguments, not command-line flags
  (:func:`airflow_privacy.errors.speaking`).

Task code never touches Airflow's metadata database: the ledger is located through the
connection store (:mod:`airflow_privacy.ledger.location`) and opened with its own engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import (
    IllegalTransition,
    InputError,
    LedgerUnavailable,
    ReleaseBlocked,
    speaking,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.ledger.location import ConnectionFields, LedgerLocation

ON_UNSAFE = ("fail", "skip", "continue")
REPORT_KEY = "privacy_report"


class LedgerUnavailableError(RuntimeError):
    """Raised in a task when the ledger cannot be reached: a plain error, so the task's
    ``retries`` apply."""


class AirflowConnections:
    """Object stores through ``ObjectStoragePath`` (with the reference's connection), SQL
    tables through the connection's hook engine."""

    def _path(self, uri: str, conn: str | None) -> Any:
        from airflow.sdk import ObjectStoragePath

        return ObjectStoragePath(uri, conn_id=conn)

    def read_bytes(self, uri: str, conn: str | None) -> bytes:
        path = self._path(uri, conn)
        if not path.exists():
            raise InputError(f"{uri!r} does not exist")
        return bytes(path.read_bytes())

    def download(self, uri: str, conn: str | None, target: str) -> None:
        import shutil

        path = self._path(uri, conn)
        if not path.exists():
            raise InputError(f"{uri!r} does not exist")
        with path.open("rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)

    def write_bytes(self, uri: str, conn: str | None, data: bytes) -> None:
        self._path(uri, conn).write_bytes(data)

    def exists(self, uri: str, conn: str | None) -> bool:
        return bool(self._path(uri, conn).exists())

    def sql_engine(self, conn: str, *, write: bool = False) -> Engine:
        from airflow.sdk import BaseHook
        from airflow.sdk.exceptions import AirflowNotFoundException

        try:
            hook = BaseHook.get_connection(conn).get_hook()  # type: ignore[no-untyped-call]
        except AirflowNotFoundException:
            raise InputError(f"connection {conn!r} does not exist") from None
        get_engine = getattr(hook, "get_sqlalchemy_engine", None)
        if get_engine is None:
            raise InputError(f"connection {conn!r} is not a SQL connection")
        engine: Engine = get_engine()
        return engine


def task_lookup(conn_id: str) -> ConnectionFields | None:
    """A connection from the task's connection store (None when it does not exist)."""
    from airflow.sdk import BaseHook
    from airflow.sdk.exceptions import AirflowNotFoundException

    from airflow_privacy.ledger.location import ConnectionFields

    try:
        conn = BaseHook.get_connection(conn_id)
    except AirflowNotFoundException:
        return None
    return ConnectionFields(
        conn_id=conn_id,
        host=conn.host,
        port=conn.port,
        schema=conn.schema,
        login=conn.login,
        password=conn.password,
        extra=conn.extra_dejson or {},
    )


def locate(conn_id: str | None, lookup: Callable[[str], Any] = task_lookup) -> LedgerLocation:
    """The ledger of an operator whose ``privacy_ledger_conn_id`` is ``conn_id``."""
    from airflow_privacy.ledger.location import resolve
    from airflow_privacy.providers.airflow.config import setting

    return resolve(None, conn_id=conn_id, lookup=lookup, config=setting)


def make_context(
    log: Callable[[str], None], context: Mapping[str, Any], conn_id: str | None
) -> GateContext:
    from airflow_privacy.gate.context import GateContext

    ti = context.get("ti")
    origin: dict[str, Any] = {"front_end": "airflow"}
    if ti is not None:
        origin.update(
            dag_id=getattr(ti, "dag_id", None),
            run_id=getattr(ti, "run_id", None),
            task_id=getattr(ti, "task_id", None),
            try_number=getattr(ti, "try_number", None),
        )
    return GateContext(
        progress=log,
        connections=AirflowConnections(),
        locate_ledger=lambda explicit: locate(conn_id),
        origin=origin,
    )


def execute(
    operator: Any,
    context: Mapping[str, Any],
    service: Callable[[GateContext], Envelope],
    on_unsafe: str = "fail",
) -> dict[str, Any]:
    """Run ``service`` for ``operator`` and turn its outcome into the task's (module doc).
    A templated argument of ``operator`` that rendered blank is bad input
    (:func:`~airflow_privacy.providers.airflow.params.check_rendered`)."""
    from airflow_privacy.providers.airflow.params import check_rendered

    def checked(ctx: GateContext) -> Envelope:
        check_rendered(operator)
        return service(ctx)

    def keep(envelope: dict[str, Any]) -> None:
        # what the task's OpenLineage facets are built from (providers.airflow.lineage)
        operator._privacy_envelope = envelope

    return run(
        context,
        checked,
        log=lambda message: operator.log.info("%s", message),
        conn_id=getattr(operator, "privacy_ledger_conn_id", None),
        on_unsafe=on_unsafe,
        keep=keep,
    )


def run(
    context: Mapping[str, Any],
    service: Callable[[GateContext], Envelope],
    *,
    log: Callable[[str], None],
    conn_id: str | None,
    on_unsafe: str = "fail",
    keep: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """:func:`execute` for any task (an operator's, or a task of one's own through
    :func:`airflow_privacy.providers.airflow.record_check`): ``log`` takes its progress lines,
    ``conn_id`` is its ledger connection, ``keep`` gets the envelope (a blocked one too)."""
    from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

    ti = context.get("ti")
    with speaking("airflow"):
        try:
            env = service(make_context(log, context, conn_id))
        except (ReleaseBlocked, InputError, IllegalTransition, LedgerUnavailable) as exc:
            blocked = getattr(exc, "envelope", None)
            if keep is not None and blocked is not None:
                keep(blocked.to_dict())
            raise task_error(exc, ti) from None
        data = env.to_dict()
        if keep is not None:
            keep(data)
    if ti is not None:
        ti.xcom_push(key=REPORT_KEY, value=data)
    log(f"{env.step} {env.outcome}: {env.summary}")
    for reason in env.reasons:
        log(f"reason: {reason}")
    for advice in env.advice:
        log(f"the way forward: {advice.get('text')}")
    if env.safe is False:
        message = f"release blocked by {env.name}: " + ("; ".join(env.reasons) or env.summary)
        if on_unsafe == "fail":
            raise AirflowFailException(message)
        if on_unsafe == "skip":
            raise AirflowSkipException(message)
    return data


def task_error(exc: Exception, ti: Any = None) -> Exception:
    """The exception a task raises for one of the gate's errors (module doc); a blocked
    release's envelope is pushed to XCom first."""
    from airflow.sdk.exceptions import AirflowFailException

    if isinstance(exc, ReleaseBlocked):
        envelope: Any = exc.envelope
        if envelope is not None and ti is not None:
            ti.xcom_push(key=REPORT_KEY, value=envelope.to_dict())
        forward = [str(a.get("text")) for a in getattr(envelope, "advice", None) or []]
        return AirflowFailException(
            f"BLOCKED: {exc}"
            + ("; the way forward (each re-checked): " + "; ".join(forward) if forward else "")
        )
    if isinstance(exc, InputError):
        return AirflowFailException(f"bad input: {exc}")
    if isinstance(exc, IllegalTransition):
        return AirflowFailException(f"illegal transition: {exc}")
    if isinstance(exc, LedgerUnavailable):
        return LedgerUnavailableError(f"ledger unavailable (retries apply): {exc}")
    return exc


def attempt_of(operator: Any, context: Mapping[str, Any]) -> str | None:
    """The attempt an operator records under: ``attempt`` (a UUID, templated), else the
    ``attempt`` of the envelope pushed by ``attempt_task_id``."""
    return resolve_attempt(
        getattr(operator, "attempt", None), getattr(operator, "attempt_task_id", None), context
    )


def resolve_attempt(given: Any, task_id: str | None, context: Mapping[str, Any]) -> str | None:
    from airflow_privacy.providers.airflow.params import blank, text

    if not blank(given):
        return text(given, "attempt")
    if not task_id:
        return None
    ti = context["ti"]
    env = ti.xcom_pull(task_ids=task_id)
    attempt = env.get("attempt") if isinstance(env, dict) else None
    if not isinstance(attempt, dict) or not attempt.get("uuid"):
        raise InputError(
            f"attempt_task_id {task_id!r} pushed no attempt (did it run? is it an "
            "OpenAttemptOperator?)"
        )
    return str(attempt["uuid"])
