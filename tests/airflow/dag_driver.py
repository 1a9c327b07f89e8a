"""Run DAG runs in one process (``dag.test``), as ``airflow dags test`` does, and print
what happened to each as one JSON line: the run's state, every task's state (a mapped
task's instances as ``task[0]``, ``task[1]``...), every XCom, the asset events its tasks
emitted, and the run's log lines (for the tests that grep logs).

``python -m tests.airflow.dag_driver DAG_ID '[{"conf": {...}, "env": {...}}, ...]'``: each
item's ``env`` is applied before its run (the ledger connection, the output folder); the DAGs
folder is ``AIRFLOW__CORE__DAGS_FOLDER``.

``python -m tests.airflow.dag_driver --serve``: the same for many requests, one JSON line
each on stdin (``{"dag_id", "items", "results", "output"}``), answered by one line on stdout
once done. A process pays about 8 s of CPU before its first run (importing Airflow, and the
execution API generating its routes for every API version), so the DAG tests of one module
(one Airflow home, one DAGs folder) share one such process
(:func:`tests.airflow.release_runs.drive`). Each request's output (stdout and stderr, the
file descriptors) goes to its own file, and the environment is restored after it.
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


_PRISTINE: dict[int, tuple[Any, Any, dict[str, Any]]] = {}  # id -> (DAG, params, task params)


def main(dag_id: str, items: list[dict[str, Any]]) -> None:
    from airflow.dag_processing.dagbag import DagBag
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    bag = DagBag(dag_folder=os.environ["AIRFLOW__CORE__DAGS_FOLDER"])
    dag = bag.get_dag(dag_id)
    if dag is None:
        raise SystemExit(f"DAG {dag_id} not found: {bag.import_errors}")
    # a DAG defined in an imported module (the sample DAG) is the same object in every
    # request of a serving driver: its params as first seen, kept with it
    _, original, task_params = _PRISTINE.setdefault(
        id(dag),
        (dag, copy.deepcopy(dag.params), {t.task_id: copy.deepcopy(t.params) for t in dag.tasks}),
    )
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


def serve() -> None:
    """Answer requests until stdin closes (module doc)."""
    import traceback

    control = os.fdopen(os.dup(1), "w", buffering=1)  # the answers
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # between requests nothing may write into the answers
    os.close(null)
    for line in sys.stdin:
        request = json.loads(line)
        saved_env = dict(os.environ)
        saved_fds = (os.dup(1), os.dup(2))
        ok = True
        with open(request["output"], "w", encoding="utf-8") as output:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(output.fileno(), 1)
            os.dup2(output.fileno(), 2)
            try:
                os.environ["DAG_DRIVER_RESULTS"] = request["results"]
                main(request["dag_id"], request["items"])
            except BaseException:
                traceback.print_exc()
                ok = False
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os.dup2(saved_fds[0], 1)
                os.dup2(saved_fds[1], 2)
                for fd in saved_fds:
                    os.close(fd)
                os.environ.clear()
                os.environ.update(saved_env)
        control.write(json.dumps({"ok": ok}) + "\n")


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        main(sys.argv[1], json.loads(sys.argv[2]))
