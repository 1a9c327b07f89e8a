"""The organization's part of a test's set-up: a dataset's policy recorded in the ledger
before its first release (the attempt step refuses a first release without one)."""

from __future__ import annotations

from airflow_privacy.gate.policy import Policy
from airflow_privacy.ledger import ReleaseLedger


def record_policy(
    ledger_url: str,
    *datasets: str,
    policy: Policy | None = None,
    by: str = "officer",
) -> None:
    """Record ``policy`` (default: identity disclosure accepted, nothing else required: the
    weakest policy there is, for tests about something else) for each dataset that has none
    yet, creating the ledger when there is none."""
    chosen = policy or Policy(max_prosecutor_risk=1.0)
    with ReleaseLedger(ledger_url, create=True) as db:
        for dataset in datasets:
            if policy is None and db.policy(dataset) is not None:
                continue
            db.set_policy(
                dataset, chosen.to_dict(), by=by, reason="set up by the test",
                loosens=lambda _cur: [],
            )  # fmt: skip
