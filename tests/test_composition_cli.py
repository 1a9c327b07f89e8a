"""``airflow-privacy audit`` and ``airflow-privacy ledger``: the paper's Table 1 end to end,
exit codes, JSON contract, known overlap, manifests, and bad input (exit 2, one line)."""

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
from tests.test_composition_attack import QIS, TABLE_1A, TABLE_1B

KEY_ENV = "AIRFLOW_PRIVACY_LEDGER_KEY"


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


def test_table1_through_the_ledger(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
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
    assert code == 0 and "release #1 (hospital-2 v1) recorded published" in out
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
    assert data["criterion"] == "composition" and data["safe"] is False
    assert data["witness"]["intersection"] == ["AIDS"] and data["witness"]["row"] == 0
    assert data["witness"]["qis"] == {"zip": "13012", "age": "28", "nationality": "US"}
    assert [r["groups"] for r in data["witness"]["releases"]] == [
        ["zip=130**, age=<30, nationality=*"],
        ["zip=130**, age=<35, nationality=*"],
    ]
    audit = data["audit"]
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
    assert data["priors"] == [
        {"source": "ledger", "id": 1, "name": "hospital-2 v1", "status": "published"}
    ]
    # text output, and recording the verdict
    code, out, _ = run([*argv, "--record", "hospital-1"], capsys)
    assert code == 1
    assert out.startswith("composition audit (C = 100%, limit 0%, measure ganta): BLOCKED")
    assert "row 0: {'AIDS'} left after intersecting h1.csv group zip=130**, age=<30" in out
    assert "recorded:   release #2 (hospital-1 v1, blocked)" in out
    info = ReleaseLedger(db).info(2)
    assert info.status == "blocked" and "AIDS" in info.reasons[0]
    assert info.criteria[-1]["criterion"] == "composition"
    # a 50% limit lets 2 of 3 pass? no: 66.7% > 50%; 70% passes
    assert run([*argv, "--max-pvp", "70"], capsys)[0] == 0
    # the blocked candidate in the ledger is not a prior (only published releases are)
    code, out, _ = run([*argv, "--max-pvp", "70", "--format", "json"], capsys)
    assert [p["id"] for p in json.loads(out)["priors"]] == [1]


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
        "--quiet",
    ]
    assert run(argv, capsys)[0] == 0  # {Cancer, Viral Infection}: no perfect breach
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
    monkeypatch.setenv(KEY_ENV, "s3cret")
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
    audit = json.loads(out)["audit"]
    # Alice (AIDS) is not in hospital 2: only Bob and Carol are intersected
    assert audit["overlap_size"] == 2 and audit["candidate_only"] == 1
    assert [w["row"] for w in audit["worst"]] == [1, 2]
    assert code == 1  # Bob: {Cancer}
    code, out, _ = run(argv, capsys)  # worst case: Alice is assumed present
    assert json.loads(out)["audit"]["overlap_size"] == 3
    monkeypatch.setenv(KEY_ENV, "another key")
    code, _, err = run([*argv, "--overlap", "known"], capsys)
    assert code == 2 and "hashed with another key" in err


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
            "--quiet",
            "--format",
            "json",
        ],
        capsys,
    )
    assert err == ""
    audit = json.loads(out)["audit"]
    # row 0 (28, 13012): bucket 1 {flu, aids} ∩ <30 {aids, hiv} = {aids}
    assert code == 1 and audit["worst"][0]["row"] == 0
    assert audit["worst"][0]["intersection"] == ["aids"]
    assert audit["population"] == 4


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
    audit = json.loads(out)["audit"]
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
    assert json.loads(out)["audit"]["releases"][0]["unlocatable"] > 0


def _edu() -> Any:
    from airflow_privacy.core.datasets import adult_hierarchies

    return adult_hierarchies()["education"]


def test_bad_input_exits_2_with_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = ["audit", str(files["h1"]), *columns(), "--population", str(files["people"]), "--quiet"]
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
    cases = [
        ([*base, "--prior", str(other)], "sensitive attribute 'diagnosis'"),
        (
            [*base, "--prior", str(fewer)],
            "QI 'nationality' of the candidate is missing from release 'fewer.csv'",
        ),
        ([*base, "--ledger", "foo://nowhere"], "unknown ledger URL scheme 'foo'"),
        ([*base, "--ledger", str(tmp_path / "none.db")], "ledger file"),
        ([*base[:-3], "--quiet", "--prior", str(files["h2"])], "pass --population FILE"),
        ([*base, "--prior", str(files["h2"]), "--overlap", "known"], "--overlap known needs"),
        ([*base], "nothing to audit against"),
        ([*base, "--prior", str(tmp_path / "missing.csv")], "does not exist"),
        ([*base, "--prior", str(files["h2"]), "--confidence", "2"], "--confidence must be in"),
        ([*base, "--prior", str(files["h2"]), "--max-pvp", "150"], "percentage in [0, 100]"),
        ([*base, "--prior", str(files["h2"]), "--hierarchy", "zip"], "--hierarchy expects"),
        (
            [*base, "--prior", str(files["h2"]), "--individuals", str(tmp_path / "x.json")],
            "cannot tell the format",
        ),
        (
            [
                "audit",
                str(files["h1"]),
                "--population",
                str(files["people"]),
                "--prior",
                str(files["h2"]),
                "--quiet",
            ],
            "pass --qi",
        ),
    ]
    for argv, message in cases:
        code, out, err = run(argv, capsys)
        assert code == 2, (argv, err)
        assert message in err, (message, err)
        assert err.count("\n") == 1 and out == ""


def test_ledger_cli(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    db = str(files["db"])
    code, _, err = run(["ledger", "list", "--ledger", db], capsys)
    assert code == 2 and "does not exist" in err
    imp = [
        "ledger",
        "import",
        str(files["h1"]),
        "--dataset",
        "x'; DROP TABLE ledger_groups;--",
        *columns(),
        "--ledger",
        db,
        "--quiet",
    ]
    assert run(imp, capsys)[:2] == (
        0,
        "release #1 (x'; DROP TABLE ledger_groups;-- v1) recorded candidate\n",
    )
    code, out, _ = run(imp, capsys)
    assert "already recorded as candidate" in out
    code, out, _ = run(["ledger", "list", "--ledger", db, "--format", "json"], capsys)
    rel = json.loads(out)["releases"]
    assert len(rel) == 1 and rel[0]["groups"] == 3 and rel[0]["records"] == 12
    code, out, _ = run(
        ["ledger", "show", "x'; DROP TABLE ledger_groups;--@1", "--ledger", db, "--groups"], capsys
    )
    assert code == 0 and "130** | 3* | *  (4)  {Cancer: 4}" in out
    assert (
        run(["ledger", "mark-blocked", "1", "--reason", "audit failed", "--ledger", db], capsys)[1]
        == "release #1 (x'; DROP TABLE ledger_groups;-- v1) is now blocked\n"
    )
    code, _, err = run(["ledger", "mark-published", "1", "--ledger", db], capsys)
    assert code == 2 and "was blocked (audit failed)" in err
    code, _, err = run(["ledger", "show", "7", "--ledger", db], capsys)
    assert code == 2 and "release #7 does not exist" in err
    code, out, _ = run(["ledger", "list", "--ledger", db, "--status", "published"], capsys)
    assert out.startswith("no releases in sqlite:///")
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
