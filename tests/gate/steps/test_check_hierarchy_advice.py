"""``check --hierarchy COL=FILE`` (``hierarchies`` in Airflow): a failed criterion's way
forward includes the smallest coarser recoding that passes, re-checked; the option only
shapes advice, and a hierarchy of a column that is not a group column is bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.cli import main


@pytest.fixture
def release(tmp_path: Path) -> dict[str, Path]:
    rows = ["age,sex,disease"]
    for i in range(60):  # ages at level 1 (five-year bands), 3 records per band and sex
        band = 20 + (i // 6) * 5
        rows.append(f"{band}-{band + 4},{'MF'[i % 2]},{['flu', 'cold', 'hiv'][i % 3]}")
    data = tmp_path / "release.csv"
    data.write_text("\n".join(rows) + "\n")
    age = tmp_path / "age.csv"
    age.write_text("".join(
        f"{a};{a // 5 * 5}-{a // 5 * 5 + 4};{a // 10 * 10}-{a // 10 * 10 + 9};*\n"
        for a in range(20, 70)
    ))  # fmt: skip
    return {"data": data, "age": age}


def check(release: dict[str, Path], *extra: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    code = main(["check", str(release["data"]), "--group", "age", "--group", "sex",
                 "--sensitive", "disease", "--criterion", "k-anonymity:k=6", "--format",
                 "json", "--quiet", *extra], out)  # fmt: skip
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else {}


def test_a_failed_check_names_the_coarser_recoding_that_passes(
    release: dict[str, Path],
) -> None:
    code, env = check(release)
    assert code == 1 and not any(a["kind"] == "coarser-recoding" for a in env["advice"])
    code, env = check(release, "--hierarchy", f"age={release['age']}")
    assert code == 1  # the option shapes the advice only: the verdict is the same
    (coarser,) = [a for a in env["advice"] if a["kind"] == "coarser-recoding"]
    # bands of 5 years hold 3 records per sex; of 10 years, 6: one step passes k=6
    assert coarser["groups"] == ["age=2"]
    assert "from level 1 to 2" in coarser["text"] and "merges 20 groups into 10" in coarser["text"]
    assert "20-24 -> 20-29" in coarser["text"]


def test_a_hierarchy_of_another_column_is_bad_input(
    release: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = check(release, "--hierarchy", f"zip={release['age']}")
    assert code == 2 and "--hierarchy 'zip' names no group column" in capsys.readouterr().err


def test_a_blocked_audit_names_a_coarser_recoding_of_the_candidate(tmp_path: Path) -> None:
    """``audit --hierarchy``: the candidate at (age level 1, zip level 1, sex) intersected
    with a prior at (age level 2, zip level 2, any sex) pins people; the advice includes the
    fewest further generalization steps of the candidate after which the re-audit passes."""
    import random

    from tests.core.recoding_cases import HIER, advice_table, records

    rng = random.Random(100)
    rows = records(rng, rng.randrange(120, 240))
    import pyarrow.csv as pacsv

    files = {}
    for name, levels in (("population", {"age": 0, "zip": 0, "sex": 0}),
                         ("prior", {"age": 2, "zip": 2, "sex": 1}),
                         ("candidate", {"age": 1, "zip": 1, "sex": 0})):  # fmt: skip
        files[name] = tmp_path / f"{name}.csv"
        pacsv.write_csv(advice_table(rows, levels), files[name])
    for column, h in HIER.items():
        files[column] = tmp_path / f"{column}.csv"
        files[column].write_text("".join(";".join(h.levels[i][v] for i in range(h.height)) + "\n"
                                         for v in h.values))  # fmt: skip
    out = io.StringIO()
    code = main(["audit", str(files["candidate"]), "--sensitive", "disease", "--qi", "age",
                 "--qi", "zip", "--qi", "sex", "--population", str(files["population"]),
                 "--no-ledger", "--prior", str(files["prior"]), "--max-pvp", "5",
                 *[a for c in HIER for a in ("--hierarchy", f"{c}={files[c]}")],
                 "--format", "json", "--quiet"], out)  # fmt: skip
    env = json.loads(out.getvalue())
    assert code == 1 and env["safe"] is False
    (coarser,) = [a for a in env["advice"] if a["kind"] == "coarser-recoding"]
    assert coarser["groups"] == ["zip=2"]
    assert "passes the composition audit (re-audited" in coarser["text"]
