"""The gate's invariants in a running Airflow (API server + scheduler + DAG processor, the
provider from its entry points, runs triggered through the REST API): what a hurried
operator does around the gate never makes a run green or publishes.

* a first release with the people's identifiers: green, published (the baseline);
* the same file again without identifiers: one release (already published, nothing copied);
* a pasted attempt UUID (another run's, published) in the gate: red, nothing published;
* an edited ``open_attempt`` XCom (pointing at that attempt): red, nothing published;
* the gate marked "success" by hand before it ran: red (the report teardown reads the
  ledger), nothing published, the attempt still open;
* a check of other columns (``group_columns=["sex"]``): red, nothing published;
* a weaker trigger parameter than the dataset's policy (``check_k=2`` under a policy of
  ``k-anonymity:k=3``): the check passes, the gate blocks naming the policy line: red;
* a first release under a near-miss name (``lvie`` beside ``live``): refused, red;
* a DAG with a cleanup task (``all_done``) after the gate: refused when parsed (an import
  error naming the task), so it never runs;
* an audit scoped away from its own dataset (``audit_datasets=["elsewhere"]``): red;
* a side task that failed, then recovered: "Clear failed tasks" re-runs the gate, which says
  the attempt is decided and what to clear; clearing ``open_attempt`` and what follows opens
  a new attempt, which publishes: green;
* a supersede asked on the command line (``ledger supersede``, by alice) and answered inside
  Airflow by a steward (``privacy_steward_decisions``, the shipped DAG, triggered with the
  attempt's UUID): set aside, both people recorded; the same DAG for an attempt with nothing
  pending, or for text that is no UUID: red, nothing decided;
* DP releases (``privacy_live_dp``): two spend the dataset's budget and publish (green); the
  third is refused before any noise is drawn: red, nothing published, the spend unchanged;
  a DAG scheduled on the release asset runs after each of the two, not after the third.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.gate.policy import Policy
from airflow_privacy.ledger import ReleaseLedger
from tests.airflow.live import Airflow, running_airflow, wait_for
from tests.policy_setup import record_policy

pytestmark = pytest.mark.long_module

HERE = Path(__file__).resolve().parent
DAG = "privacy_live"
RUN_TIMEOUT_S = 600  # generous: the bound catches a hang, not a slow machine


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Airflow, Path, str]]:
    tmp = tmp_path_factory.mktemp("live")
    url = f"sqlite:///{tmp / 'ledger.db'}"
    env = {
        "AIRFLOW_PRIVACY_LEDGER_URL": url,
        "AIRFLOW_PRIVACY_LEDGER_KEY": "tests-only-key-0123456789abcdefghijklmnopqrstuv",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        # OpenLineage's file transport: every task's events, for the DP test to read
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(
            {"type": "file", "log_file_path": str(tmp / "lineage.jsonl"), "append": True}
        ),
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "privacy-live",
    }
    # the organization's part: each dataset's policy, before its first release
    record_policy(url, "live", policy=Policy(criteria=[("k-anonymity", {"k": 3})]))
    record_policy(url, "wards", "wards-aside", "audited", "elsewhere", "sidecar", "asked")
    record_policy(url, "dpsurvey", policy=Policy(dp={"unit": "rho", "cap": 1.0}))
    with running_airflow(
        tmp, "gate", HERE / "live_dags", DAG, env_extra=env, users=("steward",)
    ) as af:
        yield af, tmp / "releases", url


def _call(af: Airflow, method: str, path: str, body: Any = None, user: str = "admin") -> Any:
    """One REST call (:meth:`Airflow.call`: a GET or PATCH answered 500 is tried again)."""
    return af.call(method, path, body, user)


def _trigger(af: Airflow, dag: str, conf: dict[str, Any]) -> str:
    """Trigger a run under a run id chosen here, so that a POST answered 500 under load (the
    SQLite metadata database locked; seen once in a full local run) can be tried again: a
    run the first POST did create answers 409 to the second."""
    import uuid

    run_id = f"manual__{uuid.uuid4().hex}"
    body = {"dag_run_id": run_id, "logical_date": None, "conf": conf}
    for attempt in range(5):
        try:
            run = _call(af, "POST", f"/api/v2/dags/{dag}/dagRuns", body)
            return str(run["dag_run_id"])
        except urllib.error.HTTPError as exc:
            if exc.code == 409 and attempt > 0:
                return run_id
            if exc.code != 500 or attempt == 4:
                raise
            time.sleep(3)
    raise AssertionError("unreachable")  # pragma: no cover


def _run(af: Airflow, dag: str, run_id: str) -> dict[str, Any]:
    out: dict[str, Any] = _call(af, "GET", f"/api/v2/dags/{dag}/dagRuns/{run_id}")
    return out


def _finished(af: Airflow, dag: str, run_id: str) -> str:
    state = {"v": ""}

    def done() -> bool:
        state["v"] = str(_run(af, dag, run_id)["state"])
        return state["v"] in ("success", "failed")

    wait_for(f"run {run_id}", done, af, RUN_TIMEOUT_S)
    return state["v"]


def _tasks(af: Airflow, dag: str, run_id: str) -> dict[str, str]:
    out = _call(af, "GET", f"/api/v2/dags/{dag}/dagRuns/{run_id}/taskInstances")
    return {t["task_id"]: str(t["state"]) for t in out["task_instances"]}


def _task_state(af: Airflow, dag: str, run_id: str, task: str) -> str:
    return _tasks(af, dag, run_id).get(task, "")


def _xcom(af: Airflow, dag: str, run_id: str, task: str, key: str = "return_value") -> Any:
    path = (f"/api/v2/dags/{dag}/dagRuns/{run_id}/taskInstances/{task}/xcomEntries/"
            f"{key}?deserialize=true")  # fmt: skip
    return _call(af, "GET", path)["value"]


def _patch_state(af: Airflow, dag: str, run: str, task: str, state: str) -> None:
    """Set a task's state by hand, as an Op would in the UI."""
    _call(af, "PATCH", f"/api/v2/dags/{dag}/dagRuns/{run}/taskInstances/{task}",
          {"new_state": state})  # fmt: skip


def _safe(run_id: str) -> str:
    return run_id.replace(":", "_").replace("+", "_")


def _published(out: Path, run_id: str) -> bool:
    return (out / "published" / _safe(run_id)).exists()


def _go(out: Path, run_id: str) -> None:
    (out / f"{_safe(run_id)}.go").write_text("go")


def _wait_task(af: Airflow, run_id: str, task: str, states: tuple[str, ...]) -> None:
    wait_for(f"{task} of {run_id} in {states}",
             lambda: _task_state(af, DAG, run_id, task) in states, af, RUN_TIMEOUT_S)  # fmt: skip


def test_what_an_operator_does_around_the_gate_never_publishes(
    live: tuple[Airflow, Path, str],
) -> None:
    af, out, url = live
    # the baseline: the first release, with identifiers; green and published
    base = _trigger(af, "privacy_live_ids", {"first_release": True, "first_record": 0})
    assert _finished(af, "privacy_live_ids", base) == "success"
    assert _published(out, base)
    opened = _xcom(af, "privacy_live_ids", base, "open_attempt")
    published_attempt = opened["attempt"]["uuid"]

    # in parallel: the same file without identifiers, a pasted UUID, other columns; two runs
    # that hold for the test (an edited XCom, the gate marked success by hand)
    same = _trigger(af, DAG, {"first_record": 0})
    pasted = _trigger(af, DAG, {"first_record": 300, "attempt": published_attempt})
    columns = _trigger(af, DAG, {"first_record": 600, "group_columns": ["sex"]})
    edited = _trigger(af, DAG, {"first_record": 900, "hold": True})
    marked = _trigger(af, DAG, {"first_record": 1200, "hold": True})

    # the edited XCom: open_attempt's envelope now names the published attempt
    _wait_task(af, edited, "hold", ("running",))
    forged = {"value": {"attempt": {"uuid": published_attempt}}, "map_index": -1}
    _call(af, "PATCH",
          f"/api/v2/dags/{DAG}/dagRuns/{edited}/taskInstances/open_attempt/xcomEntries/"
          "return_value", forged)  # fmt: skip
    _go(out, edited)
    # the gate marked success by hand before it ran
    _wait_task(af, marked, "hold", ("running",))
    _patch_state(af, DAG, marked, "publish", "success")
    _go(out, marked)
    # then (fewer runs at once on the SQLite metadata database): a weaker parameter than
    # the policy, and a first release under a near-miss name
    weaker = _trigger(af, DAG, {"first_record": 2100, "check_k": 2})
    near = _trigger(af, DAG, {"first_record": 2400, "dataset": "lvie", "first_release": True})

    runs = (same, pasted, columns, edited, marked, weaker, near)
    states = {run: _finished(af, DAG, run) for run in runs}
    tasks = {run: _tasks(af, DAG, run) for run in states}
    # one content, one publication: already published, nothing copied again
    assert states[same] == "success", tasks[same]
    assert _xcom(af, DAG, same, "publish")["outcome"] == "already-published"
    assert not _published(out, same)
    # every other run: red, and nothing of it published
    for run in (pasted, columns, edited, marked, weaker, near):
        assert states[run] == "failed", (run, tasks[run])
        assert not _published(out, run), run
        assert tasks[run]["report"] == "failed", (run, tasks[run])
    assert tasks[pasted]["publish"] == "failed"
    assert tasks[columns]["check"] == "failed" and tasks[columns]["publish"] == "failed"
    assert tasks[edited]["check"] == "failed" and tasks[edited]["publish"] == "failed"
    assert tasks[marked]["publish"] == "success"  # by hand; the run is red all the same
    # weaker than the policy: the check passed at k=2, the gate names the line it missed
    assert tasks[weaker]["check"] == "success" and tasks[weaker]["publish"] == "failed"
    assert (
        "policy v1 of 'live' requires k-anonymity:k=3; check 'check' measured "
        "k-anonymity:k=2: k=2 is below the policy's 3"
    ) in _xcom(af, DAG, weaker, "publish", key="privacy_report")["reasons"]
    # a near-miss name: the attempt is refused, nothing of it in the ledger
    assert tasks[near]["open_attempt"] == "failed" and tasks[near]["publish"] == "failed"
    with ReleaseLedger(url, create=False) as db:
        releases = db.list()
        assert [(r.version, r.status) for r in releases if r.status == "published"] == [
            ("1", "published")
        ]
        assert releases[0].members == 300  # the baseline's people, recorded once
        by_run = {str(a.origin.get("run_id")): a for r in releases for a in db.attempts(r.id)}
        # the published attempt was never touched by the other runs
        assert db.attempt(published_attempt).status == "published"
        assert by_run[marked].status == "open"  # marked by hand: never decided
        assert by_run[edited].checks == []  # nothing recorded under the edited run's attempt
        assert by_run[pasted].status == "open"
    log = "".join(
        p.read_text(errors="replace") for p in af.home.rglob("*.log") if "publish" in str(p)
    )
    assert "not by this run" in log
    opened = "".join(
        p.read_text(errors="replace") for p in af.home.rglob("*.log") if "open_attempt" in str(p)
    )
    assert "dataset 'lvie' is new, and its name is close to 'live'" in opened


def test_a_cleanup_task_after_the_gate_is_refused_when_parsed(
    live: tuple[Airflow, Path, str],
) -> None:
    af, _out, _url = live
    errors: list[dict[str, Any]] = []

    def reported() -> bool:
        errors[:] = _call(af, "GET", "/api/v2/importErrors")["import_errors"]
        return any("privacy_live_cleanup" in e["filename"] for e in errors)

    wait_for("the cleanup DAG's import error", reported, af, 120)
    (err,) = [e for e in errors if "privacy_live_cleanup" in e["filename"]]
    assert "DAG 'privacy_live_cleanup' is refused by airflow-privacy" in err["stack_trace"]
    assert (
        "task 'cleanup' runs after the gate 'publish' and is not a teardown" in err["stack_trace"]
    )
    with pytest.raises(urllib.error.HTTPError) as missing:
        _call(af, "GET", "/api/v2/dags/privacy_live_cleanup")
    assert missing.value.code == 404
    assert os.environ.get("AIRFLOW_HOME") != str(af.home)  # the test's own home, not the user's


def test_a_steward_override_takes_a_second_person(live: tuple[Airflow, Path, str]) -> None:
    """A blocked run waits for the steward (human in the loop, answered through the REST
    API): the person who triggered the run cannot approve (red, not published); a second
    person can (green, published, both names in the ledger); a second person may instead
    set the block aside (red, nothing published, the attempt superseded, both names kept)."""
    af, out, url = live
    dag = "privacy_live_steward"
    hitl = "/api/v2/dags/{dag}/dagRuns/{run}/taskInstances/steward/-1/hitlDetails"
    runs = {}
    for first, user, option in ((1500, "admin", "Publish anyway"),
                                (1800, "steward", "Publish anyway"),
                                (2100, "aside", "Set it aside (supersede)")):  # fmt: skip
        answer = {"chosen_options": [option], "params_input": {"reason": "accepted"}}
        # the set-aside run is another dataset's first release (wards is published by then)
        dataset = "wards-aside" if user == "aside" else "wards"
        conf = {"first_record": first, "check_k": 500, "dataset": dataset, "first_release": True}
        run = _trigger(af, dag, conf)
        _wait_state(af, dag, run, "steward", "awaiting_input")
        _wait_parked(af, dag, run, "steward")
        assert _task_state(af, dag, run, "publish") == "failed"  # the gate blocked it
        detail = _call(af, "GET", hitl.format(dag=dag, run=run))
        assert "was blocked by the gate" in detail["body"] and "k-anonymity" in detail["body"]
        assert option in detail["options"]
        _call(af, "PATCH", hitl.format(dag=dag, run=run), answer,
              user="steward" if user == "aside" else user)  # fmt: skip
        runs[user] = (run, _finished(af, dag, run))
    (own, own_state), (other, other_state) = runs["admin"], runs["steward"]
    aside, aside_state = runs["aside"]
    assert aside_state == "failed" and not _published(out, aside)  # set aside: nothing out
    assert _task_state(af, dag, aside, "steward") == "success"
    assert own_state == "failed" and not _published(out, own)  # four eyes: refused
    assert _task_state(af, dag, own, "steward") == "failed"
    assert other_state == "success" and _published(out, other)
    with ReleaseLedger(url, create=False) as db:
        by_run = {str(a.origin.get("run_id")): a for r in db.list() for a in db.attempts(r.id)}
        approved = by_run[other]
        assert approved.status == "published" and approved.override is not None
        assert approved.override["requested_by"] == "admin"
        assert approved.override["decided_by"] == "steward"
        assert by_run[own].status == "blocked"
        assert (by_run[own].override or {}).get("outcome") == "pending"
        set_aside = by_run[aside]
        assert set_aside.status == "superseded" and set_aside.override is not None
        assert set_aside.override["kind"] == "supersede"
        assert set_aside.override["asked_as"] == "override"
        assert (set_aside.override["requested_by"], set_aside.override["decided_by"]) == (
            "admin", "steward",
        )  # fmt: skip


def test_a_supersede_asked_on_the_command_line_is_answered_in_airflow(
    live: tuple[Airflow, Path, str],
) -> None:
    from airflow_privacy.cli import main
    from tests.ledger.support import sample

    af, _, url = live
    dag = "privacy_steward_decisions"
    hitl = "/api/v2/dags/{dag}/dagRuns/{run}/taskInstances/decide/-1/hitlDetails"
    with ReleaseLedger(url) as db:
        opened = db.open_attempt("asked", sample(), required=["check"], first_release=True)
        idle = db.open_attempt(
            "asked", sample("bucketized"), required=["check"], first_release=True
        )
        db.block(opened.uuid, ["k-anonymity: 3 groups below k = 5"], by="gate")
    quiet = ["--ledger", url, "--quiet"]
    # alice asks on the command line: the dataset has a policy, so it waits for a second person
    assert main(["ledger", "supersede", opened.uuid, "--by", "alice",
                 "--reason", "the month was loaded twice", *quiet]) == 1  # fmt: skip
    run = _trigger(af, dag, {"attempt": opened.uuid})
    _wait_state(af, dag, run, "decide", "awaiting_input")
    _wait_parked(af, dag, run, "decide")
    detail = _call(af, "GET", hitl.format(dag=dag, run=run))
    assert detail["options"] == ["Set it aside (supersede)", "Keep the block"]
    assert "alice asked for a supersede" in detail["body"]
    assert "the month was loaded twice" in detail["body"] and "k-anonymity" in detail["body"]
    answer = {"chosen_options": ["Set it aside (supersede)"], "params_input": {"reason": "ok"}}
    _call(af, "PATCH", hitl.format(dag=dag, run=run), answer, user="steward")
    assert _finished(af, dag, run) == "success"
    with ReleaseLedger(url, create=False) as db:
        decided = db.attempt(opened.uuid)
        assert decided.status == "superseded" and decided.override is not None
        assert decided.override["kind"] == "supersede"
        assert (decided.override["requested_by"], decided.override["decided_by"]) == (
            "alice", "steward",
        )  # fmt: skip
        assert db.attempt(idle.uuid).status == "open"
    # nothing to decide: an open attempt, the decided one, text that is no UUID: red at once
    for attempt in (idle.uuid, opened.uuid, "not-an-attempt"):
        failed = _trigger(af, dag, {"attempt": attempt})
        assert _finished(af, dag, failed) == "failed"
        assert _task_state(af, dag, failed, "decide") == "failed"
    with ReleaseLedger(url, create=False) as db:
        assert db.attempt(idle.uuid).status == "open"
        assert db.attempt(opened.uuid).status == "superseded"


def _wait_state(af: Airflow, dag: str, run: str, task: str, state: str) -> None:
    def reached() -> bool:
        return _task_state(af, dag, run, task) == state

    wait_for(f"{task} of {run} in {state}", reached, af, RUN_TIMEOUT_S)


def _wait_parked(af: Airflow, dag: str, run: str, task: str) -> None:
    """Until the scheduler saw the worker that parked ``task`` exit (:meth:`Airflow.parked`)."""
    wait_for(f"the worker of {task} in {run} to exit",
             lambda: af.parked(dag, run, task), af, RUN_TIMEOUT_S)  # fmt: skip


def test_an_audit_scoped_away_and_a_recovered_side_task(live: tuple[Airflow, Path, str]) -> None:
    af, out, url = live
    dag = "privacy_live_audit"
    # two datasets, each with its first release (audited against itself: nothing earlier)
    firsts = {
        ds: _trigger(af, dag, {"dataset": ds, "audit_datasets": [ds], "first_release": True,
                               "first_record": first})
        for ds, first in (("audited", 3000), ("elsewhere", 6000))
    }  # fmt: skip
    for run in firsts.values():
        _go_ok(out, run)
    for ds, run in firsts.items():
        assert _finished(af, dag, run) == "success", (ds, _tasks(af, dag, run))
        assert _published(out, run)
    # the next release of "audited" (the same 300 people again) audited against "elsewhere"
    # only: the audit is refused (its own dataset is not in scope), red, nothing published
    away = _trigger(af, dag, {"dataset": "audited", "audit_datasets": ["elsewhere"],
                              "first_record": 3000, "records": 299})  # fmt: skip
    _go_ok(out, away)
    assert _finished(af, dag, away) == "failed"
    tasks = _tasks(af, dag, away)
    assert tasks["audit"] == "failed" and tasks["publish"] == "failed", tasks
    assert not _published(out, away)
    # a side task that fails: the gate blocks (red); it recovers, "Clear failed tasks"
    # re-runs the gate, which says the attempt is decided; clearing open_attempt and
    # everything after it opens a new attempt, judged afresh: green, published
    side = _trigger(af, dag, {"dataset": "sidecar", "audit_datasets": ["sidecar"],
                              "first_record": 9000, "first_release": True})  # fmt: skip
    assert _finished(af, dag, side) == "failed"
    assert _tasks(af, dag, side)["side"] == "failed"
    assert not _published(out, side)
    _go_ok(out, side)
    _clear(af, dag, side, ["side", "publish", "report"], downstream=False)
    assert _finished_again(af, dag, side) == "failed"  # the decided attempt stays blocked
    log = "".join(p.read_text(errors="replace") for p in af.home.rglob("*.log")
                  if "task_id=publish" in str(p) and side in str(p))  # fmt: skip
    assert "was already decided" in log and "clear this run's open-attempt task" in log
    _clear(af, dag, side, ["open_attempt"], downstream=True)
    assert _finished_again(af, dag, side) == "success", _tasks(af, dag, side)
    assert _published(out, side)
    with ReleaseLedger(url, create=False) as db:
        by_run: dict[str, list[str]] = {}
        for r in db.list():
            for a in db.attempts(r.id):
                by_run.setdefault(str(a.origin.get("run_id")), []).append(a.status)
        assert sorted(by_run[side]) == ["blocked", "published"]
        assert by_run[away] == ["open"] or "published" not in by_run[away]


def _go_ok(out: Path, run_id: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{_safe(run_id)}.ok").write_text("ok")


def _clear(af: Airflow, dag: str, run: str, tasks: list[str], downstream: bool) -> None:
    _call(af, "POST", f"/api/v2/dags/{dag}/clearTaskInstances",
          {"dry_run": False, "dag_run_id": run, "task_ids": tasks,
           "include_downstream": downstream, "only_failed": False,
           "reset_dag_runs": True})  # fmt: skip


def _finished_again(af: Airflow, dag: str, run: str) -> str:
    """The run's state once it ran again after a clear (it leaves ``failed`` first)."""
    wait_for(f"run {run} to start again", lambda: _run(af, dag, run)["state"] != "failed", af,
             RUN_TIMEOUT_S)  # fmt: skip
    return _finished(af, dag, run)


def test_dp_releases_stop_when_the_budget_is_spent(live: tuple[Airflow, Path, str]) -> None:
    af, out, url = live
    runs = []
    for _ in range(3):  # one after the other: each spends after the last one's commit
        run = _trigger(af, "privacy_live_dp", {"rho": 0.5})
        runs.append((run, _finished(af, "privacy_live_dp", run)))
    (first, s1), (second, s2), (third, s3) = runs
    assert (s1, s2, s3) == ("success", "success", "failed")
    for run in (first, second):
        assert (out / "published" / _safe(run) / "marginals.csv").is_file()
    assert _task_state(af, "privacy_live_dp", third, "dp_release") == "failed"
    assert not _published(out, third)
    assert not (out / _safe(third) / "marginals.csv").exists()
    refusal = _xcom(af, "privacy_live_dp", third, "dp_release", "privacy_report")
    assert refusal["safe"] is False and "would exceed the budget" in refusal["reasons"][0]
    with ReleaseLedger(url) as db:
        spends = db.dp_spends("dpsurvey")
    assert [s.rho for s in spends] == pytest.approx([0.5, 0.5], rel=1e-12)
    # the consumer scheduled on the release asset ran once per published release (two), and
    # not after the refused one (given time to, had it been triggered)
    consumer = "privacy_live_dp_consumer"

    def two() -> bool:
        return len(af.runs(consumer)) >= 2

    wait_for("the consumer's runs", two, af, RUN_TIMEOUT_S)
    time.sleep(20)  # the scheduler's heartbeat is 1 s: a third run would exist by now
    consumed = af.runs(consumer)
    assert len(consumed) == 2, consumed
    loaded = []
    for r in consumed:
        run_id = str(r["dag_run_id"])
        assert _finished(af, consumer, run_id) == "success"
        loaded.append(_xcom(af, consumer, run_id, "load")["version"])
    assert sorted(loaded) == ["1", "2"]
    # OpenLineage, as the workers sent it: each published run's gate asserts the DP budget
    # and its verdict on the release it read, and writes the published copy; the refused
    # run's DP task says it failed; nothing of the data (only ledger ids and words)
    from airflow_privacy.providers.airflow.lineage import RUN_FACET

    lineage = out.parent / "lineage.jsonl"

    def events() -> list[dict[str, Any]]:
        if not lineage.exists():
            return []
        try:  # a line being written by a worker's sender is read again at the next poll
            return [json.loads(x) for x in lineage.read_text().splitlines() if x.strip()]
        except ValueError:
            return []

    def ended(task: str, run: str) -> list[dict[str, Any]]:
        return [e for e in events() if e["job"]["name"] == f"privacy_live_dp.{task}"
                and e["eventType"] in ("COMPLETE", "FAIL")
                and RUN_FACET in e["run"]["facets"]
                and run in json.dumps(e["run"]["facets"].get("airflow"))]  # fmt: skip

    wait_for(
        "the OpenLineage events",
        lambda: (
            all(ended("publish", r) for r in (first, second)) and bool(ended("dp_release", third))
        ),
        af,
        120,
    )
    for run in (first, second):
        (gate,) = ended("publish", run)
        assert gate["eventType"] == "COMPLETE"
        facet = gate["run"]["facets"][RUN_FACET]
        assert facet["outcome"] == "published" and facet["dataset"] == "dpsurvey"
        checks = gate["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]
        assert {(a["assertion"], a["success"]) for a in checks} == {
            ("dp-budget", True), ("privacy:publish", True)}  # fmt: skip
        assert gate["outputs"][0]["name"].endswith(f"{_safe(run)}/marginals.csv")
    (refused,) = ended("dp_release", third)
    assert refused["eventType"] == "FAIL"
    assert refused["run"]["facets"][RUN_FACET]["safe"] is False
    (checked,) = refused["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"]
    assert checked["assertion"] == "privacy:dp-release" and checked["success"] is False


def test_a_mapped_check_with_one_failing_instance_blocks(live: tuple[Airflow, Path, str]) -> None:
    """A check mapped over two criteria lists in a running Airflow: both instances run and
    record their own verdict (``check[0]`` passed, ``check[1]`` failed), the gate blocks
    naming the failed instance only, nothing is published, and the ledger keeps both."""
    af, out, url = live
    record_policy(url, "live-mapped")
    dag = "privacy_mapped"
    checks = [["k-anonymity:k=3"], ["k-anonymity:k=100000"]]
    run = _trigger(af, dag, {"dataset": "live-mapped", "checks": checks})
    assert _finished(af, dag, run) == "failed"
    listed = _call(af, "GET", f"/api/v2/dags/{dag}/dagRuns/{run}/taskInstances")
    states = {(t["task_id"], t["map_index"]): t["state"] for t in listed["task_instances"]}
    assert states[("check", 0)] == "success" and states[("check", 1)] == "success", states
    assert states[("publish", -1)] == "failed"
    gate = _xcom(af, dag, run, "publish", "privacy_report")
    assert gate["outcome"] == "blocked"
    assert any(r.startswith("check[1]:") for r in gate["reasons"]), gate["reasons"]
    assert not any(r.startswith("check[0]:") for r in gate["reasons"])
    assert not _published(out, run)
    with ReleaseLedger(url) as db:
        (release,) = db.list("live-mapped")
        (attempt,) = db.attempts(release.id)
        assert {c.name: c.safe for c in attempt.checks} == {"check[0]": True, "check[1]": False}
