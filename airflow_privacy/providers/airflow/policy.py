"""The gate's shape, enforced when a DAG is parsed (an Airflow cluster policy, loaded from
this package's ``airflow.policy`` entry point: every deployment that installs the provider
gets it, without an ``airflow_local_settings.py``).

Airflow decides a run's state by its leaves. Two shapes would let a run be green while the
ledger says nothing was published, so a DAG that has a gate (:class:`PublishReleaseOperator`)
must have neither:

* a task after the gate that is not a teardown (e.g. a cleanup step with
  ``trigger_rule="all_done"``): it is a leaf, and its success would turn a blocked run
  green (the steward's :class:`StewardOverrideOperator` is the exception: it publishes only
  through the ledger, with four eyes, and the report teardown still decides the run);
* no :class:`ReleaseReportOperator` teardown after the gate whose failure fails the run
  (``report.as_teardown()``, which sets ``on_failure_fail_dagrun=True``): the report reads
  the ledger and fails unless it says this run's attempt was published, so marking the gate
  "success" by hand, or any other way around it, still ends the run red.

Such a DAG is refused with :class:`AirflowClusterPolicyViolation` (an import error naming
the tasks and the fix); every other DAG is left alone.
"""

from __future__ import annotations

from typing import Any

from airflow.policies import hookimpl


def gate_shape_problems(dag: Any) -> list[str]:
    """Why ``dag``'s gates could end a run green without a publication (empty: none)."""
    from airflow_privacy.providers.airflow.operators.override import StewardOverrideOperator
    from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
    from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator

    problems: list[str] = []
    for gate in dag.tasks:
        if not isinstance(gate, PublishReleaseOperator):
            continue
        after = sorted(gate.get_flat_relatives(upstream=False), key=lambda t: t.task_id)
        for task in after:
            # the steward's override publishes only through the ledger, with four eyes
            if not task.is_teardown and not isinstance(task, StewardOverrideOperator):
                problems.append(
                    f"task {task.task_id!r} runs after the gate {gate.task_id!r} and is not a "
                    "teardown: as a leaf of the DAG its success would make a run green whose "
                    f"release was blocked; run it before the gate, or make it a teardown "
                    f"({task.task_id}.as_teardown())"
                )
        reports = [
            t
            for t in after
            if isinstance(t, ReleaseReportOperator) and t.is_teardown and t.on_failure_fail_dagrun
        ]
        if not reports:
            problems.append(
                f"the gate {gate.task_id!r} has no ReleaseReportOperator teardown after it "
                "that fails the run unless the ledger says this run's attempt was published "
                f"({gate.task_id} >> report.as_teardown(); not on_failure_fail_dagrun=False): "
                "without it, a gate marked success by hand would leave a green run with "
                "nothing published"
            )
    return problems


@hookimpl
def dag_policy(dag: Any) -> None:
    """Refuse a DAG whose gate could end a run green without a publication (module doc)."""
    problems = gate_shape_problems(dag)
    if problems:
        from airflow.exceptions import AirflowClusterPolicyViolation

        raise AirflowClusterPolicyViolation(
            f"DAG {dag.dag_id!r} is refused by airflow-privacy: " + "; ".join(problems)
        )
