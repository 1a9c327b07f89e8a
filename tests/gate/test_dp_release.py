"""The DP release step end to end (``airflow-privacy dp-release``, ``DPReleaseOperator``):
the budget in the dataset's policy, the spend recorded with the release, the refusal that
draws, records and writes nothing, publishing through the attempt, the gate's rule for DP
releases, the composition audit leaving them out, and CLI/operator parity."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from airflow_privacy.cli import main
from tests.gate.parity_support import FakeTI, normal


def cli(*argv: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = main([*argv, "--format", "json", "--quiet"], out)
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else {}


def counts(url: str) -> dict[str, int]:
    engine = create_engine(url)
    with engine.connect() as conn:
        return {
            t: int(conn.execute(text(f"SELECT count(*) FROM {t}")).scalar_one())
            for t in ("ledger_datasets", "ledger_releases", "ledger_attempts", "ledger_checks",
                      "ledger_dp_spends")
        }  # fmt: skip


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    data = tmp_path / "survey.csv"
    rows = ["age,sex,disease,who"]
    for i in range(400):
        rows.append(f"{20 + i % 5},{'MF'[i % 2]},{['flu', 'cold', 'hiv'][i % 3]},p{i // 2}")
    data.write_text("\n".join(rows) + "\n")
    keys = {}
    for col, vals in {"age": [str(a) for a in range(20, 26)], "sex": ["M", "F"],
                      "disease": ["flu", "cold", "hiv"]}.items():  # fmt: skip
        keys[col] = tmp_path / f"{col}.csv"
        keys[col].write_text("\n".join(vals) + "\n")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_URL", url)
    return {"data": data, "keys": keys, "url": url, "tmp": tmp_path}


def release_args(w: dict[str, Any], out: str, *extra: str) -> list[str]:
    k = w["keys"]
    return ["dp-release", str(w["data"]), "--dataset", "survey", "--marginal", "age,sex",
            "--marginal", "disease", "--keys", f"age={k['age']}", "--keys", f"sex={k['sex']}",
            "--keys", f"disease={k['disease']}", "--out", str(w["tmp"] / out), *extra]  # fmt: skip


def set_cap(*flags: str, by: str = "alice") -> tuple[int, dict[str, Any]]:
    return cli("policy", "set", "--dataset", "survey", *flags, "--reason", "budget", "--by", by)


def test_a_release_spends_the_budget_and_publishes(world: dict[str, Any]) -> None:
    assert set_cap("--dp-rho-cap", "1")[0] == 0
    code, env = cli(*release_args(world, "m1.csv", "--rho", "0.4"))
    assert code == 0 and env["safe"] is True and env["step"] == "dp-release"
    d = env["details"]
    assert d["budget"]["spent"] == pytest.approx(0.4) and d["budget"]["left"] == pytest.approx(0.6)
    assert d["cells"] == 6 * 2 + 3 and d["mechanism"]["mechanism"] == "gaussian"
    # no exact count of the data leaves in the report: only the noisy cells, in the file
    assert env["release"]["records"] is None and env["release"]["groups"] is None
    # two marginals at rho 0.4 in total: sigma = sqrt(2 / (2 * 0.4)) per cell
    assert d["mechanism"]["scale"] == pytest.approx(math.sqrt(2 / 0.8), rel=1e-9)
    assert "statistical distance" in d["loss"]["text"] or "bounds nothing" in d["loss"]["text"]
    written = (world["tmp"] / "m1.csv").read_text().splitlines()
    assert written[0] == (
        '"marginal","age","sex","disease","count","estimate","noisy_count","low95","high95"'
    )
    assert len(written) == 1 + 15
    # the two marginals are made consistent: one total, each count the estimate rounded
    rows = list(csv.DictReader(io.StringIO("\n".join(written))))
    totals = {m: sum(float(r["estimate"]) for r in rows if r["marginal"] == m)
              for m in ("age x sex", "disease")}  # fmt: skip
    assert totals["age x sex"] == pytest.approx(totals["disease"], abs=1e-4)
    assert all(int(r["count"]) == max(round(float(r["estimate"])), 0) for r in rows)
    assert d["consistency"]["applied"] is True
    assert all(0 < sd < d["mechanism"]["stddev"] for sd in d["consistency"]["stddev"].values())
    uuid = env["attempt"]["uuid"]
    pub = world["tmp"] / "pub"
    pub.mkdir()
    code, gate = cli("publish", "--attempt", uuid, "--to", str(pub), str(world["tmp"] / "m1.csv"))
    assert code == 0 and gate["outcome"] == "published"
    assert (pub / "m1.csv").read_bytes() == (world["tmp"] / "m1.csv").read_bytes()
    # a second release spends the rest; the third is refused with nothing drawn or written
    assert cli(*release_args(world, "m2.csv", "--rho", "0.6"))[0] == 0
    before = counts(world["url"])
    code, env = cli(*release_args(world, "m3.csv", "--rho", "0.01"))
    assert code == 1 and env["safe"] is False and env["outcome"] == "blocked"
    assert "would exceed the budget" in env["reasons"][0] and "left 0" in env["reasons"][0]
    assert "opt:" not in json.dumps(env)  # no option marker left unrendered
    assert not (world["tmp"] / "m3.csv").exists()
    assert counts(world["url"]) == before
    assert before["ledger_dp_spends"] == 2


def test_the_privacy_filter_refuses_what_the_ledgers_check_would_let_through(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The noise is drawn through OpenDP's privacy filter holding the room the ledger's
    spends leave: with the ledger's own check switched off, the filter alone refuses a
    release over the cap (its first marginal drawn, its second refused), and nothing is
    recorded or written."""
    from airflow_privacy.ledger import budget

    assert set_cap("--dp-rho-cap", "1")[0] == 0
    assert cli(*release_args(world, "m1.csv", "--rho", "0.8"))[0] == 0
    monkeypatch.setattr(budget, "fits", lambda spent, cost, cap: True)
    before = counts(world["url"])
    code, env = cli(*release_args(world, "m2.csv", "--rho", "0.3"))  # 0.15 + 0.15 > 0.2
    assert code == 1 and env["outcome"] == "blocked"
    assert "would exceed the budget" in env["reasons"][0] and "left 0.2" in env["reasons"][0]
    assert counts(world["url"]) == before and not (world["tmp"] / "m2.csv").exists()
    assert cli(*release_args(world, "m3.csv", "--rho", "0.2"))[0] == 0  # the room, exactly


def test_publishing_other_bytes_is_blocked(world: dict[str, Any]) -> None:
    set_cap("--dp-rho-cap", "1")
    code, env = cli(*release_args(world, "m1.csv", "--rho", "0.1"))
    out = world["tmp"] / "m1.csv"
    out.write_text(out.read_text().replace(",0,", ",9,", 1) + "\n")
    pub = world["tmp"] / "pub"
    pub.mkdir()
    code, gate = cli("publish", "--attempt", env["attempt"]["uuid"], "--to", str(pub), str(out))
    assert code == 1 and gate["outcome"] == "blocked"
    assert not list(pub.iterdir())


def test_without_a_budget_nothing_is_recorded(world: dict[str, Any]) -> None:
    assert set_cap("--criterion", "k-anonymity:k=2")[0] == 0
    before = counts(world["url"])
    code, env = cli(*release_args(world, "m.csv", "--rho", "0.1"))
    assert code == 1 and "allows no differentially private release" in env["reasons"][0]
    assert "opt:" not in json.dumps(env) and "--dp-rho-cap" in env["advice"][0]["text"]
    assert counts(world["url"]) == before and not (world["tmp"] / "m.csv").exists()
    # a dataset the ledger has never seen is not created by a refusal either
    args = release_args(world, "m.csv", "--rho", "0.1")
    args[args.index("survey")] = "surve"
    code, env = cli(*args)
    assert code == 1 and counts(world["url"]) == before


def test_an_epsilon_cap_takes_laplace_releases(world: dict[str, Any]) -> None:
    set_cap("--dp-epsilon-cap", "1")
    code, env = cli(*release_args(world, "g.csv", "--rho", "0.1"))
    assert code == 1 and "unbounded" in env["reasons"][0]
    code, env = cli(*release_args(world, "l.csv", "--epsilon", "0.5"))
    assert code == 0 and env["details"]["mechanism"]["mechanism"] == "laplace"
    assert env["details"]["budget"]["spent"] == pytest.approx(0.5)
    assert "Theorem 15" in env["details"]["loss"]["text"]


def test_raising_the_cap_waits_for_a_second_person(world: dict[str, Any]) -> None:
    set_cap("--dp-rho-cap", "0.5")
    code, env = set_cap("--dp-rho-cap", "2", by="bob")
    assert code == 1 and env["outcome"] == "proposed"
    assert "allows more DP releases" in json.dumps(env)
    assert set_cap("--dp-rho-cap", "0.2", by="bob")[0] == 5  # one proposal waits
    code, env = cli("policy", "approve", "--dataset", "survey", "--version", "2", "--by", "carol",
                    "--reason", "ok")  # fmt: skip
    assert code == 0
    code, env = cli(*release_args(world, "m.csv", "--rho", "1.5"))
    assert code == 0 and env["details"]["budget"]["cap"] == 2.0


def test_a_policy_that_drops_the_budget_blocks_an_open_dp_attempt(world: dict[str, Any]) -> None:
    set_cap("--dp-rho-cap", "1")
    code, env = cli(*release_args(world, "m.csv", "--rho", "0.1"))
    # dropping the DP line tightens the policy (no DP release any more): in force at once
    assert set_cap("--criterion", "k-anonymity:k=5", by="bob")[0] == 0
    pub = world["tmp"] / "pub"
    pub.mkdir()
    code, gate = cli("publish", "--attempt", env["attempt"]["uuid"], "--to", str(pub),
                     str(world["tmp"] / "m.csv"))  # fmt: skip
    assert code == 1 and "allows no differentially private release" in json.dumps(gate)
    assert not list(pub.iterdir())
    # the spend stays: the noise was drawn
    assert counts(world["url"])["ledger_dp_spends"] == 1
    from airflow_privacy.errors import IllegalTransition
    from airflow_privacy.ledger import ReleaseLedger

    with ReleaseLedger(world["url"]) as db, pytest.raises(IllegalTransition, match="budget"):
        db.delete(1)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rho", "0.1", "--max-rows-per-person", "3"], "needs --entity"),
        ([], "--rho or --epsilon"),
        (["--rho", "0.1", "--epsilon", "0.1"], "not allowed with"),
        (["--rho", "0"], "--rho"),
        (["--rho", "101"], "--rho"),
        (["--rho", "0.1", "--entity", "age"], "also a column of a marginal"),
        (["--rho", "0.1", "--entity", "nope"], "'nope' is not in"),
        (["--rho", "0.1", "--max-rows-per-person", "0", "--entity", "who"], "max-rows-per-person"),
        (["--rho", "0.1", "--sum", "age"], "--sum 'age': write COL=LOW:HIGH"),
        (["--rho", "0.1", "--sum", "age=0:x"], "--sum 'age=0:x': write COL=LOW:HIGH"),
        (["--rho", "0.1", "--sum", "age=5:1"], "the low bound must be below"),
        (["--rho", "0.1", "--sum", "age=0:2000000000"], "within +-1,000,000,000"),
        (["--rho", "0.1", "--sum", "sex=0:1"], "'sex' of survey.csv holds a value that is not"),
        (["--rho", "0.1", "--sum", "age=0:9", "--sum", "age=1:9"], "'age' is summed twice"),
        (["--rho", "0.1", "--sum", "who=0:9", "--entity", "who"], "'who' is the --entity"),
        (["--rho", "0.1", "--sum", "nope=0:9"], "'nope' is not in"),
    ],
)
def test_bad_input_is_refused_with_exit_2(
    world: dict[str, Any], extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    set_cap("--dp-rho-cap", "1")
    before = counts(world["url"])
    out = io.StringIO()
    code = main([*release_args(world, "m.csv", *extra), "--quiet"], out)
    assert code == 2
    assert message in capsys.readouterr().err
    assert counts(world["url"]) == before and not (world["tmp"] / "m.csv").exists()


def test_sums_are_released_consistent_with_their_spread(world: dict[str, Any]) -> None:
    """The sum of age in every cell: its columns, one total over both marginals, the noisy
    total of the true 8,800 (ages 20..24, 80 records each) within six standard deviations;
    each count and sum one query with an equal share of rho."""
    set_cap("--dp-rho-cap", "10")
    code, env = cli(*release_args(world, "s.csv", "--rho", "2", "--sum", "age=0:120"))
    assert code == 0
    d = env["details"]
    (sn,) = d["mechanism"]["sums"]
    # 2 marginals x (count + sum) = 4 queries of rho 0.5: sigma = Delta / sqrt(2 * 0.5)
    assert d["mechanism"]["scale"] == pytest.approx(1.0, rel=1e-9)
    assert sn["scale"] == pytest.approx(120.0, rel=1e-9) and sn["reach"] == 120
    assert d["sums"] == [{"column": "age", "low": 0, "high": 120, "columns": [
        "age_sum", "age_sum_noisy", "age_sum_low95", "age_sum_high95"]}]  # fmt: skip
    assert "the sums of age" in env["summary"]
    with (world["tmp"] / "s.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[-4:] == ["age_sum", "age_sum_noisy", "age_sum_low95", "age_sum_high95"]
    totals = {m: sum(float(r["age_sum"]) for r in rows if r["marginal"] == m)
              for m in ("age x sex", "disease")}  # fmt: skip
    assert totals["age x sex"] == pytest.approx(totals["disease"], abs=1e-3)
    noisy = sum(int(r["age_sum_noisy"]) for r in rows if r["marginal"] == "disease")
    assert abs(noisy - 8800) <= 6 * math.sqrt(3) * sn["stddev"]
    assert all(int(r["age_sum_low95"]) >= 0 for r in rows)  # a sum of ages is >= 0
    sd = d["consistency"]["sum_stddev"]["age"]
    assert set(sd) == {"age x sex", "disease"} and all(0 < v < sn["stddev"] for v in sd.values())
    # the report names the sums and keeps them out of each cell's description
    html = world["tmp"] / "s.html"
    code, _ = cli("report", str(world["tmp"] / "s.csv"), "--attempt", env["attempt"]["uuid"],
                  "--out", str(html))  # fmt: skip
    assert code == 1  # written, not published yet
    page = html.read_text()
    assert "The sums of age in each cell" in page and "age_sum=" not in page


def test_a_key_set_is_declared_never_read(world: dict[str, Any], capsys: Any) -> None:
    set_cap("--dp-rho-cap", "1")
    args = release_args(world, "m.csv", "--rho", "0.1")
    i = args.index(f"disease={world['keys']['disease']}")
    del args[i - 1 : i + 1]
    assert main([*args, "--quiet"], io.StringIO()) == 2
    assert "column 'disease' has no public key set" in capsys.readouterr().err


def test_entity_bounds_rows_per_person(world: dict[str, Any]) -> None:
    set_cap("--dp-rho-cap", "10")
    code, env = cli(*release_args(world, "m.csv", "--rho", "1", "--entity", "who",
                                  "--max-rows-per-person", "2"))  # fmt: skip
    assert code == 0
    # sensitivity 2 per marginal: sigma = 2 * sqrt(2 / (2 * 1))
    assert env["details"]["mechanism"]["scale"] == pytest.approx(2.0, rel=1e-9)
    assert env["details"]["mechanism"]["bound"] == 2


def test_the_audit_leaves_dp_releases_out(world: dict[str, Any]) -> None:
    """A published DP release is not an earlier release to intersect with."""
    from airflow_privacy.ledger import ReleaseLedger

    set_cap("--dp-rho-cap", "1")
    code, env = cli(*release_args(world, "m.csv", "--rho", "0.1"))
    pub = world["tmp"] / "pub"
    pub.mkdir()
    assert cli("publish", "--attempt", env["attempt"]["uuid"], "--to", str(pub),
               str(world["tmp"] / "m.csv"))[0] == 0  # fmt: skip
    with ReleaseLedger(world["url"]) as db:
        (info,) = db.list(status="published")
        assert info.kind == "dp-marginals" and info.groups == 0
    release = world["tmp"] / "r.csv"
    release.write_text("age,sex,disease\n" + "20,M,flu\n20,M,cold\n21,F,flu\n21,F,hiv\n")
    code, env = cli("audit", str(release), "--sensitive", "disease", "--qi", "age", "--qi",
                    "sex", "--population", str(release), "--ledger", world["url"],
                    "--dataset", "survey", "--first-release")  # fmt: skip
    # its only published release is a DP one: a first release of partitions, nothing to
    # intersect with, said so
    assert code == 0 and "left out" in json.dumps(env)
    assert env["details"]["ledger_scope"]["seen"] == []


def test_cli_and_operator_agree(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from airflow_privacy.providers.airflow.operators.dp_release import DPReleaseOperator

    set_cap("--dp-rho-cap", "1")
    code, a = cli(*release_args(world, "cli.csv", "--rho", "0.2", "--entity", "who",
                                "--max-rows-per-person", "2", "--version", "7",
                                "--sum", "age=0:120"))  # fmt: skip
    assert code == 0
    k = world["keys"]
    ti = FakeTI()
    op = DPReleaseOperator(
        task_id="dp-release", source=str(world["data"]), dataset="survey",
        marginals=["age,sex", "disease"],
        key_files={"age": str(k["age"]), "sex": str(k["sex"]), "disease": str(k["disease"])},
        output_file=str(world["tmp"] / "cli.csv"), rho=0.2, entity_column="who",
        max_rows_per_person=2, version="8", sums=["age=0:120"],
    )  # fmt: skip
    (world["tmp"] / "cli.csv").unlink()
    b = op.execute({"ti": ti})
    for env in (a, b):
        env["details"]["budget"].pop("spent"), env["details"]["budget"].pop("left")
        env["details"]["budget"].pop("releases")
        env["details"].pop("loss")
        env["attempt"].pop("version"), env["attempt"].pop("release_id")
        env.pop("summary")
    assert normal(a) == normal(b)
    with pytest.raises(Exception, match="would exceed the budget"):
        DPReleaseOperator(
            task_id="dp-release",
            source=str(world["data"]),
            dataset="survey",
            marginals=["disease"],
            key_files={"disease": str(k["disease"])},
            output_file=str(world["tmp"] / "x.csv"),
            rho=0.7,
        ).execute({"ti": FakeTI()})
    assert not (world["tmp"] / "x.csv").exists()


def test_operator_arguments_are_checked_when_the_dag_is_parsed(world: dict[str, Any]) -> None:
    from airflow_privacy.errors import InputError
    from airflow_privacy.providers.airflow.operators.dp_release import DPReleaseOperator

    with pytest.raises(InputError, match="max_rows_per_person 3 needs entity_column"):
        DPReleaseOperator(task_id="t", source="x.csv", dataset="d", marginals=["a"],
                          key_files={"a": "a.csv"}, output_file="o.csv", rho=0.1,
                          max_rows_per_person=3)  # fmt: skip
    with pytest.raises(InputError, match="rho, epsilon"):
        DPReleaseOperator(task_id="t", source="x.csv", dataset="d", marginals=["a"],
                          key_files={"a": "a.csv"}, output_file="o.csv", rho=0.1,
                          epsilon=1)  # fmt: skip


def test_a_sql_table_is_counted_in_its_database(world: dict[str, Any]) -> None:
    import pyarrow.csv as pacsv
    import sqlalchemy as sa

    set_cap("--dp-rho-cap", "10")
    db = f"sqlite:///{world['tmp'] / 'data.db'}"
    engine = sa.create_engine(db)
    pacsv.read_csv(world["data"]).to_pandas().astype(str).to_sql("survey", engine, index=False)
    engine.dispose()
    k = world["keys"]
    code, env = cli("dp-release", "table:survey", "--conn", db, "--dataset", "survey",
                    "--marginal", "age,sex", "--keys", f"age={k['age']}", "--keys",
                    f"sex={k['sex']}", "--rho", "1", "--entity", "who",
                    "--max-rows-per-person", "2", "--out", str(world["tmp"] / "t.csv"))  # fmt: skip
    assert code == 0 and env["details"]["cells"] == 12
    # the sum of the 12 noisy cells is the 400 records within six standard deviations
    # (every person has 2 rows here: nothing is left out)
    import csv

    with (world["tmp"] / "t.csv").open(newline="") as fh:
        total = sum(int(r["noisy_count"]) for r in csv.DictReader(fh))
    assert abs(total - 400) <= 6 * math.sqrt(12) * env["details"]["mechanism"]["stddev"]


def test_an_empty_extract_is_refused_before_any_spend(
    world: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    set_cap("--dp-rho-cap", "1")
    world["data"].write_text("age,sex,disease,who\n")
    before = counts(world["url"])
    assert main([*release_args(world, "m.csv", "--rho", "0.1"), "--quiet"], io.StringIO()) == 2
    assert "holds no records" in capsys.readouterr().err
    assert counts(world["url"]) == before and not (world["tmp"] / "m.csv").exists()


def test_the_budget_holds_per_person_across_datasets(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the people's identifier hashes (the entity column, the ledger's key), a person's
    spends add up over every DP release that recorded them, whatever its dataset."""
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_KEY", "tests-only-key-0123456789abcdefghijklmnopq")
    for dataset in ("survey", "clinic", "elsewhere"):
        cli("policy", "set", "--dataset", dataset, "--dp-rho-cap", "1", "--reason", "b",
            "--by", "alice")  # fmt: skip

    def release(dataset: str, rho: str, data: Path | None = None) -> tuple[int, dict[str, Any]]:
        args = release_args(world, f"{dataset}-{rho}.csv", "--rho", rho, "--entity", "who",
                            "--max-rows-per-person", "2")  # fmt: skip
        args[args.index("survey")] = dataset
        if data is not None:
            args[1] = str(data)
        return cli(*args)

    code, env = release("survey", "0.6")
    assert code == 0 and env["details"]["per_person"] is True
    from airflow_privacy.ledger import ReleaseLedger

    with ReleaseLedger(world["url"]) as db:  # how many people: recorded as hashes, not shown
        assert db.info(env["attempt"]["release_id"]).members is None
    assert env["details"]["budget"]["people"] == pytest.approx(0.6)
    # the same people in another dataset: its own budget is untouched, theirs is not
    code, env = release("clinic", "0.6")
    assert code == 1 and "for some of its people" in env["reasons"][0]
    assert (
        "already spent 0.6" in env["reasons"][0] and not (world["tmp"] / "clinic-0.6.csv").exists()
    )
    code, env = release("clinic", "0.4")
    assert code == 0 and env["details"]["budget"]["people"] == pytest.approx(1.0)
    # other people: nothing shared, their own budget
    other = world["tmp"] / "others.csv"
    other.write_text(world["data"].read_text().replace(",p", ",q"))
    code, env = release("elsewhere", "0.9", other)
    assert code == 0 and env["details"]["budget"]["people"] == pytest.approx(0.9)


def test_without_a_key_the_budget_is_per_dataset(
    world: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_KEY", raising=False)
    set_cap("--dp-rho-cap", "1")
    code, env = cli(*release_args(world, "m.csv", "--rho", "0.5", "--entity", "who",
                                  "--max-rows-per-person", "2"))  # fmt: skip
    assert code == 0 and env["details"]["per_person"] is False
