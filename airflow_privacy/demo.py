"""``airflow-privacy demo``: sample releases of the bundled Adult data, checked end to end.

Writes two full-domain generalizations of UCI Adult (Occupation sensitive) as Parquet and
runs the same ``check`` / ``disclosure`` commands a user would run on them, printing each
command line before its output:

* ``adult_age20.parquet``: Martin et al.'s Figure 5 release (Age in 20-year intervals, the
  other QIs suppressed), 5 groups.
* ``adult_age10_sex.parquet``: Age in 10-year intervals with Sex kept, the rest suppressed.
  It is 5-anonymous and entropy 3-diverse, yet an adversary with 3 pieces of background
  knowledge is more than 70% sure of someone's occupation: the classic criteria pass it,
  (c,k)-safety blocks it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

RELEASES: dict[str, dict[str, int]] = {
    "adult_age20.parquet": {"age": 3},
    "adult_age10_sex.parquet": {"age": 2, "sex": 0},
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
    checks = {
        "5-anonymity": ["--criterion", "k-anonymity", "--k", "5"],
        "entropy 3-diversity": ["--criterion", "entropy-l-diversity", "--l", "3"],
        "(0.7, 3)-safety": ["--criterion", "ck-safety", "--c", "0.7", "--k", "3"],
    }
    verdicts = {0: "safe", 1: "UNSAFE: publication would be blocked", 2: "bad input"}
    summary: list[tuple[str, list[int]]] = []
    for path in paths:
        base = [str(path), "--sensitive", "occupation", *group_args, "--quiet"]
        codes = []
        for params in checks.values():
            code = _run(main, ["check", *base, *params], out)
            out.write(f"(exit {code}: {verdicts.get(code, 'error')})\n")
            if code == 2:
                return 2
            codes.append(code)
        summary.append((path.name, codes))
    disclosure = ["disclosure", str(paths[0]), "--sensitive", "occupation", *group_args,
                  "--k-max", "13", "--quiet"]  # fmt: skip
    if _run(main, disclosure, out) == 2:
        return 2

    width = max(len(name) for name, _ in summary)
    out.write("\nsummary (exit 0 = may be published, 1 = blocked)\n")
    out.write(f"  {'release':<{width}}  " + "  ".join(f"{c:>19}" for c in checks) + "\n")
    for name, codes in summary:
        cells = "  ".join(f"{'pass' if c == 0 else 'BLOCK':>19}" for c in codes)
        out.write(f"  {name:<{width}}  {cells}\n")
    out.write(f"sample releases written to {out_dir}/\n")
    return 0


def _run(main: Callable[..., int], argv: list[str], out: TextIO) -> int:
    out.write(f"\n$ airflow-privacy {shlex.join(argv)}\n")
    out.flush()
    return main(argv, out)
