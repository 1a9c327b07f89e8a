"""Child processes for the ledger's concurrency and crash tests.

``python -m tests.ledger_worker publish URL DATASET SEED GROUPS READY GO``: open the ledger,
build a release with GROUPS groups from SEED, touch READY, wait for GO to exist, then record
it as published and print the result as JSON.

``python -m tests.ledger_worker crash URL DATASET GROUPS``: record a release, but die with
``os._exit`` inside the transaction, right after its groups reached the database (no
cleanup, no rollback from the client side).

``python -m tests.ledger_worker storm URL DATASET WRITERS GROUPS``: fork WRITERS processes
(the modules are imported once, so 32 writers start in a second on two cores); each opens the
ledger itself (a fresh database: they also race to create it), builds its own release
(seed = its number), waits at a barrier, then records it as published. Prints one JSON
object: every writer's outcome (version, or the error's class and message) and the seconds
from the barrier until the last writer finished.

``python -m tests.ledger_worker kills URL DATASET TRIALS GROUPS SEED``: TRIALS times, fork a
writer that records a release and ``SIGKILL`` it at a random moment of its write transaction
(measured by one calibration run: from its first statement on the dataset row to its exit).
After every kill the ledger must hold whole releases only and the next writer must get
through. Prints a JSON summary (kills inside the transaction, writers that finished first,
seconds).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

from airflow_privacy.core.composition import PublishedRelease

KILLED = 17
WORKER_KEY = b"ledger-worker-key-0123456789-abcdefghijklmnopqrstuvwxyz"


def make_release(seed: int, groups: int) -> PublishedRelease:
    rng = random.Random(seed)
    rows = []
    for g in range(groups):
        counts = {f"value {v}": rng.randint(1, 5) for v in rng.sample(range(12), rng.randint(1, 4))}
        rows.append(((f"{g * 10}-{g * 10 + 9}", rng.choice(["M", "F", "*"]), f"s{seed}"), counts))
    return PublishedRelease.from_groups(("age", "sex", "site"), "diagnosis", rows)


def publish(url: str, dataset: str, seed: int, groups: int, ready: str, go: str) -> None:
    from airflow_privacy.ledger import ReleaseLedger

    ledger = ReleaseLedger(url)
    release = make_release(seed, groups)
    Path(ready).touch()
    deadline = time.monotonic() + 60
    while not Path(go).exists():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the go signal")
        time.sleep(0.001)
    info = ledger.record(dataset, release, status="published")
    print(
        json.dumps(
            {
                "id": info.id,
                "version": info.version,
                "hash": info.content_hash,
                "created": info.created,
            }
        )
    )


def crash(url: str, dataset: str, groups: int) -> None:
    from sqlalchemy import event

    from airflow_privacy.ledger import ReleaseLedger

    ledger = ReleaseLedger(url)

    @event.listens_for(ledger.engine, "commit")
    def die(conn: Any) -> None:
        # the release row and every group are in the database, the commit is not
        sys.stdout.flush()
        os._exit(KILLED)

    ledger.record(dataset, make_release(99, groups), status="published")
    raise SystemExit("the writer was not killed")


# ------------------------------------------------------------------- forked writers
def _send(fd: int, payload: dict[str, Any]) -> None:
    os.write(fd, (json.dumps(payload) + "\n").encode())


def _read_lines(fd: int, count: int, timeout: float) -> list[dict[str, Any]]:
    """``count`` JSON lines from pipe ``fd`` (fewer when every writer end is closed)."""
    import select

    deadline = time.monotonic() + timeout
    buf = b""
    out: list[dict[str, Any]] = []
    while len(out) < count:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SystemExit(f"timed out: {len(out)} of {count} answers")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        out.extend(json.loads(line) for line in lines if line)
    return out


def _warm(url: str) -> None:
    """Import everything a writer needs before forking (each child would import it again)."""
    from airflow_privacy.ledger import migrate
    from airflow_privacy.ledger.engine import make_engine

    migrate.head()
    with migrate.quiet_alembic():
        import alembic.command
        import alembic.runtime.migration  # noqa: F401
    make_engine(url).dispose()  # the dialect and its driver; connects to nothing


def storm(url: str, dataset: str, writers: int, groups: int) -> dict[str, Any]:
    _warm(url)
    answers_r, answers_w = os.pipe()
    go_r, go_w = os.pipe()
    kids = []
    for n in range(1, writers + 1):
        pid = os.fork()
        if pid == 0:  # a writer
            os.close(answers_r)
            os.close(go_w)
            code = 0
            try:
                from airflow_privacy.ledger import ReleaseLedger

                ledger = ReleaseLedger(url)
                release = make_release(n, groups)
                _send(answers_w, {"ready": n})
                os.read(go_r, 1)
                started = time.monotonic()
                info = ledger.record(dataset, release, status="published")
                _send(
                    answers_w,
                    {
                        "writer": n,
                        "ok": True,
                        "version": info.version,
                        "created": info.created,
                        "seconds": round(time.monotonic() - started, 3),
                    },
                )
            except BaseException as exc:  # reported to the parent, which fails the test
                _send(
                    answers_w,
                    {"writer": n, "ok": False, "error": type(exc).__name__, "message": str(exc)},
                )
                code = 1
            os._exit(code)
        kids.append(pid)
    os.close(answers_w)
    os.close(go_r)
    ready = _read_lines(answers_r, writers, timeout=600)
    early = [r for r in ready if "ready" not in r]  # a writer that failed before the barrier
    started = time.monotonic()
    os.write(go_w, b"g" * writers)
    results = early + _read_lines(answers_r, writers - len(early), timeout=1200)
    seconds = time.monotonic() - started
    for pid in kids:
        os.waitpid(pid, 0)
    return {"writers": writers, "seconds": round(seconds, 2), "results": results}


def _integrity(url: str) -> dict[str, Any]:
    """Every release whole: as many groups and hashes as its row says, and an attempt."""
    from sqlalchemy import create_engine, text

    from airflow_privacy.ledger.engine import parse_url

    engine = create_engine(parse_url(url))
    try:
        with engine.connect() as conn:
            bad = conn.execute(
                text(
                    "SELECT r.id FROM ledger_releases r WHERE r.n_groups <> "
                    "(SELECT COUNT(*) FROM ledger_groups g WHERE g.release_id = r.id) "
                    "OR COALESCE(r.n_members, 0) <> "
                    "(SELECT COUNT(*) FROM ledger_members m WHERE m.release_id = r.id) "
                    "OR NOT EXISTS (SELECT 1 FROM ledger_attempts a WHERE a.release_id = r.id)"
                )
            ).all()
            orphans = conn.execute(
                text(
                    "SELECT COUNT(*) FROM ledger_groups g WHERE NOT EXISTS "
                    "(SELECT 1 FROM ledger_releases r WHERE r.id = g.release_id)"
                )
            ).scalar()
            releases = conn.execute(text("SELECT COUNT(*) FROM ledger_releases")).scalar()
    finally:
        engine.dispose()
    return {"partial": [int(r[0]) for r in bad], "orphans": int(orphans or 0), "releases": releases}


class _Writer:
    """A forked writer that prepares its release at once, then waits before its write
    transaction begins (holding no lock) until :meth:`run` lets it go."""

    def __init__(self, url: str, dataset: str, release: PublishedRelease) -> None:
        self.signals_r, signals_w = os.pipe()
        go_r, self.go_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.signals_r)
            os.close(self.go_w)
            try:
                from sqlalchemy import event

                from airflow_privacy.ledger import ReleaseLedger

                ledger = ReleaseLedger(url, create=False, hash_key=WORKER_KEY)
                ledger.stored_hashes([])  # the derived key: its reads happen before the pause

                @event.listens_for(ledger.engine, "checkout")
                def wait(*args: Any) -> None:  # before BEGIN (IMMEDIATE): no lock held yet
                    os.write(signals_w, b"r")
                    os.read(go_r, 1)

                ledger.record(dataset, release, status="published", member_hashes=_hashes(release))
                os.write(signals_w, b"d")
                os._exit(0)
            except BaseException as exc:
                os.write(signals_w, b"e" + str(exc).encode()[:500])
                os._exit(1)
        os.close(signals_w)
        os.close(go_r)

    def run(self, delay: float | None) -> dict[str, Any]:
        """Let it write; ``delay``: SIGKILL it that long after (None: let it finish, and
        measure how long that took)."""
        first = os.read(self.signals_r, 1)
        if first != b"r":
            rest = os.read(self.signals_r, 1000)
            os.waitpid(self.pid, 0)
            raise SystemExit(f"the writer failed before its transaction: {(first + rest)!r}")
        t0 = time.monotonic()
        os.write(self.go_w, b"g")
        if delay is not None:
            time.sleep(delay)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        elapsed = time.monotonic() - t0
        tail = b""
        while chunk := os.read(self.signals_r, 1000):
            tail += chunk
        os.close(self.signals_r)
        os.close(self.go_w)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        if not killed and (not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0):
            raise SystemExit(f"the writer failed: {tail!r}")
        return {"killed": killed, "finished": tail.startswith(b"d"), "seconds": elapsed}


def _hashes(release: PublishedRelease) -> list[str]:
    """A few identifier hashes per release (so that members are written too)."""
    import hashlib

    return [hashlib.sha256(f"{release.keys[g]}".encode()).hexdigest() for g in range(50)]


def kills(url: str, dataset: str, trials: int, groups: int, seed: int) -> dict[str, Any]:
    from airflow_privacy.ledger import ReleaseLedger

    rng = random.Random(seed)
    _warm(url)
    ReleaseLedger(url).close()  # created and migrated before the first fork
    started = time.monotonic()
    calibration = _Writer(url, f"{dataset}-calibration", make_release(seed, groups)).run(None)
    window = calibration["seconds"]
    outcomes = []
    # two writers prepare their releases (two cores) while the current one writes and dies
    queue = [_Writer(url, dataset, make_release(seed + 1 + t, groups)) for t in range(2)]
    for t in range(trials):
        queue.append(_Writer(url, dataset, make_release(seed + 3 + t, groups)))
        outcome = queue.pop(0).run(rng.uniform(0.0, window))
        check = _integrity(url)
        if check["partial"] or check["orphans"]:
            raise SystemExit(f"trial {t}: a partial release is left: {check}")
        outcomes.append(outcome)
    # the ledger is not left locked: the next writer gets straight through
    last = queue.pop(0).run(None)
    for spare in queue:
        spare.run(None)
    final = _integrity(url)
    return {
        "trials": trials,
        "killed_inside": sum(1 for o in outcomes if o["killed"] and not o["finished"]),
        "finished_first": sum(1 for o in outcomes if o["finished"]),
        "window": round(window, 3),
        "last_writer_seconds": round(last["seconds"], 3),
        "seconds": round(time.monotonic() - started, 2),
        "integrity": final,
    }


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    if cmd == "publish":
        publish(rest[0], rest[1], int(rest[2]), int(rest[3]), rest[4], rest[5])
    elif cmd == "crash":
        crash(rest[0], rest[1], int(rest[2]))
    elif cmd == "storm":
        print(json.dumps(storm(rest[0], rest[1], int(rest[2]), int(rest[3]))))
    elif cmd == "kills":
        print(json.dumps(kills(rest[0], rest[1], int(rest[2]), int(rest[3]), int(rest[4]))))
    else:
        raise SystemExit(f"unknown command {cmd!r}")
