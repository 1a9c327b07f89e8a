"""Dataset policies: a run may tighten, never loosen; the gate blocks an attempt whose
checks do not meet its dataset's policy, naming the line; a loosening change waits for a
second, different person. The direction each criterion parameter gets stricter in
(``Parameter.stricter``) is checked against the criteria's own verdicts: a release that
passes the stricter parameters passes the looser ones."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.cli import main
from airflow_privacy.core.criteria.registry import CRITERIA, create
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import IllegalTransition, InputError, ReleaseBlocked
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.policy import (
    Policy,
    decide_policy,
    loosened,
    meets,
    set_policy,
    show_policy,
)
from airflow_privacy.gate.steps.policy import build_policy
from tests.gate.conftest import Workspace
from tests.gate.lifecycle_support import attempt, check, gate, make_release, uuid_of

# (criterion, parameter, a strict value, a looser value, the other parameters)
DIRECTIONS: list[tuple[str, str, Any, Any, dict[str, Any]]] = [
    ("k-anonymity", "k", 4, 2, {}),
    ("alpha-k-anonymity", "k", 4, 2, {"alpha": 0.8}),
    ("alpha-k-anonymity", "alpha", 0.5, 0.8, {"k": 2}),
    ("distinct-l-diversity", "l", 3, 2, {}),
    ("entropy-l-diversity", "l", 2.5, 1.5, {}),
    ("recursive-cl-diversity", "c", 1.0, 3.0, {"l": 2}),
    ("recursive-cl-diversity", "l", 3, 2, {"c": 2.0}),
    ("t-closeness", "t", 0.2, 0.4, {}),
    ("ck-safety", "c", 0.6, 0.9, {"k": 1}),
    ("ck-safety", "k", 2, 0, {"c": 0.9}),
    ("negation-safety", "c", 0.6, 0.9, {"k": 1}),
    ("delta-disclosure", "delta", 0.5, 1.5, {}),
    ("basic-beta-likeness", "beta", 0.5, 2.0, {}),
    ("enhanced-beta-likeness", "beta", 0.5, 2.0, {}),
    ("prosecutor-risk", "highest", 0.2, 0.5, {}),
    ("prosecutor-risk", "average", 0.2, 0.5, {}),
]


def _random_release(rng: random.Random) -> Bucketization:
    rows = []
    for g in range(rng.randint(2, 6)):
        for v in rng.sample("abcdef", rng.randint(1, 5)):
            rows.append((f"g{g}", v, rng.randint(1, 6)))
    return Bucketization.from_counts(rows, ["q"], "s")


@pytest.mark.parametrize(("name", "key", "strict", "loose", "rest"), DIRECTIONS)
def test_the_declared_direction_agrees_with_the_criterions_verdicts(
    name: str, key: str, strict: Any, loose: Any, rest: dict[str, Any]
) -> None:
    declared = CRITERIA[name].parameter(key)
    assert declared is not None and declared.stricter in ("higher", "lower")
    # the declaration says the strict value meets a policy of the loose one, not vice versa
    assert meets(name, {**rest, key: strict}, {key: loose}) is None
    assert meets(name, {**rest, key: loose}, {key: strict}) is not None
    rng = random.Random(f"{name}-{key}")
    strict_c, loose_c = create(name, {**rest, key: strict}), create(name, {**rest, key: loose})
    both = 0
    for _ in range(300):
        b = _random_release(rng)
        if strict_c.evaluate(b).safe:
            assert loose_c.evaluate(b).safe, (name, key, b)  # stricter implies looser
            both += 1
    assert both > 0, "no random release passed the strict parameters: the test saw nothing"


def test_every_numeric_parameter_declares_its_direction_or_equality() -> None:
    for name, cls in CRITERIA.items():
        for p in cls.parameters:
            assert p.stricter in ("higher", "lower", ""), (name, p.name)
    # facts of the data and choices must equal the policy's
    assert meets("k-map", {"k": 5, "population_size": 10.0}, {"population_size": 20.0})


def test_loosening_is_named_line_by_line() -> None:
    old = build_policy(criteria=["k-anonymity:k=5", "t-closeness:t=0.2"], measure="ganta",
                       confidence=0.9, max_pvp=10.0, maxent_c=0.5)  # fmt: skip
    tighter = build_policy(criteria=["k-anonymity:k=7", "t-closeness:t=0.1", "ck-safety:c=0.7,k=2"],
                           measure="ganta", confidence=0.8, max_pvp=5.0, maxent_c=0.4)  # fmt: skip
    assert loosened(old, tighter) == []
    assert loosened(None, old) == []
    weaker = build_policy(criteria=["k-anonymity:k=3"], measure="posterior", confidence=0.9,
                          max_pvp=20.0, benign=["Other-service"])  # fmt: skip
    assert loosened(old, weaker) == [
        "loosens k-anonymity:k=5: k=3 is below the policy's 5",
        "drops t-closeness:t=0.2",
        "loosens the composition line: measure 'posterior' is not the policy's 'ganta'",
        "loosens maxent: c <= 0.5",
        "declares more benign values (Other-service)",
    ]
    assert Policy.from_dict(old.to_dict()) == old
    with pytest.raises(InputError, match="needs at least one line"):
        build_policy()
    with pytest.raises(InputError, match="together"):
        build_policy(measure="ganta")


def test_four_eyes_on_a_loosening_change(ws: Workspace, ctx: GateContext) -> None:
    strict = build_policy(criteria=["k-anonymity:k=5"])
    first = set_policy("adult", strict, by="alice", reason="initial", ctx=ctx, ledger=ws.ledger)
    assert first.outcome == "recorded" and first.details["policy"]["status"] == "active"
    # tightening: in force at once
    tighter = build_policy(criteria=["k-anonymity:k=6"])
    assert set_policy("adult", tighter, by="alice", reason="t", ctx=ctx,
                      ledger=ws.ledger).outcome == "recorded"  # fmt: skip
    weaker = build_policy(criteria=["k-anonymity:k=2"])
    proposed = set_policy("adult", weaker, by="bob", reason="too strict", ctx=ctx,
                          ledger=ws.ledger)  # fmt: skip
    assert proposed.outcome == "proposed" and "loosens k-anonymity:k=6" in proposed.summary
    assert show_policy("adult", ctx, ws.ledger).details["policy"]["version"] == 2  # unchanged
    with pytest.raises(IllegalTransition, match="waiting for a second person"):
        set_policy("adult", weaker, by="bob", reason="again", ctx=ctx, ledger=ws.ledger)
    with pytest.raises(IllegalTransition, match="four eyes"):
        decide_policy("adult", 3, approve=True, by="bob", reason="mine", ctx=ctx,
                      ledger=ws.ledger)  # fmt: skip
    rejected = decide_policy("adult", 3, approve=False, by="carol", reason="no", ctx=ctx,
                             ledger=ws.ledger)  # fmt: skip
    assert rejected.outcome == "rejected"
    assert show_policy("adult", ctx, ws.ledger).details["policy"]["version"] == 2
    again = set_policy("adult", weaker, by="bob", reason="please", ctx=ctx, ledger=ws.ledger)
    approved = decide_policy("adult", again.details["policy"]["version"], approve=True,
                             by="carol", reason="ok", ctx=ctx, ledger=ws.ledger)  # fmt: skip
    assert approved.outcome == "recorded" and "approved by carol" in approved.summary
    history = show_policy("adult", ctx, ws.ledger).details["history"]
    assert [(v["version"], v["status"]) for v in history] == [
        (1, "replaced"), (2, "replaced"), (3, "rejected"), (4, "active"),
    ]  # fmt: skip
    assert history[3]["created_by"] == "bob" and history[3]["decided_by"] == "carol"


def test_the_gate_blocks_a_check_weaker_than_the_policy(ws: Workspace, ctx: GateContext) -> None:
    rel = make_release(ws, ctx, "v1", 0)  # buckets of at least 3
    set_policy("adult", build_policy(criteria=["k-anonymity:k=3"]), by="officer",
               reason="the organisation's minimum", ctx=ctx, ledger=ws.ledger)  # fmt: skip
    u = uuid_of(attempt(ws, ctx, rel, first_release=True))
    check(ws, ctx, rel, u, k=2)  # passes, but weaker than the policy
    with pytest.raises(ReleaseBlocked) as blocked:
        gate(ws, ctx, rel, u)
    reasons = blocked.value.envelope.reasons  # type: ignore[attr-defined]
    assert (
        "policy v1 of 'adult' requires k-anonymity:k=3; check 'check' measured "
        "k-anonymity:k=2: k=2 is below the policy's 3"
    ) in reasons
    # a new attempt checked at the policy's minimum publishes, decided under v1
    rel2 = make_release(ws, ctx, "v1b", 0, n=399)
    u2 = uuid_of(attempt(ws, ctx, rel2, first_release=True))
    check(ws, ctx, rel2, u2, k=3)
    assert gate(ws, ctx, rel2, u2).outcome == "published"


def test_a_policy_requires_kinds_of_check_whatever_the_dag_names_them(
    ws: Workspace, ctx: GateContext
) -> None:
    """``--require audit``: an attempt whose passed checks hold no composition audit is
    blocked, naming the line; dropping the line loosens the policy (four eyes)."""
    rel = make_release(ws, ctx, "v1", 0)
    set_policy("adult", build_policy(required_steps=["audit", "check"]), by="officer",
               reason="every release is audited", ctx=ctx, ledger=ws.ledger)  # fmt: skip
    u = uuid_of(attempt(ws, ctx, rel, first_release=True, required=["my_check"]))
    check(ws, ctx, rel, u, k=3, name="my_check")
    with pytest.raises(ReleaseBlocked) as blocked:
        gate(ws, ctx, rel, u)
    reasons = blocked.value.envelope.reasons  # type: ignore[attr-defined]
    assert reasons == [
        "policy v1 of 'adult' requires a passed audit check: no audit check was recorded "
        "under this attempt"
    ]
    assert loosened(Policy(required_steps=["audit", "check"]), Policy(required_steps=["check"]))
    assert (
        loosened(Policy(required_steps=["check"]), Policy(required_steps=["check", "audit"])) == []
    )
    with pytest.raises(InputError, match="'audits' is not a kind of check"):
        build_policy(required_steps=["audits"])
    assert show_policy("adult", ctx, ws.ledger).details["lines"][:2] == [
        "requires a passed audit check", "requires a passed check check",
    ]  # fmt: skip


def test_a_first_release_needs_its_datasets_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`attempt --first-release` of a dataset without a policy exits 2 and writes nothing
    (no ledger is created); once the officer recorded one, the same command opens it."""
    from airflow_privacy.core.datasets import load_adult

    db = tmp_path / "ledger.db"
    ledger = f"sqlite:///{db}"
    rel = tmp_path / "r.parquet"
    import pyarrow.parquet as pq

    pq.write_table(load_adult().slice(0, 200).select(["age", "sex", "occupation"]), rel)
    argv = ["attempt", str(rel), "--dataset", "adult", "--qi", "age", "--qi", "sex",
            "--sensitive", "occupation", "--require", "check", "--first-release",
            "--ledger", ledger, "--quiet"]  # fmt: skip
    assert main(argv, out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "policy set --dataset adult" in err
    assert not db.exists()  # nothing half-written: no ledger
    # a ledger that exists (another dataset's policy) but no policy for this one: refused too
    assert main(["policy", "set", "--dataset", "hospital", "--criterion", "k-anonymity:k=2",
                 "--by", "officer", "--reason", "r", "--ledger", ledger, "--quiet"],
                out=io.StringIO()) == 0  # fmt: skip
    assert main(argv, out=io.StringIO()) == 2
    assert "dataset 'adult' has no policy in this ledger" in capsys.readouterr().err
    from airflow_privacy.ledger import ReleaseLedger

    with ReleaseLedger(ledger, create=False) as opened:
        assert opened.list() == []  # the refused attempt recorded nothing
    assert main(["policy", "set", "--dataset", "adult", "--criterion", "k-anonymity:k=2",
                 "--by", "officer", "--reason", "r", "--ledger", ledger, "--quiet"],
                out=io.StringIO()) == 0  # fmt: skip
    out = io.StringIO()
    assert main([*argv, "--format", "json"], out=out) == 0
    assert json.loads(out.getvalue())["outcome"] == "opened"


def test_policy_on_the_command_line(tmp_path: Path) -> None:
    ledger = f"sqlite:///{tmp_path / 'l.db'}"

    def run(*args: str) -> tuple[int, dict[str, Any]]:
        out = io.StringIO()
        code = main([*args, "--ledger", ledger, "--format", "json", "--quiet"], out=out)
        return code, json.loads(out.getvalue()) if out.getvalue() else {}

    code, env = run("policy", "set", "--dataset", "adult", "--criterion", "k-anonymity:k=5",
                    "--composition-measure", "ganta", "--confidence", "0.9", "--max-pvp", "10",
                    "--by", "alice", "--reason", "initial")  # fmt: skip
    assert code == 0 and env["step"] == "policy" and env["outcome"] == "recorded"
    code, env = run("policy", "set", "--dataset", "adult", "--criterion", "k-anonymity:k=2",
                    "--by", "bob", "--reason", "looser")  # fmt: skip
    assert code == 1 and env["outcome"] == "proposed"
    assert run("policy", "approve", "--dataset", "adult", "--version", "2", "--by", "bob",
               "--reason", "x")[0] == 5  # fmt: skip
    code, env = run("policy", "show", "--dataset", "adult")
    assert code == 0 and env["details"]["policy"]["version"] == 1
    assert env["details"]["lines"][0] == "k-anonymity:k=5"
    assert run("policy", "set", "--dataset", "adult", "--max-pvp", "10", "--by", "a",
               "--reason", "x")[0] == 2  # fmt: skip


def test_identity_risk_is_always_measured_reported_and_limited_by_the_policy(
    ws: Workspace, ctx: GateContext
) -> None:
    """The sample DAG's shape (Anatomy: QIs exact) passes k-anonymity counted on buckets
    while people stand out on their QIs: every attempt measures that, the report shows it,
    and a policy that limits it blocks the release, naming the numbers."""
    from airflow_privacy.gate.refs import ReleaseRef
    from airflow_privacy.gate.report import ReportRequest, run_report

    rel = make_release(ws, ctx, "v1", 0)
    opened = attempt(ws, ctx, rel, first_release=True)
    identity = opened.details["identity"]
    assert identity["highest"] == 1.0 and identity["sample_uniques"] > 0
    u = uuid_of(opened)
    limited = build_policy(criteria=["k-anonymity:k=3"], max_prosecutor_risk=0.2)
    set_policy("adult", limited, by="officer", reason="QIs are not public here", ctx=ctx,
               ledger=ws.ledger)  # fmt: skip
    assert check(ws, ctx, rel, u).safe is True  # k-anonymity on buckets holds
    with pytest.raises(ReleaseBlocked) as blocked:
        gate(ws, ctx, rel, u)
    reasons = " | ".join(blocked.value.envelope.reasons)  # type: ignore[attr-defined]
    assert "limits the highest prosecutor risk to 0.2; this release's is 1" in reasons
    assert f"{identity['sample_uniques']:,} sample uniques" in reasons
    env = run_report(ReportRequest(release=ReleaseRef(path=str(rel)), attempt=u,
                                   ledger=ws.ledger, k_max=2), ctx)  # fmt: skip
    assert env.details["status"] == "blocked"
    from airflow_privacy.ledger import ReleaseLedger
    from airflow_privacy.report import ReleaseReport

    with ReleaseLedger(ws.ledger) as db:
        stored = db.attempt_report(u)
    assert stored is not None
    report = ReleaseReport.from_dict(stored)
    assert report.risk is not None and report.risk.source == "attempt"
    assert "sample uniques" in report.risk.summary
    # loosening the identity line is a loosening (four eyes)
    assert loosened(Policy.from_dict(build_policy(max_prosecutor_risk=0.2).to_dict()),
                    build_policy(max_prosecutor_risk=0.5)) == [
        "loosens identity: highest prosecutor risk <= 0.2"
    ]  # fmt: skip
