"""Run several DAG runs in one process (``dag.test``), as ``airflow dags test`` does, and
print what happened to each as one JSON line: the run's state, every task's state (a mapped
task's instances as ``task[0]``, ``task[1]``...), every XCom, the asset events its tasks
emitted, and the run's log lines (for the tests that grep logs).

``python -m tests.airflow.dag_driver DAG_ID '[{"conf": {...}, "env": {...}}, ...]'``: each
item's ``env`` is applied before its run (the ledger connection, the output folder). One
process amortizes Airflow's start-up over the runs; the DAGs folder is
``AIRFLOW__CORE__DAGS_FOLDER``.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import sys
from typing import Any


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(record.getMessage())
        except Exception:  # a record that cannot be formatted: keep its template
            self.lines.append(str(record.msg))


def main(dag_id: str, items: list[dict[str, Any]]) -> None:
    from airflow.dag_processing.dagbag import DagBag
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    bag = DagBag(dag_folder=os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    dag = bag.get_dag(dag_id)
    if dag is None:
        raise SystemExit(f"DAG {dag_id} not found: {bag.import_errors}")
    original = copy.deepcopy(dag.params)
    task_params = {t.task_id: copy.deepcopy(t.params) for t in dag.tasks}
    for item in items:
        # a run's conf is merged into the DAG's and the tasks' params in place: reset them
        dag.params = copy.deepcopy(original)
        for t in dag.tasks:
            t.params = copy.deepcopy(task_params[t.task_id])
        os.environ.update(item.get("env") or {})
        handler = _Collect()
        logging.getLogger().addHandler(handler)
        try:
            dr = dag.test(run_conf=item.get("conf") or {})
        finally:
            logging.getLogger().removeHandler(handler)
        with create_session() as session:
            tis = {
                ti.task_id if ti.map_index < 0 else f"{ti.task_id}[{ti.map_index}]": str(ti.state)
                for ti in dr.get_task_instances(session=session)
            }
            xcoms: dict[str, dict[str, Any]] = {}
            rows = session.query(XComModel).filter(
                XComModel.dag_id == dag_id, XComModel.run_id == dr.run_id
            )
            for x in rows:
                xcoms.setdefault(x.task_id, {})[x.key] = x.value
            from airflow.models.asset import AssetEvent, AssetModel

            events = [
                {"task": e.source_task_id, "uri": uri, "extra": e.extra}
                for e, uri in session.query(AssetEvent, AssetModel.uri)
                .join(AssetModel, AssetModel.id == AssetEvent.asset_id)
                .filter(AssetEvent.source_dag_id == dag_id, AssetEvent.source_run_id == dr.run_id)
            ]
        line = "RESULT " + json.dumps(
            {
                "state": str(dr.state),
                "run_id": dr.run_id,
                "tasks": tis,
                "xcoms": xcoms,
                "asset_events": events,
                "log": handler.lines,
            },
            default=str,
        )
        # a file of its own when asked (DAG_DRIVER_RESULTS): other processes forked by the
        # run (OpenLineage's senders) write to the same stdout and can split a long line
        out = os.environ.get("DAG_DRIVER_RESULTS")
        if out:
            with open(out, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], json.loads(sys.argv[2]))
