"""The publish step (the gate), declared once (:class:`PublishStep`; ``airflow-privacy
publish`` and ``PublishReleaseOperator`` are derived from it): publish an attempt's release
only when every check of the attempt passed, as the ledger records it
(:func:`airflow_privacy.gate.attempts.publish` decides, in one transaction).

The operator adds what only a DAG has: the states of the tasks before the gate (a failed task
blocks) and the attempt its run opened (none: nothing is published)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.attempts import PublishRequest
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope


class PublishStep(Step):
    """``publish``: the gate (module doc)."""

    name = "publish"
    summary = "the gate: publish an attempt's release when every check passed"
    description = (
        "Read back every check recorded for the attempt and decide: publish (copy RELEASE and "
        "its manifest to --to, atomically, and mark the release published) only when every "
        "required check is recorded and passed and RELEASE is still the content that was "
        "checked; otherwise block the attempt with every reason. Without RELEASE and --to, "
        "only the ledger is updated. Exit 0 = published, 1 = blocked."
    )
    operator = "airflow_privacy.providers.airflow.operators.publish.PublishReleaseOperator"
    fields = (
        Field(
            "release",
            "ref",
            "the release that was checked, verified to be the content the "
            "attempt recorded, then copied with its manifest",
            cli="RELEASE",
            variants=("sql_table",),
            type_hint="str | None",
            cli_note="a file, or table:NAME on --conn (copied inside its database); without "
            "it and --to, only the ledger is updated",
            airflow_note="exactly one of release and sql_table (with conn_id)",
        ),
        Field(
            "to",
            "text",
            "the folder (or URI prefix) to publish into; for a SQL table, the "
            "name of the published table (created in the same database); give each release "
            "its own",
            cli="--to",
            airflow="publish_to",
            metavar="DIR",
            airflow_required=True,
            type_hint="str",
        ),
        Field(
            "attempt",
            "text",
            "the attempt to decide",
            cli="--attempt",
            airflow=None,
            required=True,
            metavar="UUID",
        ),
        shared.conn("the database URL of a table:SCHEMA.NAME release", cli="--conn"),
    )
    cli_groups = ("ledger", "output")

    def rules(self, known: Known) -> None:
        from airflow_privacy.gate.attempts import paired

        if known.has("release", "to"):
            paired(known["release"], known["to"])

    def request(self, values: Mapping[str, Any]) -> PublishRequest:
        from airflow_privacy.gate.attempts import PublishRequest

        return PublishRequest(
            attempt=values["attempt"],
            release=values.get("release"),
            destination=values.get("to"),
            failed_tasks=dict(values.get("failed_tasks") or {}),
            ledger=values.get("ledger"),
            name=values.get("name") or "publish",
            conn=values.get("conn"),
        )

    def run(self, req: PublishRequest, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.attempts import publish

        self.check(Known({"release": req.release, "to": req.destination}))
        return publish(req, ctx)


PUBLISH = PublishStep()
