"""The DP budget under load, on SQLite and a real PostgreSQL: 16 ``dp-release`` processes
at once (forked together from one that imported the CLI: :mod:`tests.forked_cli`) on one
dataset never together spend more than the cap (the spend is decided and recorded under the
dataset's lock, in the transaction that draws the noise); ``kill -9`` at random moments (of
processes of their own) never leaves a spend without its release, attempt and record, nor a
DP release without its spend."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.forked_cli import Command, run_at_once
from tests.ledger.support import ROOT, url
from tests.policy_setup import record_policy

__all__ = ["url"]


def _inputs(tmp: Path) -> list[str]:
    data = tmp / "people.csv"
    data.write_text(
        "age,sex,who\n" + "".join(f"{20 + i % 7},{'MF'[i % 2]},p{i // 2}\n" for i in range(500))
    )
    (tmp / "age.csv").write_text("".join(f"{a}\n" for a in range(20, 27)))
    (tmp / "sex.csv").write_text("M\nF\n")
    return [str(data), "--dataset", "survey", "--marginal", "age,sex", "--marginal", "sex",
            "--keys", f"age={tmp / 'age.csv'}", "--keys", f"sex={tmp / 'sex.csv'}"]  # fmt: skip


def _policy(target: str, cap: float, *datasets: str) -> None:
    from airflow_privacy.gate.policy import Policy

    for dataset in datasets or ("survey",):
        record_policy(target, dataset, policy=Policy(dp={"unit": "rho", "cap": cap}))


KEY = "tests-only-key-0123456789abcdefghijklmnopqrst"


def _argv(args: list[str], out: Path) -> list[str]:
    return ["dp-release", *args, "--rho", "0.1", "--out", str(out), "--quiet"]


def _start(target: str, args: list[str], out: Path) -> subprocess.Popen[bytes]:
    """One ``airflow-privacy dp-release`` process of its own (the kill test: a process
    killed at any moment, its interpreter's start-up included)."""
    env = dict(os.environ, AIRFLOW_PRIVACY_LEDGER_URL=target, PYTHONPATH=str(ROOT))
    env.pop("AIRFLOW_PRIVACY_LEDGER_KEY", None)
    return subprocess.Popen(
        [sys.executable, "-m", "airflow_privacy.cli", *_argv(args, out)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip


def _at_once(target: str, runs: list[tuple[list[str], Path]], key: bool = False) -> list[int]:
    """``dp-release`` processes started together (:func:`tests.forked_cli.run_at_once`), one
    per (arguments, output); their exit codes: released (0), refused (1) or a lock waited
    for too long (4), nothing else."""
    env: dict[str, str | None] = {"AIRFLOW_PRIVACY_LEDGER_URL": target,
                                  "AIRFLOW_PRIVACY_LEDGER_KEY": KEY if key else None}  # fmt: skip
    outcomes = run_at_once([Command(_argv(a, out), env) for a, out in runs], cwd=ROOT)
    for o in outcomes:
        assert o.code in (0, 1, 4), o.stderr[-2000:]
    return [o.code for o in outcomes]


def _ledger(target: str) -> dict[str, Any]:
    engine = create_engine(target)
    try:
        with engine.connect() as c:
            spends = c.execute(
                text(
                    "SELECT s.rho, s.release_id, s.attempt_id, r.kind, a.content_digest, "
                    "(SELECT count(*) FROM ledger_checks k WHERE k.attempt_id = a.id) "
                    "FROM ledger_dp_spends s JOIN ledger_releases r ON r.id = s.release_id "
                    "JOIN ledger_attempts a ON a.id = s.attempt_id"
                )
            ).all()
            dp = c.execute(
                text("SELECT count(*) FROM ledger_releases WHERE kind = 'dp-marginals'")
            ).scalar_one()
            attempts = c.execute(text("SELECT count(*) FROM ledger_attempts")).scalar_one()
    finally:
        engine.dispose()
    return {"spends": spends, "dp_releases": int(dp), "attempts": int(attempts)}


def _consistent(state: dict[str, Any], cap: float) -> None:
    spends = state["spends"]
    # every spend has its release (a DP one), its attempt (with the file's digest) and the
    # step's record; every DP release has its spend; the cap holds
    assert all(kind == "dp-marginals" and digest and checks == 1
               for _, _, _, kind, digest, checks in spends)  # fmt: skip
    assert state["dp_releases"] == len(spends) == state["attempts"]
    assert sum(float(s[0]) for s in spends) <= cap * (1 + 1e-12)  # per dataset, and per person
    # (every release here holds the same people)


def test_concurrent_releases_never_overspend(url: str, tmp_path: Path) -> None:
    _policy(url, 1.0)
    args = _inputs(tmp_path)
    codes = _at_once(url, [(args, tmp_path / f"out-{i}.csv") for i in range(16)])
    state = _ledger(url)
    _consistent(state, 1.0)
    released = [i for i, c in enumerate(codes) if c == 0]
    assert len(state["spends"]) == len(released)
    assert {f"out-{i}.csv" for i in released} == {p.name for p in tmp_path.glob("out-*.csv")}
    if 4 not in codes:  # no writer gave up waiting for the lock: the budget is used up exactly
        assert len(released) == 10 and codes.count(1) == 6
    print(f"\n16 concurrent DP releases on {url.split(':')[0]}: exit codes {sorted(codes)}")


@pytest.mark.parametrize("backend", ["sqlite"])
def test_kill_9_leaves_no_spend_without_its_release(tmp_path: Path, backend: str) -> None:
    target = f"sqlite:///{tmp_path / 'ledger.db'}"
    _policy(target, 100.0)
    args = _inputs(tmp_path)
    rng = random.Random(7)
    trials = int(os.environ.get("AIRFLOW_PRIVACY_DP_KILL_TRIALS", "16"))
    killed = 0
    for batch in range(0, trials, 4):
        procs = [_start(target, args, tmp_path / f"k-{batch + i}.csv") for i in range(4)]
        time.sleep(rng.uniform(0.5, 4.0))  # a release takes about 2.5 s: kills before,
        # during and after its transaction
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                killed += 1
            p.communicate(timeout=600)
        _consistent(_ledger(target), 100.0)
    state = _ledger(target)
    print(f"\n{trials} DP releases, {killed} killed with SIGKILL, {len(state['spends'])} spent")


def test_concurrent_releases_of_the_same_people_never_overspend_them(
    url: str,
    tmp_path: Path,
) -> None:
    """16 releases at once, alternating between two datasets of the same people (their
    identifier hashes recorded): each person's spends add up over both datasets."""
    _policy(url, 1.0, "survey", "clinic")
    args = _inputs(tmp_path)
    runs = []
    for i in range(16):
        mine = [*args, "--entity", "who", "--max-rows-per-person", "2"]
        mine[mine.index("survey")] = ("survey", "clinic")[i % 2]
        runs.append((mine, tmp_path / f"out-{i}.csv"))
    codes = _at_once(url, runs, key=True)
    state = _ledger(url)
    _consistent(state, 1.0)
    if 4 not in codes:
        assert codes.count(0) == 10 and codes.count(1) == 6
    print(f"\n16 concurrent DP releases of the same people in 2 datasets: {sorted(codes)}")
