"""A steward's decisions, inside Airflow: answer a request asked elsewhere.

A steward who works on the command line asks to set a blocked attempt aside (``airflow-privacy
ledger supersede ATTEMPT --reason ...``); a second steward, who works in Airflow, triggers
this DAG with the attempt's UUID (the trigger form's ``attempt``) and answers in the UI (or
through the REST API): *Set it aside (supersede)* or *Keep the block*. The ledger records both
people, when and why, and the dataset's policy version; the person who asked cannot approve
(four eyes). Nothing is published from here: the DAG has no gate. Its run is green when the
answer was recorded (the task's XCom holds the envelope: outcome ``superseded`` or
``rejected``), and red when there is nothing to decide (no such attempt, not blocked, no
request pending), when the asker answers, or when an approval comes without a reason.
"""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, Param

from airflow_privacy.providers.airflow.operators.override import StewardOverrideOperator

with DAG(
    dag_id="privacy_steward_decisions",
    schedule=None,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["privacy", "steward"],
    params={
        "attempt": Param(
            "",
            type="string",
            title="Attempt",
            description="the UUID of the blocked attempt whose request to decide "
            "(`airflow-privacy ledger show` lists it)",
        ),
    },
) as dag:
    StewardOverrideOperator(task_id="decide", attempt="{{ params.attempt }}")
