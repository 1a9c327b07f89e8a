"""The population table of ``check --population`` / ``anonymize --population``
(:mod:`airflow_privacy.gate.population`): counted on the group columns, by the labels that
cover its values; bad input named in the front end's words, exit 2, nothing written."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from airflow_privacy.cli import main
from airflow_privacy.core.model import Bucketization
from airflow_privacy.errors import InputError
from airflow_privacy.gate.population import with_population

RELEASE = ["age,zip,s,pid", "20-29,130**,a,p1", "20-29,130**,b,p2", "30-39,130**,a,p3",
           "30-39,148**,c,p4"]  # fmt: skip
RAW = ["age,zip,other"] + [f"{a},{z},x" for a, z in [
    (21, "13053"), (25, "13068"), (27, "13053"), (33, "13053"), (35, "13068"),
    (38, "14850"), (39, "14853"), (45, "13053"),
]]  # fmt: skip


def _write(folder: Path, name: str, lines: list[str]) -> str:
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(folder / name)


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main([*argv, "--quiet"], out)
    return code, out.getvalue()


def test_raw_population_is_placed_by_the_labels(tmp_path: Path) -> None:
    rel = _write(tmp_path, "r.csv", RELEASE)
    pop = _write(tmp_path, "p.csv", RAW)
    argv = ["check", rel, "--sensitive", "s", "--group", "age", "--group", "zip",
            "--population", pop, "--format", "json"]  # fmt: skip
    code, out = _run([*argv, "--criterion", "k-map:k=2"])
    env = json.loads(out)
    # 20-29,130** covers 21, 25, 27 (3 people); 30-39,130** 33, 35 (2); 30-39,148** 38, 39
    # (2); 45 is in no group: a population class without a released record
    assert code == 0 and env["results"][0]["value"] == 2
    assert env["details"]["population"] == {
        "ref": pop, "records": 8, "classes": 4, "classes_without_release_records": 1,
    }  # fmt: skip
    # presences 2/3, 1/2, 1/2; the class of 45 has none of its 1 person released
    code, out = _run([*argv, "--criterion", "delta-presence:delta_max=0.7,delta_min=0.1"])
    env = json.loads(out)
    assert code == 1 and "1 population class of 1 people" in env["results"][0]["reason"]
    code, out = _run([*argv, "--criterion", "delta-presence:delta_max=0.7"])
    assert code == 0 and json.loads(out)["results"][0]["details"]["max_presence_exact"] == "2/3"
    code, out = _run([*argv, "--criterion", "delta-presence:delta_max=0.6"])
    assert code == 1 and "age=20-29, zip=130**" in json.loads(out)["results"][0]["reason"]


def test_overlapping_labels_and_missing_groups() -> None:
    b = Bucketization.from_counts(
        [("20-39", "a", 1), ("30-49", "a", 1)], ["age"], "s"
    )  # fmt: skip
    with pytest.raises(InputError, match="covered by the labels of 2 groups"):
        with_population(b, {("35",): 3})
    with pytest.raises(InputError, match="no record of the population falls in group 'age=30-49'"):
        with_population(b, {("25",): 3})
    b = Bucketization.from_counts([("20-29", "a", 3)], ["age"], "s")
    with pytest.raises(InputError, match="group 'age=20-29' has 3 records in the release but 2"):
        with_population(b, {("21",): 1, ("22",): 1, (None,): 4})


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "criterion k-map (k=2) is decided against a population table: give --population"),
        (["--population", "{rel}"], "--population is the release itself"),
        (["--population", "{missing}"], "missing.csv"),
        (["--population", "{nozip}"], "--population {nozip} has no column 'zip'"),
        (["--population", "{pop}", "--entity", "pid"], "--population does not apply with --entity"),
    ],
)
def test_check_bad_input(tmp_path: Path, extra: list[str], message: str) -> None:
    names = {
        "rel": _write(tmp_path, "r.csv", RELEASE),
        "pop": _write(tmp_path, "p.csv", RAW),
        "nozip": _write(tmp_path, "nozip.csv", ["age", "21"]),
        "missing": str(tmp_path / "missing.csv"),
    }
    argv = ["check", names["rel"], "--sensitive", "s", "--group", "age", "--group", "zip",
            "--criterion", "k-map:k=2", *(x.format(**names) for x in extra)]  # fmt: skip
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code, _ = _run(argv)
    assert code == 2
    assert message.format(**names) in err.getvalue()


def test_anonymize_bad_input_writes_nothing(tmp_path: Path) -> None:
    src = _write(tmp_path, "in.csv", ["age,s", "21,a", "25,b", "33,a"])
    pop = _write(tmp_path, "p.csv", ["age", "21", "25", "33", "35"])
    out = tmp_path / "rel.csv"
    base = ["anonymize", src, "--qi", "age", "--sensitive", "s", "--out", str(out)]

    for extra, message in (
        (["--method", "bucketize", "--criterion", "k-map:k=2", "--population", pop],
         "--population does not apply to method bucketize"),
        (["--method", "lattice", "--criterion", "delta-presence:delta_max=0.5"],
         "give --population"),
        (["--method", "lattice", "--criterion", "k-map:k=2", "--population", src],
         "--population is the release itself"),
        (["--method", "lattice", "--criterion", "k-map:k=2", "--population", pop, "--out", pop],
         "would overwrite --population"),
    ):  # fmt: skip
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code, _ = _run([*base, *extra])
        assert code == 2 and message in err.getvalue(), err.getvalue()
        assert not out.exists()
    code, _ = _run([*base, "--method", "lattice", "--criterion", "k-map:k=2", "--population", pop,
                    "--interval", "age=10"])  # fmt: skip
    assert code == 0 and out.exists()
