"""The sample shape plus a cleanup task with ``trigger_rule="all_done"`` after the gate: the
provider's cluster policy refuses it when it is parsed (its success would make a blocked
run green)."""

from __future__ import annotations

from airflow.sdk import task

from tests.airflow.live_dags.builder import build

dag = build("privacy_live_cleanup", identifiers=False)
with dag:

    @task(trigger_rule="all_done")
    def cleanup() -> None:
        """Remove the run's working files."""

    dag.get_task("publish") >> cleanup()
