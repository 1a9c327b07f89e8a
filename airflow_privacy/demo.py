"""``airflow-privacy demo``: sample releases of the bundled Adult data, checked end to end.

Writes two full-domain generalizations of UCI Adult (Occupation sensitive) as Parquet and
runs the same ``check`` / ``disclosure`` commands a user would run on them, printing each
command line before its output:

* ``adult_age20.parquet``: Martin et al.'s Figure 5 release (Age in 20-year intervals, the
  other QIs suppressed), 5 groups.
* ``adult_age10_sex_race.parquet``: Age in 10-year intervals with Sex and Race kept, a finer
  release whose small groups an adversary with a little knowledge can break.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

RELEASES: dict[str, dict[str, int]] = {
    "adult_age20.parquet": {"age": 3},
    "adult_age10_sex_race.parquet": {"age": 2, "sex": 0, "race": 0},
}
GROUPS = ("age", "sex", "race", "marital-status", "education", "native-country", "workclass")


def run_demo(out_dir: Path, out: TextIO, progress: Callable[[str], None]) -> int:
    import pyarrow.parquet as pq

    from airflow_privacy.cli import main
    from airflow_privacy.core.datasets import adult_release

    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for name, levels in RELEASES.items():
        progress(f"building {name} from the bundled Adult data")
        table = adult_release(levels).select([*GROUPS, "occupation"])
        path = out_dir / name
        tmp = path.with_name(path.name + ".tmp")
        pq.write_table(table, tmp)
        tmp.replace(path)
        paths.append(path)

    group_args = [a for g in ("age", "sex", "race") for a in ("--group", g)]
    runs: list[list[str]] = []
    for path in paths:
        base = [str(path), "--sensitive", "occupation", *group_args, "--quiet"]
        runs += [
            ["check", *base, "--criterion", "k-anonymity", "--k", "5"],
            ["check", *base, "--criterion", "entropy-l-diversity", "--l", "3"],
            ["check", *base, "--criterion", "ck-safety", "--c", "0.7", "--k", "3"],
        ]
    runs.append(["disclosure", str(paths[0]), "--sensitive", "occupation", *group_args,
                 "--k-max", "13", "--quiet"])  # fmt: skip

    verdicts = {0: "safe", 1: "UNSAFE: publication would be blocked", 2: "bad input"}
    for argv in runs:
        out.write(f"\n$ airflow-privacy {shlex.join(argv)}\n")
        out.flush()
        code = main(argv, out)
        if argv[0] == "check":
            out.write(f"(exit {code}: {verdicts.get(code, 'error')})\n")
        if code == 2:
            return 2
    out.write(f"\nsample releases written to {out_dir}/\n")
    return 0
