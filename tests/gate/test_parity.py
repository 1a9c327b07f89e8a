"""Parity: the same inputs through the command line and through each operator give the same
envelope, the same ledger rows (member hashes included) and the same files.

Both front ends run the same release lifecycle (anonymize, open an attempt with identifier
hashes, check, MaxEnt, audit, risk, publish, report) in two separate workspaces, with relative
paths so that references read the same; the envelopes are compared after removing what must
differ (times, UUIDs, the tool's version)."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from airflow_privacy.cli import main
from tests.gate.conftest import Workspace
from tests.gate.parity_support import FakeTI, cli, inside, normal
from tests.policy_setup import record_policy

QIS = ["age", "marital-status", "race", "sex"]
QI_ARGS = [x for q in QIS for x in ("--qi", q)]


def same_salt(source: str, target: str) -> None:
    """Give ledger ``target`` the salt of ledger ``source``: every ledger draws its own, which
    wraps the identifier hashes it stores; with one salt the stored hashes compare."""
    engine = create_engine(source)
    with engine.connect() as conn:
        salt = conn.execute(text("SELECT value FROM ledger_settings")).scalar_one()
    engine.dispose()
    engine = create_engine(target)
    with engine.begin() as conn:
        conn.execute(text("UPDATE ledger_settings SET value = :v"), {"v": salt})
    engine.dispose()


def ledger_rows(url: str) -> dict[str, Any]:
    """Every ledger row that must agree (ids, times, UUIDs, origins aside)."""
    engine = create_engine(url)
    with engine.connect() as conn:
        releases = [
            dict(r._mapping)
            for r in conn.execute(
                text(
                    "SELECT dataset, version, status, kind, sensitive, qis, spec, content_hash, "
                    "n_records, n_groups, n_members FROM ledger_releases ORDER BY id"
                )
            )
        ]
        groups = conn.execute(
            text(
                "SELECT release_id, position, descriptor, size, sensitive FROM ledger_groups "
                "ORDER BY release_id, position"
            )
        ).all()
        members = sorted(r[0] for r in conn.execute(text("SELECT id_hash FROM ledger_members")))
        attempts = [
            tuple(r)
            for r in conn.execute(
                text(
                    "SELECT status, required, first_release, reasons FROM ledger_attempts "
                    "ORDER BY id"
                )
            )
        ]
        checks = [
            (r[0], r[1], r[2], r[3], normal(json.loads(r[4]) if isinstance(r[4], str) else r[4]))
            for r in conn.execute(
                text("SELECT name, step, safe, outcome, envelope FROM ledger_checks ORDER BY id")
            )
        ]
    engine.dispose()
    return {
        "releases": releases,
        "groups": [tuple(map(str, g)) for g in groups],
        "members": members,
        "attempts": [tuple(map(str, a)) for a in attempts],
        "checks": checks,
    }


def digest(path: Path) -> str:
    """The file's hash; a JSON manifest without its timing (``elapsed_seconds``)."""
    if path.suffix == ".json":
        data = normal_json(json.loads(path.read_text()))
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def normal_json(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: normal_json(v) for k, v in value.items() if k != "elapsed_seconds"}
    if isinstance(value, list):
        return [normal_json(v) for v in value]
    return value


def via_cli(folder: Path, ledger: str) -> list[dict[str, Any]]:
    envs = []
    with inside(folder):
        code, env = cli(
            [
                "anonymize",
                "input.parquet",
                *QI_ARGS,
                "--sensitive",
                "occupation",
                "--method",
                "bucketize",
                "--criterion",
                "k-anonymity:k=5",
                "--criterion",
                "ck-safety:c=0.7,k=3",
                "--out",
                "release.parquet",
            ]
        )
        assert code == 0
        envs.append(env)
        code, env = cli(
            [
                "attempt",
                "release.parquet",
                "--dataset",
                "adult",
                "--first-release",
                "--require",
                "check_safety",
                "--require",
                "maxent_risk",
                "--require",
                "composition_audit",
                "--population",
                "input.parquet",
                "--id-column",
                "id",
                "--ledger",
                ledger,
            ]
        )
        assert code == 0
        envs.append(env)
        uuid = env["attempt"]["uuid"]
        attempt = ["--attempt", uuid, "--ledger", ledger]
        code, env = cli(
            [
                "check",
                "release.parquet",
                "--sensitive",
                "occupation",
                "--group",
                "bucket",
                "--criterion",
                "ck-safety:c=0.7,k=3",
                "--criterion",
                "k-anonymity:k=5",
                "--name",
                "check_safety",
                *attempt,
            ]
        )
        assert code == 0
        envs.append(env)
        code, env = cli(
            [
                "maxent",
                "release.parquet",
                "--sensitive",
                "occupation",
                "--bucket",
                "bucket",
                *QI_ARGS,
                "--original",
                "input.parquet",
                "--top-negative",
                "2",
                "--c",
                "0.99",
                "--name",
                "maxent_risk",
                *attempt,
            ]
        )
        assert code == 0
        envs.append(env)
        code, env = cli(
            [
                "audit",
                "release.parquet",
                "--population",
                "input.parquet",
                "--dataset",
                "adult",
                "--confidence",
                "0.5",
                "--name",
                "composition_audit",
                *attempt,
            ]
        )
        assert code == 0
        envs.append(env)
        # the risk analysis: no attempt (a result without a verdict would block the gate)
        code, env = cli(
            [
                "risk",
                "release.parquet",
                *QI_ARGS,
                "--population",
                "input.parquet",
                "--suda-max-size",
                "2",
                "--records",
                "risk_scores.csv",
                "--name",
                "risk_analysis",
            ]
        )
        assert code == 0
        envs.append(env)
        code, env = cli(
            [
                "publish",
                "release.parquet",
                "--to",
                "published",
                "--attempt",
                uuid,
                "--ledger",
                ledger,
            ]
        )
        assert code == 0
        envs.append(env)
        code, env = cli(
            [
                "report",
                "release.parquet",
                "--attempt",
                uuid,
                "--ledger",
                ledger,
                "--group",
                "bucket",
                "--sensitive",
                "occupation",
            ]
        )
        assert code == 0
        envs.append(env)
    return envs


def via_operators(
    folder: Path, ledger: str, monkeypatch: pytest.MonkeyPatch
) -> list[dict[str, Any]]:
    from airflow_privacy.providers.airflow.operators.anonymize import BucketizeOperator
    from airflow_privacy.providers.airflow.operators.attempt import OpenAttemptOperator
    from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
    from airflow_privacy.providers.airflow.operators.composition import CompositionAuditOperator
    from airflow_privacy.providers.airflow.operators.maxent import MaxEntRiskOperator
    from airflow_privacy.providers.airflow.operators.publish import PublishReleaseOperator
    from airflow_privacy.providers.airflow.operators.report import ReleaseReportOperator
    from airflow_privacy.providers.airflow.operators.risk import RiskAnalysisOperator

    monkeypatch.setenv(
        "AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT",
        json.dumps({"conn_type": "privacyledger", "extra": {"url": ledger}}),
    )
    ti = FakeTI()
    ops = [
        BucketizeOperator(
            task_id="anonymize",
            source="input.parquet",
            release="release.parquet",
            qis=QIS,
            sensitive="occupation",
            criteria=["k-anonymity:k=5", {"name": "ck-safety", "c": 0.7, "k": 3}],
        ),
        OpenAttemptOperator(
            task_id="attempt",
            release="release.parquet",
            dataset="adult",
            first_release=True,
            population="input.parquet",
            id_column="id",
            required_checks=["check_safety", "maxent_risk", "composition_audit"],
        ),
        CheckSafetyOperator(
            task_id="check_safety",
            attempt_task_id="attempt",
            release="release.parquet",
            sensitive="occupation",
            group_columns=["bucket"],
            criteria=[{"name": "ck-safety", "c": "0.7", "k": "3"}, {"name": "k-anonymity", "k": 5}],
        ),
        MaxEntRiskOperator(
            task_id="maxent_risk",
            attempt_task_id="attempt",
            release="release.parquet",
            sensitive="occupation",
            bucket_column="bucket",
            qis=QIS,
            original="input.parquet",
            top_negative="2",
            threshold="0.99",
        ),
        CompositionAuditOperator(
            task_id="composition_audit",
            attempt_task_id="attempt",
            candidate="release.parquet",
            population="input.parquet",
            datasets=["adult"],
            confidence="0.5",
        ),
        RiskAnalysisOperator(
            task_id="risk_analysis",
            release="release.parquet",
            qis=QIS,
            population="input.parquet",
            suda_max_size="2",
            records="risk_scores.csv",
        ),
        PublishReleaseOperator(
            task_id="publish",
            attempt_task_id="attempt",
            release="release.parquet",
            publish_to="published",
        ),
        ReleaseReportOperator(
            task_id="report",
            attempt_task_id="attempt",
            release="release.parquet",
            group_columns=["bucket"],
            sensitive="occupation",
        ),
    ]
    envs = []
    with inside(folder):
        for op in ops:
            ti.task_id = op.task_id
            result = op.execute({"ti": ti})  # type: ignore[typeddict-item]
            ti.results[op.task_id] = result
            envs.append(result)
    return envs


def test_entity_and_weight_parity(tmp_path: Path) -> None:
    """``--entity`` / ``entity_column`` and ``--weight`` / ``weight_column``: the check and the
    risk step give the same envelope through the CLI and the operators."""
    from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
    from airflow_privacy.providers.airflow.operators.risk import RiskAnalysisOperator

    lines = ["pid,age,zip,disease,w"] + [
        f"p{i // 2},{['20-39', '40-59'][i % 3 == 0]},47*,{['flu', 'cold'][i // 4 % 2]},"
        f"{1 + (i // 2) % 3}.5"
        for i in range(24)
    ]
    (tmp_path / "release.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    envs = {}
    with inside(tmp_path):
        for crit in ("k-anonymity:k=2", "distinct-l-diversity:l=2"):
            code, env = cli(["check", "release.csv", "--sensitive", "disease", "--group", "age",
                             "--group", "zip", "--criterion", crit, "--entity", "pid",
                             "--name", "check_safety"])  # fmt: skip
            assert code in (0, 1)
            op = CheckSafetyOperator(
                task_id="check_safety", release="release.csv", sensitive="disease",
                group_columns=["age", "zip"], criteria=[crit], entity_column="pid",
                on_unsafe="continue",
            )  # fmt: skip
            ti = FakeTI()
            assert normal(env) == normal(op.execute({"ti": ti})), crit
            envs[crit] = env
        code, env = cli(["risk", "release.csv", "--qi", "age", "--qi", "zip", "--entity", "pid",
                         "--weight", "w", "--name", "risk_analysis"])  # fmt: skip
        assert code == 0
        risk_op = RiskAnalysisOperator(
            task_id="risk_analysis", release="release.csv", qis=["age", "zip"],
            entity_column="pid", weight_column="w",
        )  # fmt: skip
        assert normal(env) == normal(risk_op.execute({"ti": FakeTI()}))
    assert envs["k-anonymity:k=2"]["details"]["entities"] == 12
    assert envs["k-anonymity:k=2"]["details"]["rows"] == 24
    assert env["details"]["population"]["kind"] == "weights"


def test_cli_and_operators_agree(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sides = {}
    for side in ("cli", "airflow"):
        folder = tmp_path / side
        folder.mkdir()
        src = ws.slice(f"{side}-input", 0, 3000)
        src.rename(folder / "input.parquet")
        sides[side] = folder
    url = {side: f"sqlite:///{sides[side] / 'ledger.db'}" for side in sides}
    for u in url.values():
        record_policy(u, "adult")  # the organization's part, before the first release
    same_salt(url["cli"], url["airflow"])
    a = via_cli(sides["cli"], url["cli"])
    b = via_operators(sides["airflow"], url["airflow"], monkeypatch)
    steps = ["anonymize", "attempt", "check", "maxent", "audit", "risk", "publish", "report"]
    assert [e["step"] for e in a] == steps and [e["step"] for e in b] == steps
    for x, y in zip(a, b, strict=True):
        if x["step"] in ("anonymize", "attempt", "publish", "report"):
            x, y = dict(x, name="-"), dict(y, name="-")  # the command's / the task's name
        assert normal(x) == normal(y), x["step"]
    assert ledger_rows(url["cli"]) == ledger_rows(url["airflow"])
    files = [
        "release.parquet",
        "release.parquet.manifest.json",
        "published/release.parquet",
        "published/release.parquet.manifest.json",
        "risk_scores.csv",
    ]
    for f in files:
        assert digest(sides["cli"] / f) == digest(sides["airflow"] / f), f
    assert (sides["cli"] / "release.parquet.report.html").is_file()
    assert (sides["airflow"] / "release.parquet.report.html").is_file()
    assert ledger_rows(url["cli"])["members"]  # the identifier hashes were recorded


def test_cli_and_operator_agree_on_benign_values(tmp_path: Path) -> None:
    """``--benign`` and ``benign_values``: the same envelope, in which the benign values
    turn an unsafe check safe, are recorded in the parameters and the absent one is noted."""
    from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator

    rows = ["g,s"] + [f"{g},{s}" for g in "ab" for s in ["none"] * 4 + ["flu", "hiv", "cold"]]
    (tmp_path / "release.csv").write_text("\n".join(rows) + "\n")
    argv = ["check", "release.csv", "--sensitive", "s", "--group", "g",
            "--criterion", "ck-safety:c=0.5,k=1", "--name", "check_safety"]  # fmt: skip
    with inside(tmp_path):
        code, plain = cli(argv)
        assert code == 1 and plain["safe"] is False
        code, by_cli = cli([*argv, "--benign", "none", "--benign", "unseen"])
        op = CheckSafetyOperator(
            task_id="check_safety",
            release="release.csv",
            sensitive="s",
            group_columns=["g"],
            criteria=["ck-safety:c=0.5,k=1"],
            benign_values=["none", "unseen"],
        )
        by_op = op.execute({"ti": FakeTI()})
    assert code == 0 and by_cli["safe"] is True
    assert normal(by_cli) == normal(by_op)
    assert by_cli["details"]["benign"] == ["none", "unseen"]
    assert by_cli["details"]["benign_absent"] == ["unseen"]
    assert by_cli["results"][0]["parameters"]["benign"] == ["none", "unseen"]
    assert "none" not in json.dumps(by_cli["results"][0]["witness"])


def test_cli_and_operator_agree_on_advice(tmp_path: Path) -> None:
    """A failed check's way forward: the same advice from ``check`` and
    ``CheckSafetyOperator`` (on_unsafe="continue"), each suggestion re-checked."""
    from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator

    sizes = {"a": 9, "b": 6, "c": 2, "d": 1}
    rows = ["g,s"] + [f"{g},{'xyz'[i % 3]}" for g, n in sizes.items() for i in range(n)]
    (tmp_path / "release.csv").write_text("\n".join(rows) + "\n")
    argv = ["check", "release.csv", "--sensitive", "s", "--group", "g",
            "--criterion", "k-anonymity:k=5", "--name", "check"]  # fmt: skip
    with inside(tmp_path):
        code, by_cli = cli(argv)
        op = CheckSafetyOperator(
            task_id="check", release="release.csv", sensitive="s", group_columns=["g"],
            criteria=["k-anonymity:k=5"], on_unsafe="continue",
        )  # fmt: skip
        by_op = op.execute({"ti": FakeTI()})
    assert code == 1 and by_cli["safe"] is False
    assert normal(by_cli) == normal(by_op)
    kinds = {a["kind"]: a for a in by_cli["advice"]}
    assert kinds["suppress-groups"]["groups"] == ["g=c", "g=d"]
    assert kinds["suppress-groups"]["records_suppressed"] == 3
    assert kinds["parameter"]["passes_at"] == 1  # groups of 1 and 2 records: k=1 passes
    assert by_cli["advice"] == by_op["advice"]


@pytest.mark.parametrize("method", ["lattice", "mondrian", "bucketize"])
def test_cli_and_operators_agree_on_anonymize_with_benign_values(
    tmp_path: Path, method: str
) -> None:
    """``anonymize --benign`` and ``benign_values`` on the anonymize operators: the same
    envelope and the same release and manifest bytes; the manifest records the benign
    values and its results are computed with them; the release passes the check with them."""
    from airflow_privacy.providers.airflow.operators.anonymize import (
        AnonymizeLatticeOperator,
        BucketizeOperator,
    )

    rows = ["age,zip,s"]
    for i in range(48):
        s = "none" if i % 4 else ("flu" if i % 8 else "hiv")
        rows.append(f"{20 + i % 12},{1000 + i % 5},{s}")
    sides = {side: tmp_path / side for side in ("cli", "airflow")}
    for folder in sides.values():
        folder.mkdir()
        (folder / "input.csv").write_text("\n".join(rows) + "\n")
    crit = "negation-safety:c=0.7,k=1"
    shape = {"lattice": ["--interval", "age=4,8", "--interval", "zip=2"], "mondrian": [],
             "bucketize": []}[method]  # fmt: skip
    argv = ["anonymize", "input.csv", "--qi", "age", "--qi", "zip", "--sensitive", "s",
            "--method", method, "--criterion", crit, *shape, "--out", "release.csv",
            "--benign", "none"]  # fmt: skip
    with inside(sides["cli"]):
        code, by_cli = cli(argv)
    assert code == 0, by_cli
    kwargs: dict[str, Any] = {
        "task_id": "anonymize", "source": "input.csv", "release": "release.csv",
        "qis": ["age", "zip"], "sensitive": "s", "criteria": [crit], "benign_values": ["none"],
    }  # fmt: skip
    op: Any
    if method == "bucketize":
        op = BucketizeOperator(**kwargs)
    else:
        intervals = {"age": [4, 8], "zip": [2]} if method == "lattice" else None
        op = AnonymizeLatticeOperator(method=method, intervals=intervals, **kwargs)
    with inside(sides["airflow"]):
        by_op = op.execute({"ti": FakeTI()})
    assert normal(by_cli) == normal(by_op)
    assert by_cli["details"]["benign"] == ["none"]
    for f in ("release.csv", "release.csv.manifest.json"):
        assert digest(sides["cli"] / f) == digest(sides["airflow"] / f), f
    manifest = json.loads((sides["cli"] / "release.csv.manifest.json").read_text())
    assert manifest["benign"] == ["none"]
    assert manifest["criteria_results"][0]["parameters"]["benign"] == ["none"]
    groups = [x for g in by_cli["details"]["group_columns"] for x in ("--group", g)]
    check = ["check", "release.csv", "--sensitive", "s", *groups, "--criterion", crit]
    with inside(sides["cli"]):
        assert cli([*check, "--benign", "none"])[0] == 0
        assert cli(check)[0] == 1  # the benign declaration is what the release relies on


def test_cli_and_operators_agree_on_a_population(ws: Workspace, tmp_path: Path) -> None:
    """``--population`` and ``population``: the lattice anonymizer targets k-map against the
    population table and delta-presence, the check counts the population against the
    written release; the same envelopes, files and verdicts through both front ends, and
    the same bad input (named in each front end's words) without a population."""
    from airflow_privacy.errors import InputError
    from airflow_privacy.providers.airflow.operators.anonymize import (
        AnonymizeLatticeOperator,
        BucketizeOperator,
    )
    from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator

    crit = ["k-map:k=10", "delta-presence:delta_max=0.25"]
    sides = {}
    for side in ("cli", "airflow"):
        folder = tmp_path / side
        folder.mkdir()
        ws.slice(f"{side}-input", 0, 600).rename(folder / "input.parquet")
        ws.slice(f"{side}-population", 0, 4000).rename(folder / "population.parquet")
        sides[side] = folder
    crit_args = [x for c in crit for x in ("--criterion", c)]
    with inside(sides["cli"]):
        code, anon = cli(["anonymize", "input.parquet", *QI_ARGS, "--sensitive", "occupation",
                          "--method", "lattice", *crit_args, "--population", "population.parquet",
                          "--out", "release.parquet"])  # fmt: skip
        assert code == 0
        check_args = ["check", "release.parquet", "--sensitive", "occupation",
                      *(x for q in QIS for x in ("--group", q)), *crit_args,
                      "--name", "check_safety"]  # fmt: skip
        code, checked = cli([*check_args, "--population", "population.parquet"])
        assert code == 0 and checked["safe"] is True
        code, unsafe = cli(["check", "input.parquet", *check_args[2:],
                            "--population", "population.parquet"])  # fmt: skip
        assert code == 1 and unsafe["safe"] is False
        out = io.StringIO()
        assert main([*check_args, "--quiet"], out) == 2
    with inside(sides["airflow"]):
        op = AnonymizeLatticeOperator(
            task_id="anonymize", source="input.parquet", release="release.parquet", qis=QIS,
            sensitive="occupation", criteria=crit, population="population.parquet",
        )  # fmt: skip
        anon_op = op.execute({"ti": FakeTI()})
        check_op = CheckSafetyOperator(
            task_id="check_safety", release="release.parquet", sensitive="occupation",
            group_columns=QIS, criteria=crit, population="population.parquet",
        )  # fmt: skip
        checked_op = check_op.execute({"ti": FakeTI()})
        unsafe_op = CheckSafetyOperator(
            task_id="check_safety", release="input.parquet", sensitive="occupation",
            group_columns=QIS, criteria=crit, population="population.parquet",
            on_unsafe="continue",
        )  # fmt: skip
        unsafe_op_env = unsafe_op.execute({"ti": FakeTI()})
        with pytest.raises(InputError, match=r"give population \(or, for k-map") as caught:
            CheckSafetyOperator(task_id="c", release="release.parquet", sensitive="occupation",
                                group_columns=QIS, criteria=crit)  # fmt: skip
        assert "--population" not in str(caught.value)
        with pytest.raises(InputError, match="population does not apply to method bucketize"):
            BucketizeOperator(
                task_id="a", source="input.parquet", release="r.parquet", qis=QIS,
                sensitive="occupation", criteria=crit, population="population.parquet",
            )  # fmt: skip
    assert normal(dict(anon, name="-")) == normal(dict(anon_op, name="-"))
    assert normal(checked) == normal(checked_op)
    assert normal(unsafe) == normal(unsafe_op_env)
    for f in ("release.parquet", "release.parquet.manifest.json"):
        assert digest(sides["cli"] / f) == digest(sides["airflow"] / f), f
    assert anon["details"]["population"] == {"ref": "population.parquet", "records": 4000}
    assert checked["details"]["population"]["records"] == 4000
    # the manifest's results (counted at the node) are the check's (counted from the files)
    for a, c in zip(anon["results"], checked["results"], strict=True):
        assert (a["criterion"], a["safe"], a["value"]) == (c["criterion"], c["safe"], c["value"])


@pytest.mark.parametrize("method", ["lattice", "mondrian"])
def test_cli_and_operators_agree_on_anonymize_through_duckdb(tmp_path: Path, method: str) -> None:
    """``anonymize --backend duckdb`` and ``backend="duckdb"``: the same envelope (the
    backend recorded), the same release (its rows as a multiset) and manifest, and the same
    release as the in-process path's."""
    from collections import Counter

    import pyarrow.parquet as pq

    from airflow_privacy.core.datasets import load_adult
    from airflow_privacy.providers.airflow.operators.anonymize import AnonymizeLatticeOperator

    sides = {side: tmp_path / side for side in ("cli", "airflow", "arrow")}
    for folder in sides.values():
        folder.mkdir()
        pq.write_table(load_adult().slice(0, 3000), folder / "input.parquet")
    crit = "k-anonymity:k=5"
    shape = ["--interval", "age=5,10,20"] if method == "lattice" else []
    argv = ["anonymize", "input.parquet", *QI_ARGS, "--sensitive", "occupation", "--method",
            method, "--criterion", crit, *shape, "--out", "release.parquet"]  # fmt: skip
    with inside(sides["cli"]):
        code, by_cli = cli([*argv, "--backend", "duckdb"])
    assert code == 0, by_cli
    with inside(sides["arrow"]):
        code, by_arrow = cli([*argv, "--backend", "arrow"])
    assert code == 0, by_arrow
    op = AnonymizeLatticeOperator(
        task_id="anonymize", source="input.parquet", release="release.parquet", qis=QIS,
        sensitive="occupation", criteria=[crit], method=method, backend="duckdb",
        intervals={"age": [5, 10, 20]} if method == "lattice" else None,
    )  # fmt: skip
    with inside(sides["airflow"]):
        by_op = op.execute({"ti": FakeTI()})
    assert by_cli["details"]["backend"] == "duckdb" and by_arrow["details"]["backend"] == "arrow"
    assert normal(by_cli) == normal(by_op)
    by_arrow["details"]["backend"] = "duckdb"
    assert normal(by_cli) == normal(by_arrow)

    def rows(folder: Path) -> Counter[tuple[Any, ...]]:
        t = pq.read_table(folder / "release.parquet")
        return Counter(zip(*(t.column(c).to_pylist() for c in t.column_names), strict=True))

    assert rows(sides["cli"]) == rows(sides["airflow"]) == rows(sides["arrow"])
    for f in ("release.parquet.manifest.json",):
        a = json.loads((sides["cli"] / f).read_text())
        b = json.loads((sides["airflow"] / f).read_text())
        assert normal_json(a) == normal_json(b)


def test_cli_and_operator_agree_on_policies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``policy set`` / ``approve`` / ``reject`` and ``DatasetPolicyOperator``: the same
    envelopes (in force, proposed, approved, rejected) and the same versions in the ledger."""
    from airflow_privacy.providers.airflow.operators.policy import DatasetPolicyOperator

    lines = {"criteria": ["k-anonymity:k=5", "ck-safety:c=0.7,k=3"],
             "composition_measure": "ganta", "confidence": 0.9, "max_pvp": 10.0,
             "required_steps": ["audit"]}  # fmt: skip
    flags = ["--criterion", "k-anonymity:k=5", "--criterion", "ck-safety:c=0.7,k=3",
             "--composition-measure", "ganta", "--confidence", "0.9",
             "--max-pvp", "10", "--require", "audit"]  # fmt: skip
    results: dict[str, list[tuple[int | str, dict[str, Any]]]] = {}
    for front in ("cli", "airflow"):
        url = f"sqlite:///{tmp_path / front}.db"
        got: list[tuple[int | str, dict[str, Any]]] = []
        if front == "cli":

            def run(*argv: str, url: str = url) -> tuple[int | str, dict[str, Any]]:
                return cli(["policy", *argv, "--ledger", url])

            got.append(run("set", "--dataset", "adult", *flags, "--by", "alice",
                           "--reason", "initial"))  # fmt: skip
            got.append(run("set", "--dataset", "adult", "--criterion", "k-anonymity:k=2",
                           "--by", "bob", "--reason", "looser"))  # fmt: skip
            got.append(run("approve", "--dataset", "adult", "--version", "2", "--by", "carol",
                           "--reason", "ok"))  # fmt: skip
            got.append(run("set", "--dataset", "adult", "--criterion", "k-anonymity:k=1",
                           "--by", "bob", "--reason", "even looser"))  # fmt: skip
            got.append(run("reject", "--dataset", "adult", "--version", "3", "--by", "carol",
                           "--reason", "no"))  # fmt: skip
        else:
            monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", url)

            def op(**kw: Any) -> tuple[int | str, dict[str, Any]]:
                ti = FakeTI()
                try:
                    env = DatasetPolicyOperator(task_id="policy", dataset="adult", **kw).execute(
                        {"ti": ti}
                    )
                    return 0, env
                except Exception as exc:  # a proposed / rejected version fails the task
                    return type(exc).__name__, ti.pushed["task"]["privacy_report"]

            got.append(op(**lines, by="alice", reason="initial"))
            got.append(op(criteria=["k-anonymity:k=2"], by="bob", reason="looser"))
            got.append(op(action="approve", version=2, by="carol", reason="ok"))
            got.append(op(criteria=["k-anonymity:k=1"], by="bob", reason="even looser"))
            mine = DatasetPolicyOperator(task_id="policy", dataset="adult", action="approve",
                                         version=3, by="bob", reason="mine")  # fmt: skip
            with pytest.raises(Exception, match="four eyes"):
                mine.execute({"ti": FakeTI()})
            got.append(op(action="reject", version=3, by="carol", reason="no"))
        results[front] = got
    outcomes = [env["outcome"] for _, env in results["cli"]]
    assert outcomes == ["recorded", "proposed", "recorded", "proposed", "rejected"]
    assert [c for c, _ in results["cli"]] == [0, 1, 0, 1, 1]
    assert [c for c, _ in results["airflow"]] == [0, "AirflowFailException", 0,
                                                   "AirflowFailException",
                                                   "AirflowFailException"]  # fmt: skip
    for (_, a), (_, b) in zip(results["cli"], results["airflow"], strict=True):
        assert normal(a) == normal(b)
