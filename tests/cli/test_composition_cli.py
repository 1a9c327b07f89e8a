"""``airflow-privacy audit`` and ``airflow-privacy ledger``: the paper's Table 1 end to end
(through an attempt, the audit and the gate), exit codes, the report envelope (which never
shows an individual's sensitive value: only the confidential --individuals file does), known
overlap, manifests, and bad input (exit 2, one line)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from airflow_privacy.cli import main
from airflow_privacy.ledger import ReleaseLedger
from tests.core.composition.scenarios import QIS, TABLE_1A, TABLE_1B

KEY_ENV = "AIRFLOW_PRIVACY_LEDGER_KEY"
KEY = "tests-only-key-0123456789abcdefghijklmnopqrstuv"
OTHER_KEY = "tests-only-key-ZYXWVUTSRQPONMLKJIHGFEDCBA98765"
# every sensitive value of Table 1: none may appear in what the audit prints
VALUES = {r[-1] for r in (*TABLE_1A, *TABLE_1B)}


@pytest.fixture(autouse=True)
def no_default_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The default ledger location ($AIRFLOW_HOME/privacy_ledger.db) in an empty folder: a
    test never reads or writes the ledger of the machine it runs on."""
    home = tmp_path / "airflow-home"
    home.mkdir()
    monkeypatch.setenv("AIRFLOW_HOME", str(home))
    monkeypatch.delenv("AIRFLOW_PRIVACY_LEDGER_URL", raising=False)
    monkeypatch.delenv("AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT", raising=False)
    monkeypatch.delenv(KEY_ENV, raising=False)
    return home


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


def write_csv(path: Path, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> Path:
    cols = list(zip(*rows, strict=True))
    pacsv.write_csv(pa.table({h: list(c) for h, c in zip(header, cols, strict=True)}), path)
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    header = (*QIS, "condition")
    people = [
        ("Alice", "13012", "28", "US"),
        ("Bob", "13053", "36", "IN"),
        ("Carol", "13068", "45", "FR"),
    ]
    return {
        "h1": write_csv(tmp_path / "h1.csv", header, TABLE_1A),
        "h2": write_csv(tmp_path / "h2.csv", header, TABLE_1B),
        "people": write_csv(tmp_path / "people.csv", ("name", *QIS), people),
        "db": tmp_path / "ledger.db",
    }


def columns() -> list[str]:
    return ["--sensitive", "condition", "--qi", "zip", "--qi", "age", "--qi", "nationality"]


def _envelope_text(out: str) -> str:
    """Every string of an envelope printed as JSON (values, keys), for leak checks."""
    return json.dumps(json.loads(out), ensure_ascii=False)


def test_table1_through_the_ledger(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(files["db"])
    code, out, _ = run(
        [
            "ledger",
            "import",
            str(files["h2"]),
            "--dataset",
            "hospital-2",
            *columns(),
            "--status",
            "published",
            "--ledger",
            db,
            "--quiet",
        ],
        capsys,
    )
    assert code == 0 and "release #1 (hospital-2 v1) recorded as published" in out
    with ReleaseLedger(db, create=False) as ledger:
        h2_uuid = ledger.info(1).uuid
    argv = [
        "audit",
        str(files["h1"]),
        *columns(),
        "--population",
        str(files["people"]),
        "--ledger",
        db,
        "--quiet",
    ]
    code, out, err = run([*argv, "--format", "json"], capsys)
    assert code == 1 and err == ""
    data = json.loads(out)
    assert data["step"] == "audit" and data["outcome"] == "failed" and data["safe"] is False
    (result,) = data["results"]
    assert result["criterion"] == "composition" and result["safe"] is False
    # the witness is Alice by her row of the population, with the groups that combine; how many
    # values are left (one), never which (AIDS), nor her QI values
    witness = result["witness"]
    assert witness["row"] == 0 and witness["ea_hat"] == 1 and witness["confidence"] == 1.0
    assert "intersection" not in witness and "qis" not in witness
    assert [r["groups"] for r in witness["releases"]] == [
        ["zip=130**, age=<30, nationality=*"],
        ["zip=130**, age=<35, nationality=*"],
    ]
    shown = _envelope_text(out)
    assert not [v for v in VALUES if v in shown], shown
    assert "13012" not in shown and "Alice" not in shown
    audit = data["details"]
    assert audit["overlap_size"] == 3 and audit["vp"] == 2
    assert audit["pvp"][0] == {
        "confidence": 1.0,
        "vp": 2,
        "pvp": pytest.approx(200 / 3),
        "posterior_vp": 2,
        "posterior_pvp": pytest.approx(200 / 3),
        "alone_pvp": pytest.approx(100 / 3),  # Bob's H1 group is all Cancer already
        "alone_posterior_pvp": pytest.approx(100 / 3),
    }
    assert result["value"] == pytest.approx(200 / 3)
    assert [w["row"] for w in audit["worst"]] == [0, 1, 2]
    assert all("intersection" not in w and "qis" not in w for w in audit["worst"])
    assert audit["priors"] == [
        {"source": "ledger", "id": 1, "uuid": h2_uuid, "name": "hospital-2 v1"}
    ]
    # the ledger's location from the environment when --ledger is not given
    env_argv = [a for a in argv if a not in ("--ledger", db)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AIRFLOW_PRIVACY_LEDGER_URL", f"sqlite:///{db}")
        code, out, _ = run([*env_argv, "--format", "json"], capsys)
    assert code == 1 and json.loads(out)["details"]["priors"][0]["id"] == 1
    # a dataset that is not in the ledger is a typo, not "nothing to audit against"
    code, _, err = run([*argv, "--dataset", "hospital-22"], capsys)
    assert code == 2 and "dataset 'hospital-22' is not in ledger" in err

    # recording the verdict: an attempt (hospital 1's first release), the audit as its check,
    # and the gate, which blocks it with the audit's reason
    code, out, err = run(["attempt", str(files["h1"]), "--dataset", "hospital-1", *columns(),
                          "--require", "audit", "--ledger", db, "--quiet"], capsys)  # fmt: skip
    assert code == 2 and "dataset 'hospital-1' has no published release" in err
    assert "--first-release" in err
    # declared, but close to hospital-2: a typo until confirmed by name (--new-dataset)
    code, out, err = run(["attempt", str(files["h1"]), "--dataset", "hospital-1", *columns(),
                          "--require", "audit", "--first-release", "--ledger", db,
                          "--quiet"], capsys)  # fmt: skip
    assert code == 2 and "close to 'hospital-2'" in err and "--new-dataset hospital-1" in err
    attempt = _attempt(files["h1"], "hospital-1", db, capsys)
    individuals = tmp_path / "individuals.csv"
    code, out, _ = run([*argv, "--attempt", attempt, "--individuals", str(individuals)], capsys)
    assert code == 1
    assert out.startswith("composition audit (C = 100%, limit 0%, measure ganta): BLOCKED")
    assert (
        "row 0: C = 1, posterior 1; h1.csv group zip=130**, age=<30, nationality=* (3 left) "
        "with hospital-2 v1 group zip=130**, age=<35, nationality=* (4 left)"
    ) in out
    assert not [v for v in VALUES if v in out], out
    assert f"recorded:   check 'audit' of attempt {attempt}" in out
    assert f"individuals (confidential): {individuals}" in out
    # only the confidential file names the value left for each person
    rows = pacsv.read_csv(individuals).to_pylist()
    assert (rows[0]["row"], rows[0]["ea_hat"], rows[0]["intersection"]) == (0, 1, "AIDS")
    code, out, _ = run(["publish", "--attempt", attempt, "--ledger", db], capsys)
    assert code == 1 and out.startswith("BLOCKED: hospital-1 v1 was NOT published: 1 reason(s)")
    assert "reason: audit: composition: 2 of the 3 people" in out
    with ReleaseLedger(db, create=False) as ledger:
        info = ledger.info(2)
        (blocked,) = ledger.attempts(2)
    assert info.status == "blocked" and info.content_status == "candidate"
    assert blocked.status == "blocked" and blocked.uuid == attempt
    assert "PVP = 66.67%" in blocked.reasons[0]
    assert not [v for v in VALUES if v in " ".join(blocked.reasons)], blocked.reasons
    (check,) = blocked.checks
    assert (check.name, check.step, check.safe) == ("audit", "audit", False)
    assert check.envelope["results"][-1]["criterion"] == "composition"
    stored = json.dumps(check.envelope, ensure_ascii=False)
    assert not [v for v in VALUES if v in stored] and "13012" not in stored
    # a 50% limit lets 2 of 3 pass? no: 66.7% > 50%; 70% passes
    assert run([*argv, "--max-pvp", "50"], capsys)[0] == 1
    assert run([*argv, "--max-pvp", "70"], capsys)[0] == 0
    # the blocked candidate in the ledger is not a prior (only published releases are)
    code, out, _ = run([*argv, "--max-pvp", "70", "--format", "json"], capsys)
    assert [p["id"] for p in json.loads(out)["details"]["priors"]] == [1]

    # a new attempt of the same content is judged afresh: at a 70% limit it passes, and the
    # gate publishes it (copied with its files, counted by every later audit)
    attempt = _attempt(files["h1"], "hospital-1", db, capsys)
    code, out, _ = run([*argv, "--attempt", attempt, "--max-pvp", "70"], capsys)
    assert code == 0 and "composition audit (C = 100%, limit 70%, measure ganta): PASS" in out
    published = tmp_path / "published"
    code, out, _ = run(["publish", str(files["h1"]), "--attempt", attempt, "--to",
                        str(published), "--ledger", db], capsys)  # fmt: skip
    assert code == 0 and out.startswith("PUBLISHED: published hospital-1 v1 (release #2)")
    assert (published / "h1.csv").read_bytes() == files["h1"].read_bytes()
    with ReleaseLedger(db, create=False) as ledger:
        assert ledger.info(2).status == "published"
        assert [a.status for a in ledger.attempts(2)] == ["blocked", "published"]
    # the published candidate is never an earlier release of itself
    code, out, _ = run([*argv, "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["outcome"] == "already-published"


def _attempt(
    release: Path, dataset: str, db: str, capsys: pytest.CaptureFixture[str], *extra: str
) -> str:
    """Open an attempt (a first release of ``dataset``, confirmed by name: hospital-1 is
    close to hospital-2) requiring the check ``audit``; the officer records its policy
    first, confirming the new name too."""
    code, out, err = run(["policy", "set", "--dataset", dataset, "--new-dataset", dataset,
                          "--max-prosecutor-risk", "1", "--by", "officer", "--reason", "r",
                          "--ledger", db, "--quiet"], capsys)  # fmt: skip
    assert code in (0, 1), err
    code, out, err = run(["attempt", str(release), "--dataset", dataset, *columns(),
                          "--require", "audit", "--first-release", "--new-dataset", dataset,
                          "--ledger", db, "--quiet", "--format", "json", *extra],
                         capsys)  # fmt: skip
    assert code == 0, err
    env = json.loads(out)
    assert env["step"] == "attempt" and env["outcome"] == "opened"
    uuid: str = env["attempt"]["uuid"]
    return uuid


def test_prior_files_confidence_and_measure(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    carol = write_csv(tmp_path / "carol.csv", ("name", *QIS), [("Carol", "13068", "45", "FR")])
    argv = [
        "audit",
        str(files["h1"]),
        *columns(),
        "--population",
        str(carol),
        "--prior",
        str(files["h2"]),
        "--no-ledger",
        "--quiet",
    ]
    assert run(argv, capsys)[0] == 0  # {Cancer, Viral Infection}: no perfect breach
    code, out, _ = run([*argv, "--format", "json"], capsys)
    data = json.loads(out)
    assert (
        code == 0
        and data["safe"] is True
        and data["details"]["priors"]
        == [{"source": "file", "name": "h2.csv", "ref": str(files["h2"])}]
    )
    assert run([*argv, "--confidence", "50%"], capsys)[0] == 1
    assert run([*argv, "--confidence", "1/2", "--max-pvp", "100"], capsys)[0] == 0
    # H1 {Cancer 1, VI 2} and H2 {Cancer 3, VI 2}: posterior of VI is 4/7
    assert run([*argv, "--confidence", "0.57", "--measure", "posterior"], capsys)[0] == 1
    assert run([*argv, "--confidence", "0.58", "--measure", "posterior"], capsys)[0] == 0
    out_file = tmp_path / "individuals.csv"
    assert run([*argv, "--individuals", str(out_file)], capsys)[0] == 0
    rows = pacsv.read_csv(out_file).to_pylist()
    assert rows[0]["ea_hat"] == 2 and rows[0]["intersection"] in (
        "Cancer; Viral Infection",
        "Viral Infection; Cancer",
    )
    assert not (tmp_path / "individuals.csv.tmp").exists()


def test_known_overlap_with_identifier_hashes(
    files: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    db = str(files["db"])
    # hospital 2 saw Bob and Carol only
    ids = write_csv(tmp_path / "h2_people.csv", ("name",), [("Bob",), ("Carol",)])
    code, out, _ = run(
        [
            "ledger",
            "import",
            str(files["h2"]),
            "--dataset",
            "h2",
            *columns(),
            "--status",
            "published",
            "--ledger",
            db,
            "--identifiers",
            str(ids),
            "--id-column",
            "name",
            "--quiet",
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0 and json.loads(out)["members"] == 2
    argv = [
        "audit",
        str(files["h1"]),
        *columns(),
        "--population",
        str(files["people"]),
        "--ledger",
        db,
        "--quiet",
        "--format",
        "json",
        "--id-column",
        "name",
    ]
    code, out, _ = run([*argv, "--overlap", "known"], capsys)
    audit = json.loads(out)["details"]
    # Alice (AIDS) is not in hospital 2: only Bob and Carol are intersected
    assert audit["overlap"] == "known"
    assert audit["overlap_size"] == 2 and audit["candidate_only"] == 1
    assert [w["row"] for w in audit["worst"]] == [1, 2]
    assert code == 1  # Bob: {Cancer}
    assert "Bob" not in out and "Carol" not in out  # identifiers are only hashed
    code, out, _ = run(argv, capsys)  # worst case: Alice is assumed present
    assert json.loads(out)["details"]["overlap_size"] == 3
    monkeypatch.setenv(KEY_ENV, OTHER_KEY)
    code, _, err = run([*argv, "--overlap", "known"], capsys)
    assert code == 2 and "hashed with another key" in err
    # a short key could be found by trying keys against a stored hash: refused
    monkeypatch.setenv(KEY_ENV, "s3cret")
    code, _, err = run([*argv, "--overlap", "known"], capsys)
    assert code == 2 and "is too weak" in err


def test_bucketized_candidate_is_its_own_population(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cand = write_csv(
        tmp_path / "cand.csv",
        ("age", "zip", "bucket", "disease"),
        [
            ("28", "13012", "1", "flu"),
            ("35", "13053", "1", "aids"),
            ("41", "14850", "2", "flu"),
            ("52", "14850", "2", "cancer"),
        ],
    )
    prior = write_csv(
        tmp_path / "prior.csv",
        ("age", "zip", "disease"),
        [
            ("<30", "130**", "aids"),
            ("<30", "130**", "hiv"),
            ("30-60", "*", "flu"),
            ("30-60", "*", "cancer"),
        ],
    )
    manifest = {
        "method": "mondrian",
        "qis": ["age", "zip"],
        "sensitive": "disease",
        "group_columns": ["age", "zip"],
    }
    Path(f"{prior}.manifest.json").write_text(json.dumps(manifest))
    code, out, err = run(
        [
            "audit",
            str(cand),
            "--qi",
            "age",
            "--qi",
            "zip",
            "--sensitive",
            "disease",
            "--kind",
            "bucketized",
            "--bucket",
            "bucket",
            "--prior",
            str(prior),
            "--no-ledger",
            "--individuals",
            str(tmp_path / "individuals.parquet"),
            "--quiet",
            "--format",
            "json",
        ],
        capsys,
    )
    assert err == ""
    data = json.loads(out)
    audit = data["details"]
    # row 0 (28, 13012): bucket 1 {flu, aids} ∩ <30 {aids, hiv} = {aids}
    assert code == 1 and audit["worst"][0]["row"] == 0
    assert audit["worst"][0]["ea_hat"] == 1 and audit["worst"][0]["confidence"] == 1.0
    assert "intersection" not in audit["worst"][0]
    assert "aids" not in out and "13012" not in out  # the envelope shows neither
    assert data["release"]["kind"] == "bucketized"
    assert data["release"]["group_columns"] == ["bucket"]
    assert audit["population"] == 4
    assert audit["population_ref"] == str(cand)  # the candidate is its own population
    # the confidential per-individual file names the value left
    rows = pq.read_table(tmp_path / "individuals.parquet").to_pylist()
    assert rows[0]["row"] == 0 and rows[0]["intersection"] == "aids"


def test_mondrian_release_with_its_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from airflow_privacy.core.anonymize import anonymize
    from airflow_privacy.core.datasets import adult_hierarchy_path, load_adult

    adult = load_adult().slice(0, 1500)
    qis = ["age", "sex", "education"]
    paths = []
    for j, rows in enumerate((range(0, 1000), range(500, 1500))):
        res = anonymize(
            adult.take(pa.array(list(rows))),
            qis,
            "occupation",
            method="mondrian",
            criteria=[("k-anonymity", {"k": 5})],
            hierarchies={"education": _edu()},
            categorical_split="hierarchy",  # labels of the hierarchy (the test's point)
        )
        path = tmp_path / f"r{j}.parquet"
        pq.write_table(res.release, path)
        Path(f"{path}.manifest.json").write_text(json.dumps(res.manifest.to_dict()))
        paths.append(path)
    raw = tmp_path / "raw.parquet"  # the candidate's people: rows 500-1499
    pq.write_table(adult.take(pa.array(list(range(500, 1500)))), raw)
    table = tmp_path / "individuals.parquet"
    argv = [
        "audit",
        str(paths[1]),
        "--prior",
        str(paths[0]),
        "--no-ledger",
        "--population",
        str(raw),
        "--hierarchy",
        f"education={adult_hierarchy_path('education')}",
        "--quiet",
        "--format",
        "json",
        "--max-pvp",
        "100",
        "--individuals",
        str(table),
    ]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    audit = json.loads(out)["details"]
    # Mondrian's releases are locatable: every person is covered by their own group
    assert audit["releases"][0]["unlocatable"] == 0
    assert all(r["ambiguous"] == 0 for r in audit["releases"])
    rows = pq.read_table(table).to_pylist()
    assert all(r["in_overlap"] for r in rows[:500])  # rows 500-999 are in both releases
    assert audit["overlap_size"] == sum(r["in_overlap"] for r in rows) >= 500
    # without the hierarchy, labels such as 'Undergraduate' cover nobody
    code, out, _ = run(
        [a for a in argv if not a.startswith("education=") and a != "--hierarchy"], capsys
    )
    assert json.loads(out)["details"]["releases"][0]["unlocatable"] > 0


def _edu() -> Any:
    from airflow_privacy.core.datasets import adult_hierarchies

    return adult_hierarchies()["education"]


def test_bad_input_exits_2_with_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = ["audit", str(files["h1"]), *columns(), "--population", str(files["people"]), "--quiet"]
    files_only = [*base, "--no-ledger"]
    other = tmp_path / "other.csv"
    other.write_text(files["h2"].read_text().replace("condition", "diagnosis"))
    Path(f"{other}.manifest.json").write_text(
        json.dumps({"method": "mondrian", "qis": list(QIS), "sensitive": "diagnosis"})
    )
    fewer = tmp_path / "fewer.csv"
    write_csv(fewer, ("zip", "age", "condition"), [(r[0], r[1], r[3]) for r in TABLE_1B])
    Path(f"{fewer}.manifest.json").write_text(
        json.dumps({"method": "mondrian", "qis": ["zip", "age"], "sensitive": "condition"})
    )
    h2 = str(files["h2"])
    cases = [
        ([*files_only, "--prior", str(other)], "sensitive attribute 'diagnosis'"),
        (
            [*files_only, "--prior", str(fewer)],
            "QI 'nationality' of the candidate is missing from release 'fewer.csv'",
        ),
        ([*base, "--ledger", "foo://nowhere"], "unknown ledger URL scheme 'foo'"),
        ([*base, "--ledger", str(tmp_path / "none.db")], "ledger file"),
        # the default location ($AIRFLOW_HOME) holds no ledger: never "nothing to audit"
        ([*base], "does not exist, so there is no earlier release to audit against"),
        ([*base], "declare it with --first-release"),
        (
            [*base[:-3], "--quiet", "--no-ledger", "--prior", h2],
            "give --population (its original records)",
        ),
        ([*files_only, "--prior", h2, "--overlap", "known"], "--overlap known needs"),
        ([*files_only], "nothing to audit against: use the ledger and/or --prior FILE"),
        ([*files_only, "--prior", h2, "--dataset", "d"], "--dataset and --against need the"),
        ([*files_only, "--prior", str(tmp_path / "missing.csv")], "does not exist"),
        ([*files_only, "--prior", h2, "--confidence", "2"], "--confidence must be in"),
        ([*files_only, "--prior", h2, "--max-pvp", "150"], "--max-pvp must be in [0, 100]"),
        ([*files_only, "--prior", h2, "--hierarchy", "zip"], "--hierarchy expects"),
        (
            [*files_only, "--prior", h2, "--individuals", str(tmp_path / "x.json")],
            "'x.json' is a table: name it .csv, .csv.gz or .parquet, not .json",
        ),
        (
            [
                "audit",
                str(files["h1"]),
                "--population",
                str(files["people"]),
                "--prior",
                h2,
                "--no-ledger",
                "--quiet",
            ],
            "give --qi",
        ),
    ]
    for argv, message in cases:
        code, out, err = run(argv, capsys)
        assert code == 2, (argv, err)
        assert message in err, (message, err)
        assert err.count("\n") == 1 and out == ""
    # reading never creates a ledger
    assert not (tmp_path / "none.db").exists()
    assert list((tmp_path / "airflow-home").iterdir()) == []


def test_ledger_cli(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    db = str(files["db"])
    code, _, err = run(["ledger", "list", "--ledger", db], capsys)
    assert code == 2 and "does not exist" in err
    assert not files["db"].exists()  # reading never creates a ledger
    dataset = "x'; DROP TABLE ledger_groups;--"
    imp = [
        "ledger",
        "import",
        str(files["h1"]),
        "--dataset",
        dataset,
        *columns(),
        "--ledger",
        db,
        "--quiet",
    ]
    assert run(imp, capsys)[:2] == (
        0,
        "release #1 (x'; DROP TABLE ledger_groups;-- v1) recorded as candidate\n",
    )
    code, out, _ = run(imp, capsys)
    assert code == 0 and "already recorded as release #1" in out and "candidate)" in out
    code, out, _ = run(["ledger", "list", "--ledger", db, "--format", "json"], capsys)
    rel = json.loads(out)["releases"]
    assert len(rel) == 1 and rel[0]["groups"] == 3 and rel[0]["records"] == 12
    assert rel[0]["status"] == "candidate"
    code, out, _ = run(["ledger", "show", f"{dataset}@1", "--ledger", db, "--groups"], capsys)
    assert code == 0 and "130** | 3* | *  (4)  {Cancer: 4}" in out
    # a block belongs to an attempt: content without an open attempt cannot be blocked
    code, _, err = run(
        ["ledger", "mark-blocked", "1", "--reason", "audit failed", "--ledger", db], capsys
    )
    assert code == 5 and "release #1 (x'; DROP TABLE ledger_groups;-- v1) has no open" in err
    attempt = _attempt(files["h1"], dataset, db, capsys)
    code, out, _ = run(
        ["ledger", "mark-blocked", "1", "--reason", "audit failed", "--ledger", db], capsys
    )
    assert code == 0
    assert out.startswith(f"BLOCKED: attempt {attempt} of x'; DROP TABLE ledger_groups;-- v1 "
                          "blocked by ")  # fmt: skip
    code, out, _ = run(["ledger", "list", "--ledger", db, "--status", "blocked"], capsys)
    assert code == 0 and " blocked " in out.splitlines()[1]
    # a blocked release cannot be marked published: its attempt is decided, and the gate
    # gives the reason it was blocked
    code, _, err = run(["ledger", "mark-published", "1", "--ledger", db], capsys)
    assert code == 5 and "has no open attempt" in err
    code, out, _ = run(["publish", "--attempt", attempt, "--ledger", db], capsys)
    assert code == 1 and "reason: audit failed" in out
    code, out, _ = run(["ledger", "show", "1", "--ledger", db], capsys)
    assert f"attempt {attempt}: blocked" in out and "why: audit failed" in out
    code, _, err = run(["ledger", "show", "7", "--ledger", db], capsys)
    assert code == 2 and "release #7 does not exist" in err
    code, out, _ = run(["ledger", "list", "--ledger", db, "--status", "published"], capsys)
    assert out.startswith("no releases in sqlite:///")
    # a steward asks to set the blocked attempt aside; under the dataset's policy a second,
    # different person approves it (four eyes); who, when and why are kept; once only
    code, out, _ = run(["ledger", "supersede", attempt, "--reason", "audited the wrong file",
                        "--by", "steward", "--ledger", db, "--format", "json"], capsys)  # fmt: skip
    assert code == 1
    env = json.loads(out)
    assert env["step"] == "supersede" and env["outcome"] == "proposed"
    code, _, err = run(["ledger", "approve", attempt, "--reason", "mine", "--by", "steward",
                        "--ledger", db], capsys)  # fmt: skip
    assert code == 5 and "four eyes" in err
    code, out, _ = run(["ledger", "approve", attempt, "--reason", "agreed", "--by", "officer",
                        "--ledger", db, "--format", "json"], capsys)  # fmt: skip
    assert code == 0
    env = json.loads(out)
    assert env["step"] == "supersede" and env["outcome"] == "superseded"
    assert env["details"]["override"]["requested_by"] == "steward"
    assert env["details"]["override"]["decided_by"] == "officer"
    assert env["details"]["override"]["request_reason"] == "audited the wrong file"
    code, _, err = run(["ledger", "supersede", attempt, "--reason", "again", "--ledger", db],
                       capsys)  # fmt: skip
    assert code == 5 and "only a blocked attempt can be superseded" in err
    code, out, _ = run(["ledger", "show", "1", "--ledger", db, "--format", "json"], capsys)
    shown = json.loads(out)
    assert shown["status"] == "superseded"
    assert [
        (a["status"], a["superseded_by"], a["supersede_reason"]) for a in shown["attempts"]
    ] == [("superseded", "steward", "audited the wrong file")]
    code, _, err = run(
        [
            "ledger",
            "import",
            str(files["h2"]),
            "--dataset",
            "d",
            *columns(),
            "--ledger",
            db,
            "--identifiers",
            str(files["people"]),
        ],
        capsys,
    )
    assert code == 2 and "go together" in err
    # content is recorded as candidate or published; a block is never recorded by import
    code, _, err = run([*imp, "--status", "blocked"], capsys)
    assert code == 2 and "invalid choice: 'blocked'" in err


@pytest.mark.parametrize("cap", [None, 0.5])
def test_a_blocked_audit_offers_the_dp_path(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], cap: float | None
) -> None:
    """Ganta et al.'s remedy as the way forward: the budget left and the error it buys."""
    from airflow_privacy.gate.policy import Policy
    from tests.policy_setup import record_policy

    db = str(files["db"])
    policy = Policy(max_prosecutor_risk=1.0, dp={"unit": "rho", "cap": cap} if cap else None)
    record_policy(f"sqlite:///{db}", "hospital", policy=policy)
    code, _, _ = run(["ledger", "import", str(files["h2"]), "--dataset", "hospital", *columns(),
                      "--status", "published", "--ledger", db, "--quiet"], capsys)  # fmt: skip
    assert code == 0
    code, out, _ = run(["audit", str(files["h1"]), *columns(), "--population",
                        str(files["people"]), "--ledger", db, "--dataset", "hospital",
                        "--format", "json", "--quiet"], capsys)  # fmt: skip
    assert code == 1
    (dp,) = [a for a in json.loads(out)["advice"] if a["kind"] == "dp-release"]
    assert "opt:" not in json.dumps(dp)  # words, not an option marker left unrendered
    if cap is None:
        assert "sets no DP budget yet" in dp["text"] and dp["passes_at"] == 0
        assert "policy set --dp-rho-cap" in dp["text"]
    else:
        # ten marginals at rho 0.5, one record per person: sigma = sqrt(10 / 1) per cell
        assert "rho 0.5 of 0.5 is left" in dp["text"] and "3.16" in dp["text"]
        assert dp["passes_at"] == 0.5 and dp["rechecked"] is False


def test_audit_cli_takes_benign_values(
    files: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Table 1 (Ganta et al.): Carol is left with {Cancer, Viral Infection}; the posterior of
    Viral Infection is 4/7, of Cancer 3/7."""
    carol = write_csv(tmp_path / "carol.csv", ("name", *QIS), [("Carol", "13068", "45", "FR")])
    argv = ["audit", str(files["h1"]), *columns(), "--population", str(carol),
            "--prior", str(files["h2"]), "--no-ledger", "--quiet"]  # fmt: skip
    posterior = ["--confidence", "0.57", "--measure", "posterior"]
    assert run([*argv, *posterior], capsys)[0] == 1
    code, out, _ = run([*argv, *posterior, "--benign", "Viral Infection", "--format", "json"],
                       capsys)  # fmt: skip
    env = json.loads(out)
    assert code == 0 and env["results"][0]["parameters"]["benign"] == ["Viral Infection"]
    assert env["results"][0]["max_disclosure"] == pytest.approx(3 / 7, abs=1e-9)
    # Ganta's measure: Cancer is left beside the benign value, 1/|S| = 1/2
    assert run([*argv, "--confidence", "0.5", "--benign", "Viral Infection"], capsys)[0] == 1
    every = ["--benign", "Viral Infection", "--benign", "Cancer", "--benign", "Rare"]
    code, out, _ = run([*argv, "--confidence", "0.5", *every, "--format", "json"], capsys)
    env = json.loads(out)
    assert code == 0 and env["results"][0]["value"] == 0.0
    assert env["details"]["benign_absent"] == ["Rare"]  # noted, not an error
