"""Time (alpha,k)-anonymity, basic and enhanced beta-likeness and delta-disclosure privacy of
``airflow_privacy`` against pyCANON's, on Adult, on Adult replicated 10 times, and on Fair's
affairs survey.

Both sides get the same ``;``-separated release CSV. Measured, as in
``benchmarks/bench_classic_vs_pycanon.py``:

* ours, **full**: ``read_release`` + ``Bucketization.from_arrow`` + the four checks;
* ours, **count+check**: ``Bucketization.from_arrow`` on the in-memory Arrow table + checks;
* ours, **check**: the four checks on an in-memory ``Bucketization`` (and each one alone);
* pyCANON, **full**: ``pandas.read_csv`` + ``alpha_k_anonymity``, ``basic_beta_likeness``,
  ``enhanced_beta_likeness``, ``delta_disclosure``;
* pyCANON, **check**: the four functions on the in-memory DataFrame (each groups the table).

"10x Adult" repeats every data row of the release 10 times (301,620 records): the same
groups, ten times larger, with the same distributions, so every distribution-based value is
unchanged (and k is ten times larger); the run checks that on both sides.

The Fair release definitions (:data:`FAIR_RELEASES`, :func:`write_fair_csv`: plain Python,
csv module only) are shared with ``tests/test_pycanon_crosscheck.py``; the data and its
source and license are in ``tests/data/fair/``.

Usage: ``.venv/bin/python -m benchmarks.bench_distribution_vs_pycanon [--repeat-ours 20]
[--repeat-pycanon 3] [--release NAME ...]``. Results go to
``benchmarks/results/distribution_vs_pycanon.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.bench_classic_vs_pycanon import (
    ROOT,
    ReleaseDef,
    _bind,
    _ms,
    _ratio,
    _stats,
    _time,
    pycanon_python,
    release_by_name,
    run_pycanon,
    write_release_csv,
)
from benchmarks.machine import hardware

RESULTS = ROOT / "benchmarks" / "results" / "distribution_vs_pycanon.json"
FAIR_CSV = ROOT / "tests" / "data" / "fair" / "fair.csv"
PYCANON_CRITERIA = ("alpha_k", "basic_beta", "enhanced_beta", "delta")

ALPHA, K, BETA, DELTA = 0.5, 5, 1.0, 1.0
CHECK_PARAMS: dict[str, float] = {"alpha": ALPHA, "k": K, "beta": BETA, "delta": DELTA}


# ------------------------------------------------------------------ Fair (1978)


def affairs_category(raw: str) -> str:
    """``none`` (0, the benign answer), ``low`` (0 < affairs <= 1), ``high`` (> 1)."""
    x = float(raw)
    if x == 0:
        return "none"
    return "low" if x <= 1 else "high"


_YEARS_BANDS = {0.5: "<=2.5", 2.5: "<=2.5", 6.0: "6-9", 9.0: "6-9", 13.0: "13-16.5"}
_YEARS_BANDS[16.5] = "13-16.5"
_YEARS_BANDS[23.0] = "23"


def years_band(raw: str) -> str:
    return _YEARS_BANDS[float(raw)]


def _kept(raw: str) -> str:
    x = float(raw)
    return str(int(x)) if x.is_integer() else str(x)


@dataclass(frozen=True)
class FairRelease:
    """A generalization of Fair's survey: QI column -> recoding; ``affairs`` sensitive."""

    name: str
    recode: tuple[tuple[str, str], ...]  # (column, "kept" | "band")
    description: str
    sensitive: str = "affairs"

    @property
    def qis(self) -> list[str]:
        return [c for c, _ in self.recode]

    @property
    def columns(self) -> list[str]:
        return [*self.qis, self.sensitive]


FAIR_RELEASES: tuple[FairRelease, ...] = (
    FairRelease("fair-age", (("age", "kept"),), "age bracket only (6 large groups)"),
    FairRelease("fair-religious", (("religious", "kept"),), "religiousness only (4 groups)"),
    FairRelease(
        "fair-age-years",
        (("age", "kept"), ("yrs_married", "band")),
        "age bracket, years married in 4 bands; affairs none/low/high",
    ),
    FairRelease(
        "fair-fine",
        (("age", "kept"), ("yrs_married", "kept"), ("children", "kept"), ("religious", "kept")),
        "age bracket, years married, children, religiousness: many small groups",
    ),
)


def fair_release_by_name(name: str) -> FairRelease:
    for r in FAIR_RELEASES:
        if r.name == name:
            return r
    raise KeyError(f"unknown release {name!r}; choose from {[r.name for r in FAIR_RELEASES]}")


def write_fair_csv(release: FairRelease, out: Path, source: Path = FAIR_CSV) -> Path:
    """Generalize Fair's survey per ``release`` and write ``release.columns`` as a ``;`` CSV."""
    fns: dict[str, Callable[[str], str]] = {"kept": _kept, "band": years_band}
    with source.open(newline="", encoding="utf-8") as fin:
        reader = csv.reader(fin)
        header = next(reader)
        pos = [header.index(c) for c in release.columns]
        recoders = [fns[how] for _, how in release.recode] + [affairs_category]
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="", encoding="utf-8") as fout:
            writer = csv.writer(fout, delimiter=";", lineterminator="\n")
            writer.writerow(release.columns)
            for row in reader:
                writer.writerow([f(row[p]) for p, f in zip(pos, recoders, strict=True)])
    return out


def replicate_csv(path: Path, out: Path, times: int) -> Path:
    """``path`` with every data row repeated ``times`` times (header once)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    with out.open("w", encoding="utf-8") as fh:
        fh.write(lines[0])
        for _ in range(times):
            fh.writelines(lines[1:])
    return out


# ------------------------------------------------------------------- timing


def ours_checks() -> dict[str, Callable[[Any], Any]]:
    from airflow_privacy.core.criteria.alpha_k_anonymity import alpha_k_anonymity
    from airflow_privacy.core.criteria.beta_likeness import (
        basic_beta_likeness,
        enhanced_beta_likeness,
    )
    from airflow_privacy.core.criteria.delta_disclosure import delta_disclosure

    return {
        "alpha_k_anonymity": lambda b: alpha_k_anonymity(b, ALPHA, K),
        "basic_beta_likeness": lambda b: basic_beta_likeness(b, BETA),
        "enhanced_beta_likeness": lambda b: enhanced_beta_likeness(b, BETA),
        "delta_disclosure": lambda b: delta_disclosure(b, DELTA),
    }


def ours_values(b: Any) -> dict[str, Any]:
    """Our numbers in pyCANON's terms (docs/distribution-criteria.md)."""
    checks = ours_checks()
    ak = checks["alpha_k_anonymity"](b)
    basic = checks["basic_beta_likeness"](b)
    enhanced = checks["enhanced_beta_likeness"](b)
    delta = checks["delta_disclosure"](b)
    return {
        "alpha_k_anonymity": [ak.value, ak.details["k_achieved"]],
        "basic_beta_likeness": basic.value,
        "enhanced_beta_likeness": enhanced.value,
        "enhanced_min_table_share": enhanced.details["min_table_share"],
        "delta_disclosure": delta.value,
        "delta_max_over_present_values": delta.details["max_over_present_values"],
    }


def bench_ours(csv_path: Path, columns: list[str], qis: list[str], sensitive: str,
               repeat: int) -> dict[str, Any]:  # fmt: skip
    from airflow_privacy.core.io import read_release
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

    spec = ReleaseSpec(sensitive=sensitive, group_columns=tuple(qis))
    checks = ours_checks()

    def all_checks(b: Bucketization) -> None:
        for fn in checks.values():
            fn(b)

    def full() -> None:
        all_checks(Bucketization.from_arrow(read_release(csv_path, columns=columns), spec))

    table = read_release(csv_path, columns=columns)
    b = Bucketization.from_arrow(table, spec)
    full()  # warm-up
    return {
        "rows": b.n_records,
        "groups": b.n_groups,
        "values": len(b.values),
        "numbers": ours_values(b),
        "full": _stats(_time(full, repeat)),
        "count_check": _stats(
            _time(lambda: all_checks(Bucketization.from_arrow(table, spec)), repeat)
        ),
        "check": _stats(_time(lambda: all_checks(b), repeat)),
        "per_criterion": {name: _stats(_time(_bind(fn, b), repeat)) for name, fn in checks.items()},
    }


def bench_pycanon(python: Path, csv_path: Path, release: Any, repeat: int) -> dict[str, Any]:
    raw = run_pycanon(python, csv_path, release, repeat=repeat, criteria=PYCANON_CRITERIA,
                      timeout=7200)  # fmt: skip
    reps = raw["repeat"]
    per = {name: _stats(r["seconds"]) for name, r in raw["results"].items()}
    check = [sum(r["seconds"][i] for r in raw["results"].values()) for i in range(reps)]
    full = [raw["read_seconds"][i] + check[i] for i in range(reps)]
    return {
        "versions": {k: raw[k] for k in ("pycanon", "pandas", "numpy", "python")},
        "rows": raw["rows"],
        "groups": raw["groups"],
        "values": {name: r["value"] for name, r in raw["results"].items()},
        "read": _stats(raw["read_seconds"]),
        "check": _stats(check),
        "full": _stats(full),
        "per_criterion": per,
    }


ADULT = ("occupation", "occupation-fine")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="distribution criteria: airflow_privacy vs pyCANON")
    ap.add_argument("--repeat-ours", type=int, default=20)
    ap.add_argument("--repeat-pycanon", type=int, default=3)
    ap.add_argument("--repeat-pycanon-10x", type=int, default=1)
    ap.add_argument("--release", action="append", help="Adult release(s) (default: "
                    f"{', '.join(ADULT)}); Fair releases always run")  # fmt: skip
    ap.add_argument("--no-10x", action="store_true", help="skip 10x Adult")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)

    python = pycanon_python(create=False)
    if python is None:
        print("pyCANON venv missing: run bash benchmarks/pycanon_env.sh", file=sys.stderr)
        return 2
    hw = hardware()
    print(
        f"hardware: {hw['nproc']} CPUs, {hw['cpu']}, {hw['ram_gib']} GiB RAM, Python {hw['python']}"
    )
    out: dict[str, Any] = {
        "hardware": hw,
        "parameters": CHECK_PARAMS,
        "repeat_ours": args.repeat_ours,
        "repeat_pycanon": args.repeat_pycanon,
        "repeat_pycanon_10x": args.repeat_pycanon_10x,
        "releases": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        jobs: list[tuple[str, Any, Path, int]] = []
        for name in args.release or ADULT:
            rel = release_by_name(name)
            path = write_release_csv(rel, Path(tmp) / f"{rel.name}.csv")
            jobs.append((f"adult {rel.name}", rel, path, args.repeat_pycanon))
            if not args.no_10x:
                big = replicate_csv(path, Path(tmp) / f"{rel.name}-10x.csv", 10)
                jobs.append((f"10x adult {rel.name}", rel, big, args.repeat_pycanon_10x))
        for frel in FAIR_RELEASES:
            path = write_fair_csv(frel, Path(tmp) / f"{frel.name}.csv")
            jobs.append((frel.name, frel, path, args.repeat_pycanon))
        for label, rel, path, rep_py in jobs:
            ours = bench_ours(path, rel.columns, rel.qis, rel.sensitive, args.repeat_ours)
            theirs = bench_pycanon(python, path, rel, rep_py)
            if (ours["rows"], ours["groups"]) != (theirs["rows"], theirs["groups"]):
                raise RuntimeError(f"{label}: rows/groups differ")
            out["versions"] = theirs["versions"]
            out["releases"][label] = {
                "description": rel.description,
                "qis": rel.qis,
                "sensitive": rel.sensitive,
                "ours": ours,
                "pycanon": theirs,
                "ratios": {
                    "full": theirs["full"]["median_s"] / ours["full"]["median_s"],
                    "pycanon_check_vs_ours_count_check": theirs["check"]["median_s"]
                    / ours["count_check"]["median_s"],
                    "pycanon_check_vs_ours_check": theirs["check"]["median_s"]
                    / ours["check"]["median_s"],
                    "per_criterion": {
                        name: theirs["per_criterion"][name]["median_s"]
                        / ours["per_criterion"][name]["median_s"]
                        for name in ours["per_criterion"]
                    },
                },
            }
            _print(label, rel, ours, theirs)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(out, indent=2, allow_nan=True) + "\n")
    print(f"\nwrote {args.out}")
    return 0


def _print(label: str, rel: ReleaseDef | FairRelease, ours: dict[str, Any],
           theirs: dict[str, Any]) -> None:  # fmt: skip
    print(
        f"\n== {label}: {ours['rows']} rows, {ours['groups']} groups, {ours['values']} "
        f"sensitive values ({rel.description})"
    )
    print(f"{'median ms':<44}{'ours':>10}{'pyCANON':>12}{'ratio':>11}")
    for name, mine, py in (
        ("full (read + count + 4 checks)", ours["full"], theirs["full"]),
        ("count + 4 checks (table in memory)", ours["count_check"], theirs["check"]),
        ("4 checks (ours: Bucketization in memory)", ours["check"], theirs["check"]),
    ):
        print(
            f"{name:<44}{_ms(mine['median_s'])}{_ms(py['median_s']):>12}"
            f"{_ratio(py['median_s'], mine['median_s'])}"
        )
    for name in ours["per_criterion"]:
        mine = ours["per_criterion"][name]["median_s"]
        py = theirs["per_criterion"][name]["median_s"]
        print(f"  {name:<42}{_ms(mine)}{_ms(py):>12}{_ratio(py, mine)}")
    print(f"  numbers: ours {ours['numbers']}")
    print(f"           pyCANON {theirs['values']}")


if __name__ == "__main__":
    raise SystemExit(main())
