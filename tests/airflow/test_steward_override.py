"""``StewardOverrideOperator`` without a running Airflow: its two ways of naming the attempt
(this run's, or a UUID whose request was asked elsewhere), their arguments, and what it tells
the steward or refuses before asking (the live answers: tests/airflow/test_gate_live.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from airflow.sdk.exceptions import AirflowFailException

from airflow_privacy.gate.context import GateContext
from airflow_privacy.ledger import ReleaseLedger
from airflow_privacy.providers.airflow.operators.override import (
    KEEP,
    PUBLISH,
    SET_ASIDE,
    StewardOverrideOperator,
    _named_attempt,
    _named_body,
)
from tests.ledger.support import sample
from tests.policy_setup import record_policy


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of attempt_task_id"),
        ({"attempt_task_id": "a", "attempt": "u"}, "exactly one of attempt_task_id"),
        ({"attempt_task_id": "a", "publish_to": "/p"}, "needs release"),
        ({"attempt_task_id": "a", "release": "/r"}, "needs publish_to"),
        ({"attempt": "u", "release": "/r"}, "release and publish_to go with attempt_task_id"),
    ],
)
def test_the_attempt_is_named_one_way(kwargs: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        StewardOverrideOperator(task_id="steward", **kwargs)


def test_each_way_offers_its_answers() -> None:
    own = StewardOverrideOperator(
        task_id="own", attempt_task_id="open_attempt", release="/r", publish_to="/p"
    )
    named = StewardOverrideOperator(task_id="named", attempt="{{ params.attempt }}")
    assert own.options == [PUBLISH, SET_ASIDE, KEEP] and own.defaults == [KEEP]
    assert named.options == [SET_ASIDE, KEEP] and named.defaults == [KEEP]
    assert "attempt" in named.template_fields
    assert named.subject == "Set this blocked release aside?"


def test_a_named_attempt_must_be_a_uuid() -> None:
    assert _named_attempt(" 0F2B8C1E-7D4A-4E8B-9F00-123456789ABC ") == (
        "0f2b8c1e-7d4a-4e8b-9f00-123456789abc"
    )
    for bad in ("", None, "not-an-attempt", "x" * 200):
        with pytest.raises(AirflowFailException, match="attempt must be an attempt's UUID"):
            _named_attempt(bad)


def test_the_steward_reads_who_asked_and_why_or_nothing_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from airflow_privacy.cli import main

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    record_policy(url, "asked")
    with ReleaseLedger(url) as db:
        blocked = db.open_attempt("asked", sample(), required=["check"], first_release=True)
        idle = db.open_attempt(
            "asked", sample("bucketized"), required=["check"], first_release=True
        )
        db.block(blocked.uuid, ["k-anonymity: 3 groups below k = 5"], by="gate")
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", url)
    ctx = GateContext()
    with pytest.raises(AirflowFailException, match="no request pending"):
        _named_body(blocked.uuid, ctx)  # blocked, but nobody asked
    assert main(["ledger", "supersede", blocked.uuid, "--by", "alice", "--reason",
                 "loaded twice", "--ledger", url, "--quiet"]) == 1  # fmt: skip
    body = _named_body(blocked.uuid, ctx)
    assert "alice asked for a supersede" in body and "k-anonymity" in body
    assert "loaded twice" in body
    with pytest.raises(AirflowFailException, match="is open with no request pending"):
        _named_body(idle.uuid, ctx)
    with pytest.raises(AirflowFailException, match=r"^attempt: "):
        _named_body("0f2b8c1e-7d4a-4e8b-9f00-123456789abc", ctx)
