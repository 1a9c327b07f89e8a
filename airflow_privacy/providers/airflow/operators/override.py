"""``StewardOverrideOperator``: the optional steward step after a blocked gate, built on the
standard provider's human-in-the-loop operator (Airflow 3.3: the task waits in
``awaiting_input`` and is answered in the UI or through the REST API).

When this run's attempt was blocked, it asks (in the ledger, as the person who triggered
the run) for a steward's decision, and shows the redacted reasons to the steward with three
options: *Publish anyway* (with a reason) publishes through
:func:`airflow_privacy.gate.attempts.override` (the bytes verified, the files copied, who
asked, who approved, when, why and the policy version recorded); *Set it aside (supersede)*
(with a reason) records that the block no longer stands without publishing anything, so a
new attempt of the release is judged afresh; both are refused when the steward is the
person who asked (four eyes). *Keep the block* records the rejection. When the attempt was
not blocked it has nothing to decide and skips. Without this step a block stands.

Given ``attempt`` (a UUID, templated) instead of ``attempt_task_id``, it decides a request
asked elsewhere, e.g. on the command line (``airflow-privacy ledger supersede ATTEMPT``): a
steward who works in Airflow answers it from a small DAG triggered with the attempt's UUID
(the example DAG ``privacy_steward_decisions``). It shows who asked, when and why, with the
redacted reasons of the block, and offers *Set it aside (supersede)* or *Keep the block*;
nothing is published from there (publishing a blocked release anyway takes its files:
``ledger approve ATTEMPT RELEASE --to DIR``, or this run's own steward step). The attempt
must be blocked with a request pending, else the task fails naming it; the asker cannot
approve (four eyes). That DAG has no gate, so no run of it publishes; its run is green when
the steward's answer was recorded (the envelope in XCom says which).

Wire it between the gate and the report teardown (``publish >> steward >> report``, the
report as the teardown): the report then reads the ledger after the steward's decision, and
the run is green only when the ledger says this run's attempt was published. The provider's
cluster policy accepts this operator after the gate (it publishes only through the ledger,
with four eyes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.providers.standard.operators.hitl import HITLOperator
from airflow.sdk import Param

PUBLISH = "Publish anyway"
SET_ASIDE = "Set it aside (supersede)"
KEEP = "Keep the block"


class StewardOverrideOperator(HITLOperator):
    """Ask a steward whether to publish this run's blocked attempt anyway (module doc).

    :param attempt_task_id: the :class:`OpenAttemptOperator` of this run
    :param attempt: instead of ``attempt_task_id``: the UUID of a blocked attempt whose
        request was asked elsewhere (templated; module doc)
    :param release: the release file (path/URI), verified and copied when approved (with
        ``attempt_task_id``; required there)
    :param publish_to: where an approved release is published (as the gate's ``publish_to``;
        with ``attempt_task_id``; required there)
    :param conn_id: the connection of URIs
    :param privacy_ledger_conn_id: the ledger connection
    :param subject: the headline the steward sees (default: "Publish this blocked release
        anyway?")
    Also the human-in-the-loop arguments (``assigned_users``, ``response_timeout``,
    ``notifiers``). The operator sets the others: ``options`` (Publish anyway / Set it
    aside (supersede) / Keep the block), ``defaults`` (Keep the block, also on a timeout),
    ``multiple`` (one answer), ``body`` (the redacted reasons of the block). The trigger
    rule defaults to ``all_done``.

    Returns (XCom) the report envelope (step ``override``: ``published`` or ``rejected``;
    step ``supersede``: ``superseded``).
    """

    template_fields: Sequence[str] = (
        *HITLOperator.template_fields,
        "release",
        "publish_to",
        "attempt",
    )

    def __init__(
        self,
        *,
        attempt_task_id: str | None = None,
        attempt: str | None = None,
        release: str | None = None,
        publish_to: str | None = None,
        conn_id: str | None = None,
        privacy_ledger_conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        from airflow_privacy.ledger.location import DEFAULT_CONN_ID

        _check_arguments(attempt_task_id, attempt, release, publish_to)

        kwargs.setdefault("trigger_rule", "all_done")
        kwargs.setdefault(
            "subject",
            "Publish this blocked release anyway?"
            if attempt is None
            else "Set this blocked release aside?",
        )
        given = kwargs.pop("params", None)  # the DAG's params arrive here too
        params: dict[str, Any] = {}
        if given is not None:
            getter = getattr(given, "get_param", None)
            params = {k: getter(k) if getter else given[k] for k in given}
        # a default, so the task starts (params are validated then); an approval without a
        # reason is refused when the steward answers
        params["reason"] = Param("", type="string", description="why (kept in the ledger)")
        options = [PUBLISH, SET_ASIDE, KEEP] if attempt is None else [SET_ASIDE, KEEP]
        super().__init__(options=options, defaults=KEEP, params=params, **kwargs)
        self.attempt_task_id = attempt_task_id
        self.attempt = attempt
        self.release = release
        self.publish_to = publish_to
        self.conn_id = conn_id
        self.privacy_ledger_conn_id = privacy_ledger_conn_id or DEFAULT_CONN_ID

    def _context(self, context: Any) -> Any:
        from airflow_privacy.providers.airflow import adapter

        return adapter.make_context(
            lambda m: self.log.info("%s", m), context, self.privacy_ledger_conn_id
        )

    def _uuid(self, context: Any) -> str | None:
        """The attempt to decide: ``attempt`` as rendered, else this run's."""
        from airflow_privacy.providers.airflow import adapter

        if self.attempt_task_id is None:
            return _named_attempt(self.attempt)
        return adapter.attempt_of(self, context)

    def execute(self, context: Any) -> Any:
        from airflow.sdk.exceptions import AirflowSkipException

        from airflow_privacy.gate.attempts import OverrideRequest, override, same_run

        uuid = self._uuid(context)
        if uuid is None:
            raise AirflowSkipException("no attempt was opened: nothing to override")
        ctx = self._context(context)
        if self.attempt_task_id is None:
            self.body = _named_body(uuid, ctx)
            return super().execute(context)
        with ctx.open_ledger(None) as db:
            info = db.attempt(uuid)
        same_run(info, ctx)
        if info.status != "blocked":
            raise AirflowSkipException(f"attempt {uuid} is {info.status}: nothing to override")
        pending = (info.override or {}).get("outcome") == "pending"
        if not pending:
            run = context.get("dag_run")
            asker = getattr(run, "triggering_user_name", None) or "the schedule"
            why = f"run {context['run_id']} asks a steward"
            override(OverrideRequest(attempt=uuid, action="ask", by=str(asker), reason=why), ctx)
        self.body = (
            _blocked_text(info, uuid)
            + "\n\nPublishing it anyway, or setting it aside (nothing is published; a new attempt "
            "is judged afresh), is recorded with your name, the time, your reason and the "
            "dataset's policy version. The person who triggered the run cannot approve."
        )
        return super().execute(context)

    def execute_complete(self, context: Any, event: dict[str, Any]) -> Any:
        from airflow_privacy.gate.attempts import OverrideRequest, override
        from airflow_privacy.gate.refs import ReleaseRef
        from airflow_privacy.providers.airflow import adapter

        answer = super().execute_complete(context, event)
        user = answer.get("responded_by_user") or {}
        who = str(user.get("name") or user.get("id") or "unknown")
        reason = str((answer.get("params_input") or {}).get("reason") or "").strip()
        chosen = answer.get("chosen_options") or []
        approve, aside = PUBLISH in chosen, SET_ASIDE in chosen
        if (approve or aside) and not reason:
            from airflow.sdk.exceptions import AirflowFailException

            what = PUBLISH if approve else SET_ASIDE
            raise AirflowFailException(
                f"{who} chose {what!r} without a reason: the decision is recorded with its "
                "reason, so nothing was done (the block stands)"
            )
        uuid = self._uuid(context)
        assert uuid is not None
        if approve and self.attempt_task_id is None:
            from airflow.sdk.exceptions import AirflowFailException

            raise AirflowFailException(
                f"{PUBLISH!r} is not offered for an attempt named by `attempt` (its files are "
                "not known here): nothing was done"
            )

        def service(ctx: Any) -> Any:
            return override(
                OverrideRequest(
                    attempt=uuid,
                    action="approve" if approve else "set-aside" if aside else "reject",
                    reason=reason or "(no reason given)", by=who,
                    release=ReleaseRef(path=str(self.release), conn=self.conn_id)
                    if approve
                    else None,
                    destination=self.publish_to if approve else None, conn=self.conn_id,
                ),
                ctx,
            )  # fmt: skip

        return adapter.run(
            context,
            service,
            log=lambda m: self.log.info("%s", m),
            conn_id=self.privacy_ledger_conn_id,
            on_unsafe="continue",
        )


def _check_arguments(
    attempt_task_id: str | None, attempt: str | None, release: str | None, publish_to: str | None
) -> None:
    """Exactly one of ``attempt_task_id`` (with ``release`` and ``publish_to``) and
    ``attempt`` (without them), in the operator's argument names."""
    if (attempt_task_id is None) == (attempt is None):
        raise ValueError(
            "StewardOverrideOperator takes exactly one of attempt_task_id (this run's attempt) "
            "and attempt (the UUID of an attempt whose request was asked elsewhere)"
        )
    if attempt_task_id is not None and (not release or not publish_to):
        missing = [n for n, v in (("release", release), ("publish_to", publish_to)) if not v]
        raise ValueError(
            f"StewardOverrideOperator with attempt_task_id needs {' and '.join(missing)} (what "
            "'Publish anyway' verifies and where it copies it)"
        )
    if attempt is not None and (release or publish_to):
        raise ValueError(
            "StewardOverrideOperator with attempt offers no 'Publish anyway': release and "
            "publish_to go with attempt_task_id"
        )


def _named_attempt(value: str | None) -> str:
    """``attempt`` as rendered: a UUID, else the task fails naming the argument."""
    import uuid as uuidlib

    from airflow.sdk.exceptions import AirflowFailException

    text = str(value or "").strip()
    try:
        return str(uuidlib.UUID(text))
    except ValueError:
        shown = text if len(text) <= 80 else text[:77] + "..."
        raise AirflowFailException(
            f"attempt must be an attempt's UUID (as `airflow-privacy ledger show` lists it), "
            f"got {shown!r}"
        ) from None


def _named_body(uuid: str, ctx: Any) -> str:
    """What the steward reads for a request asked elsewhere; fails unless the attempt is
    blocked with a request pending."""
    from airflow.sdk.exceptions import AirflowFailException

    from airflow_privacy.core.redaction import redact
    from airflow_privacy.errors import InputError, speaking

    try:
        with ctx.open_ledger(None) as db:
            info = db.attempt(uuid)
    except InputError as exc:
        with speaking("airflow"):
            raise AirflowFailException(f"attempt: {exc}") from None
    pending = info.override or {}
    if info.status != "blocked" or pending.get("outcome") != "pending":
        raise AirflowFailException(
            f"attempt {uuid} ({info.release.name}) is {info.status} with no request pending: "
            "nothing to decide. A steward asks first, e.g. `airflow-privacy ledger supersede "
            f"{uuid} --reason ...`"
        )
    kind = str(pending.get("kind") or "override")
    asked = (
        f"{redact(str(pending.get('requested_by')))} asked for a {kind} at "
        f"{pending.get('requested_at')}: {redact(str(pending.get('request_reason') or ''))}"
    )
    return (
        f"{_blocked_text(info, uuid)}\n\n{asked}\n\nSetting it aside records that the block "
        "no longer stands; nothing is published and a new attempt is judged afresh. It is "
        "recorded with your name, the time, your reason and the dataset's policy version. The "
        "person who asked cannot approve."
    )


def _blocked_text(info: Any, uuid: str) -> str:
    """The release, the attempt and the redacted reasons of its block, as the steward reads
    them (both ways of naming the attempt)."""
    from airflow_privacy.core.redaction import redact

    reasons = "\n".join(f"* {redact(str(r))}" for r in info.reasons)
    return f"**{info.release.name}** (attempt `{uuid}`) was blocked by the gate:\n\n{reasons}"
