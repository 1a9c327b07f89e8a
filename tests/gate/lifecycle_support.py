"""The release lifecycle's steps as the gate's tests take them, through the services:
anonymize a slice of Adult into a release (:func:`make_release`), open an attempt, check it,
decide at the gate (shared by ``tests/gate/test_*.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from airflow_privacy.gate.anonymize import AnonymizeRequest, run_anonymize
from airflow_privacy.gate.attempts import (
    PublishRequest,
    publish,
)
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.attempt import AttemptRequest, open_attempt
from airflow_privacy.gate.steps.check import CheckRequest, run_check
from tests.gate.conftest import Workspace
from tests.policy_setup import record_policy

QIS = ["age", "marital-status", "race", "sex"]


def make_release(ws: Workspace, ctx: GateContext, name: str, first: int, n: int = 400) -> Path:
    src = ws.slice(f"{name}-input", first, n)
    out = ws.root / f"{name}.parquet"
    run_anonymize(
        AnonymizeRequest(
            source=ReleaseRef(path=str(src)),
            release=ReleaseRef(path=str(out)),
            qis=QIS,
            sensitive="occupation",
            method="bucketize",
            criteria=["k-anonymity:k=3"],
        ),
        ctx,
    )
    return out


def attempt(ws: Workspace, ctx: GateContext, release: Path, **kw: Any) -> Envelope:
    """Open an attempt; a first release's dataset gets the weakest policy first (the
    organization's part, :func:`tests.policy_setup.record_policy`) unless ``with_policy``
    is false."""
    dataset = kw.pop("dataset", "adult")
    if kw.get("first_release") and kw.pop("with_policy", True):
        record_policy(ws.ledger, dataset)
    kw.pop("with_policy", None)
    return open_attempt(
        AttemptRequest(
            release=ReleaseRef(path=str(release)),
            dataset=dataset,
            required=kw.pop("required", ["check"]),
            ledger=ws.ledger,
            **kw,
        ),
        ctx,
    )


def check(
    ws: Workspace,
    ctx: GateContext,
    release: Path,
    uuid: str | None,
    k: int = 3,
    name: str = "check",
) -> Envelope:
    return run_check(
        CheckRequest(
            release=ReleaseRef(path=str(release)),
            sensitive="occupation",
            group_columns=["bucket"],
            criteria=[f"k-anonymity:k={k}"],
            name=name,
            attempt=uuid,
            ledger=ws.ledger,
        ),
        ctx,
    )


def gate(ws: Workspace, ctx: GateContext, release: Path, uuid: str, **kw: Any) -> Envelope:
    return publish(
        PublishRequest(
            attempt=uuid,
            release=ReleaseRef(path=str(release)),
            destination=str(ws.root / "published"),
            ledger=ws.ledger,
            **kw,
        ),
        ctx,
    )


def uuid_of(env: Envelope) -> str:
    assert env.attempt is not None
    return env.attempt.uuid
