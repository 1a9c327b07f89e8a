"""A new dataset name close to one the ledger knows is refused as a typo until confirmed by
repeating it (first releases and first policies alike)."""

from __future__ import annotations

import pytest

from airflow_privacy.errors import InputError
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.names import near_misses
from airflow_privacy.gate.policy import set_policy
from airflow_privacy.gate.steps.policy import build_policy
from tests.gate.conftest import Workspace
from tests.gate.lifecycle_support import attempt, check, gate, make_release, uuid_of


def test_near_misses() -> None:
    known = ["adult", "census-2020", "clinic"]
    assert near_misses("adlut", known) == ["adult"]
    assert near_misses("Adult", known) == ["adult"]
    assert near_misses("census-2021", known) == ["census-2020"]
    assert near_misses("hospital", known) == []
    assert near_misses("adult", known) == []


def test_a_first_release_under_a_near_miss_name_is_refused(ws: Workspace, ctx: GateContext) -> None:
    v1 = make_release(ws, ctx, "v1", 0)
    a = uuid_of(attempt(ws, ctx, v1, first_release=True))
    check(ws, ctx, v1, a)
    gate(ws, ctx, v1, a)
    v2 = make_release(ws, ctx, "v2", 200)  # 200 people in common with adult v1
    with pytest.raises(InputError, match=r"close to 'adult'.*--new-dataset adlut"):
        attempt(ws, ctx, v2, dataset="adlut", first_release=True, with_policy=False)
    with pytest.raises(InputError, match="does not repeat the dataset name"):
        attempt(ws, ctx, v2, dataset="adlut", first_release=True, new_dataset="adult",
                with_policy=False)  # fmt: skip
    with pytest.raises(InputError, match="close to 'adult'"):
        set_policy("adlut", build_policy(criteria=["k-anonymity:k=2"]), by="a", reason="r",
                   ctx=ctx, ledger=ws.ledger)  # fmt: skip
    # confirmed by name, without a policy yet: still refused (a first release needs one)
    with pytest.raises(InputError, match="dataset 'adlut' has no policy"):
        attempt(ws, ctx, v2, dataset="adlut", first_release=True, new_dataset="adlut",
                with_policy=False)  # fmt: skip
    # the officer confirms the new name with its policy, then the release: a new dataset
    set_policy("adlut", build_policy(criteria=["k-anonymity:k=2"]), by="a", reason="r",
               ctx=ctx, ledger=ws.ledger, new_dataset="adlut")  # fmt: skip
    env = attempt(ws, ctx, v2, dataset="adlut", first_release=True, new_dataset="adlut")
    assert env.outcome == "opened" and env.attempt is not None
    assert env.attempt.dataset == "adlut"
    # a name far from every known one needs no confirmation
    assert attempt(ws, ctx, v2, dataset="hospital", first_release=True).outcome == "opened"
