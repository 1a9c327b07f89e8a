"""The main job: run the sample release DAG end to end, twice, and say what happened.

``python -m airflow_privacy.providers.airflow.release_demo`` (what ``make demo`` runs):

1. an Airflow home under ``build/airflow`` (SQLite metadata database, the repository's
   ``dags/`` folder, no examples), migrated with ``airflow db migrate``;
2. a fresh privacy ledger (SQLite, ``build/airflow/privacy_ledger.db``), given to the runs
   as ``$AIRFLOW_PRIVACY_LEDGER_URL``: a ledger configured in the calling shell (by that
   variable or by the connection ``privacy_ledger_default``) is never used;
3. the privacy officer records the dataset's policy (``airflow-privacy policy set``, the
   lines in :data:`POLICY`): what every release of ``adult`` must pass, owned by the
   organization, not by a run's parameters (a first release without one is refused);
4. ``airflow dags test privacy_release -c '{"first_release": true}'``: Adult records
   0-14,999 are bucketized, checked, audited (declared first release: nothing to intersect
   with) and published;
5. ``airflow dags test privacy_release -c '{"first_record": 10000}'``: records 10,000-24,999
   overlap the first release by 5,000 people; the composition audit finds the breach, the
   gate (``publish``) blocks the attempt and the ledger records why;
6. the ledger's view of both runs, where the two HTML release reports are, and how to see
   them in the Airflow UI (the plugin's /privacy page; no server is started here).

Exit 0 when the first release is published and the second blocked, as expected.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

#: the sample dataset's policy, as its privacy officer records it before the first release:
#: the sample DAG's own defaults are the minimums, so a run triggered with a weaker ``c``,
#: ``confidence``, ``max_pvp`` or ``maxent_threshold`` is blocked by the gate, naming the line.
#: Identity disclosure is accepted on purpose (no ``--max-prosecutor-risk``): the sample
#: publishes Anatomy buckets whose QIs are census attributes, public anyway (the DAG's doc).
POLICY = [
    "policy", "set", "--dataset", "adult",
    "--criterion", "ck-safety:c=0.7,k=3",
    "--composition-measure", "ganta", "--confidence", "0.5", "--max-pvp", "0",
    "--maxent-c", "0.95",
    "--by", "privacy officer",
    "--reason", "sample policy: the defaults of the sample DAG are the minimums; identity "
    "disclosure accepted (Anatomy, census QIs)",
]  # fmt: skip


def ledger_url(home: Path) -> str:
    """The demo's own SQLite ledger."""
    return f"sqlite:///{home / 'privacy_ledger.db'}"


def _env(home: Path) -> dict[str, str]:
    """The DAG runs' environment: the demo's Airflow home, DAGs and output folder, and the
    demo's own ledger, named by ``$AIRFLOW_PRIVACY_LEDGER_URL`` (which wins over the
    connection ``privacy_ledger_default``, so a ledger configured in the calling shell,
    by URL or by connection, is never written to)."""
    env = dict(os.environ)
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(ROOT / "dags"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
            "AIRFLOW_PRIVACY_OUTPUT_DIR": str(home / "releases"),
            "AIRFLOW_PRIVACY_LEDGER_URL": ledger_url(home),
        }
    )
    env.pop("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", None)
    return env


def _airflow() -> str:
    exe = Path(sys.executable).with_name("airflow")
    return str(exe) if exe.exists() else "airflow"


def _cli() -> str:
    exe = Path(sys.executable).with_name("airflow-privacy")
    return str(exe) if exe.exists() else "airflow-privacy"


def _run(cmd: list[str], env: dict[str, str], log: Path) -> int:
    with log.open("w") as fh:
        return subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--home", default=str(ROOT / "build" / "airflow"),
                        help="Airflow home for the demo (default: build/airflow)")  # fmt: skip
    args = parser.parse_args(argv)
    home = Path(args.home).resolve()
    home.mkdir(parents=True, exist_ok=True)
    for stale in (home / "privacy_ledger.db", home / "releases"):
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    env = _env(home)
    logs = home / "logs-demo"
    logs.mkdir(exist_ok=True)

    print(f"Airflow home: {home} (SQLite); DAG folder: {ROOT / 'dags'}", flush=True)
    if _run([_airflow(), "db", "migrate"], env, logs / "db-migrate.log") != 0:
        print(f"airflow db migrate failed: see {logs / 'db-migrate.log'}", file=sys.stderr)
        return 1
    print("\n=== the privacy officer records the dataset's policy", flush=True)
    print(f"    $ airflow-privacy {shlex.join(POLICY)}", flush=True)
    if _run([_cli(), *POLICY, "--quiet"], env, logs / "policy.log") != 0:
        print(f"policy set failed: see {logs / 'policy.log'}", file=sys.stderr)
        return 1
    print(
        "    " + (logs / "policy.log").read_text(errors="replace").strip().replace("\n", "\n    ")
    )
    runs = [
        ("first release: Adult records 0-14,999", {"first_release": True}),
        ("second release: records 10,000-24,999 (5,000 people overlap the first)",
         {"first_record": 10000}),
    ]  # fmt: skip
    codes = []
    for i, (what, conf) in enumerate(runs, start=1):
        print(f"\n=== run {i}: {what}", flush=True)
        cmd = [_airflow(), "dags", "test", "privacy_release"]
        if conf:
            cmd += ["-c", json.dumps(conf)]
        log = logs / f"run{i}.log"
        code = _run(cmd, env, log)
        codes.append(code)
        print(f"    airflow dags test exited {code} (task logs: {log})")
        _print_tasks(log)

    from airflow_privacy.ledger import ReleaseLedger

    print("\n=== the ledger (what was published, what was blocked and why)")
    with ReleaseLedger(ledger_url(home), create=False) as ledger:
        infos = ledger.list()
        stored = ledger.report_times()
        for info in infos:
            print(f"  release #{info.id} of {info.dataset} v{info.version}: {info.status.upper()}")
            for attempt in ledger.attempts(info.id):
                for reason in attempt.reasons:
                    print(f"    why: {reason}")
            print(f"    report stored in the ledger: {'yes' if info.id in stored else 'NO'}")
    statuses = [i.status for i in infos]
    reports = _reports(home / "releases" / "adult")
    # green iff published: run 1 published (exit 0), run 2 blocked (a failed run)
    ok = (
        codes[0] == 0
        and codes[1] != 0
        and statuses == ["published", "blocked"]
        and len(stored) == 2
        and len(reports) == 2
    )
    folder = home / "releases" / "adult" / "published"
    published = sorted(p for p in folder.rglob("*") if p.is_file())
    shown = ", ".join(str(p.relative_to(folder)) for p in published)
    print(f"\npublished files (in {folder}): {shown or 'none'}")
    print("\n=== the release reports (one HTML file each; open them in a browser)")
    for i, path in enumerate(reports, start=1):
        print(f"  run {i}: {path}")
    _print_ui(home)
    print("\nas expected: the first release was published, the overlapping second one was "
          "blocked, and both have a report" if ok else
          f"\nUNEXPECTED outcome: {statuses}, {len(stored)} stored report(s), "
          f"{len(reports)} report file(s)")  # fmt: skip
    return 0 if ok else 1


def _reports(root: Path) -> list[Path]:
    """The runs' HTML reports (beside each run's release), oldest first."""
    found = [p for p in root.glob("*/release.parquet.report.html") if p.parent.name != "published"]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def _print_ui(home: Path) -> None:
    env = (
        f"AIRFLOW_HOME={home} AIRFLOW__CORE__DAGS_FOLDER={ROOT / 'dags'} "
        f"AIRFLOW_PRIVACY_LEDGER_URL={ledger_url(home)}"
    )
    print("\n=== the ledger in the Airflow UI (not started by the demo)")
    print(f"  {env} {_airflow()} api-server --port 8080")
    print("  then open http://localhost:8080/ (Browse > Privacy ledger), or directly")
    print("  http://localhost:8080/privacy/ ; sign in with the simple auth manager's password in")
    print(f"  {home / 'simple_auth_manager_passwords.json.generated'} (written on first start)")


def _print_tasks(log: Path) -> None:
    """One line per task from the run's log: which ran, which failed and why."""
    failed = False
    for line in log.read_text(errors="replace").splitlines():
        if "[DAG TEST] end task" in line:
            task = line.split("task_id=", 1)[1].split()[0]
            print(f"    task {task}: {'FAILED' if failed else 'done'}")
            failed = False
        elif "AirflowFailException:" in line and "raise" not in line:
            failed = True
            print(f"    {line.split('AirflowFailException:', 1)[1].strip()}")


if __name__ == "__main__":
    raise SystemExit(main())
