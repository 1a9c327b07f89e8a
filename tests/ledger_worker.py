"""Child processes for the ledger's concurrency and crash tests.

``python -m tests.ledger_worker publish URL DATASET SEED GROUPS READY GO``: open the ledger,
build a release with GROUPS groups from SEED, touch READY, wait for GO to exist, then record
it as published and print the result as JSON.

``python -m tests.ledger_worker crash URL DATASET GROUPS``: record a release, but die with
``os._exit`` inside the transaction, right after the first batch of its groups reached the
database (no cleanup, no rollback from the client side).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from airflow_privacy.core.composition import PublishedRelease

KILLED = 17


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

    @event.listens_for(ledger.engine, "after_cursor_execute")
    def die(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if "ledger_groups" in statement and statement.lstrip().upper().startswith("INSERT"):
            sys.stdout.flush()
            os._exit(KILLED)

    ledger.record(dataset, make_release(99, groups), status="published")
    raise SystemExit("the writer was not killed")


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    if cmd == "publish":
        publish(rest[0], rest[1], int(rest[2]), int(rest[3]), rest[4], rest[5])
    elif cmd == "crash":
        crash(rest[0], rest[1], int(rest[2]))
    else:
        raise SystemExit(f"unknown command {cmd!r}")
