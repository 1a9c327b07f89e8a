"""Time the classic checks of ``airflow_privacy`` against pyCANON on generalized Adult releases.

Both sides get the same input: a generalized Adult release written once as a ``;``-separated
CSV (:func:`write_release_csv`; the ARX hierarchies are read with the csv module). Measured:

* ours, **full**: ``read_release`` (Arrow) + ``Bucketization.from_arrow`` + the five checks;
* ours, **count+check**: ``Bucketization.from_arrow`` on the in-memory Arrow table + checks;
* ours, **check**: the five checks on an in-memory ``Bucketization`` (and each one alone);
* pyCANON, **full**: ``pandas.read_csv`` + its five functions (``k_anonymity``,
  ``l_diversity``, ``entropy_l_diversity``, ``recursive_c_l_diversity``, ``t_closeness``);
* pyCANON, **check**: the five functions on the in-memory DataFrame (each one groups the
  table itself, so this is pyCANON's counting + checking).

pyCANON runs in its own virtualenv (``benchmarks/pycanon_env.sh``) through
``benchmarks/pycanon_runner.py``, which times inside the process (interpreter start-up and
imports are excluded). Medians over the repetitions are reported, with the ratio
pyCANON / ours. Results go to ``benchmarks/results/classic_vs_pycanon.json``.

Usage: ``.venv/bin/python -m benchmarks.bench_classic_vs_pycanon [--repeat-ours 30]
[--repeat-pycanon 5] [--release NAME ...]``.

The release definitions and :func:`write_release_csv` are plain Python (csv module only) and
are shared with ``tests/test_pycanon_crosscheck.py``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.machine import hardware

ROOT = Path(__file__).resolve().parent.parent
RUNNER = ROOT / "benchmarks" / "pycanon_runner.py"
ENV_SCRIPT = ROOT / "benchmarks" / "pycanon_env.sh"
PYCANON_PYTHON = ROOT / ".venv-pycanon" / "bin" / "python"
RESULTS = ROOT / "benchmarks" / "results" / "classic_vs_pycanon.json"


def adult_dir() -> Path:
    """The Adult data folder: ``$AIRFLOW_PRIVACY_ADULT_DIR`` or the bundled sample data."""
    env = os.environ.get("AIRFLOW_PRIVACY_ADULT_DIR")
    if env:
        return Path(env)
    return ROOT / "airflow_privacy" / "data" / "adult"


def adult_csv(data: Path) -> Path:
    """``adult.csv`` in ``data``, or the bundled ``adult.csv.gz``."""
    plain = data / "adult.csv"
    return plain if plain.exists() else data / "adult.csv.gz"


@dataclass(frozen=True)
class ReleaseDef:
    """A generalization of Adult: QI column -> ARX hierarchy level (0 = kept as is)."""

    name: str
    levels: tuple[tuple[str, int], ...]
    sensitive: str
    description: str

    @property
    def qis(self) -> list[str]:
        return [c for c, _ in self.levels]

    @property
    def columns(self) -> list[str]:
        return [*self.qis, self.sensitive]


RELEASES: tuple[ReleaseDef, ...] = (
    ReleaseDef(
        "occupation",
        (("age", 3), ("sex", 0), ("race", 0)),
        "occupation",
        "age in 20-year bands, sex, race; occupation sensitive (categorical, 14 values)",
    ),
    ReleaseDef(
        "age-numeric",
        (("sex", 0), ("race", 0), ("marital-status", 1)),
        "age",
        "sex, race, marital status (2 levels); age sensitive (numeric, 72 values)",
    ),
    ReleaseDef(
        "salary",
        (("age", 2), ("sex", 0), ("workclass", 1)),
        "salary-class",
        "age in 10-year bands, sex, workclass (3 levels); salary-class sensitive (2 values)",
    ),
    ReleaseDef(
        "occupation-fine",
        (("age", 1), ("sex", 0), ("race", 0), ("marital-status", 0), ("education", 1)),
        "occupation",
        "age in 5-year bands, sex, race, marital status, education (5 levels); occupation "
        "sensitive: many small groups",
    ),
)


def release_by_name(name: str) -> ReleaseDef:
    for r in RELEASES:
        if r.name == name:
            return r
    raise KeyError(f"unknown release {name!r}; choose from {[r.name for r in RELEASES]}")


def read_hierarchy(path: Path, level: int) -> dict[str, str]:
    """ARX hierarchy file (``;``-separated, no header, col 0 = original, col i = level i)."""
    mapping: dict[str, str] = {}
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh, delimiter=";"):
            if not row:
                continue
            if level >= len(row):
                raise ValueError(f"{path.name} has no level {level} for {row[0]!r}")
            mapping[row[0]] = row[level]
    return mapping


def write_release_csv(release: ReleaseDef, out: Path, data: Path | None = None) -> Path:
    """Generalize Adult per ``release`` and write ``release.columns`` as a ``;`` CSV."""
    data = data or adult_dir()
    maps: dict[str, dict[str, str]] = {}
    for col, level in release.levels:
        if level > 0:
            maps[col] = read_hierarchy(data / f"adult_hierarchy_{col}.csv", level)
    cols = release.columns
    source = adult_csv(data)
    opener = gzip.open if source.suffix == ".gz" else open
    with opener(source, "rt", newline="", encoding="utf-8") as fin:
        reader = csv.reader(fin, delimiter=";")
        header = next(reader)
        pos = [header.index(c) for c in cols]
        colmaps = [maps.get(c) for c in cols]
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", newline="", encoding="utf-8") as fout:
            writer = csv.writer(fout, delimiter=";", lineterminator="\n")
            writer.writerow(cols)
            for row in reader:
                rec = []
                for p, m in zip(pos, colmaps, strict=True):
                    v = row[p]
                    rec.append(m[v] if m is not None else v)
                writer.writerow(rec)
    return out


def pycanon_python(create: bool = False) -> Path | None:
    """The pyCANON venv's python; with ``create``, run ``pycanon_env.sh`` if it is missing."""
    if PYCANON_PYTHON.exists():
        return PYCANON_PYTHON
    if not create:
        return None
    out = subprocess.run(
        ["bash", str(ENV_SCRIPT)], check=True, capture_output=True, text=True
    ).stdout
    return Path(out.strip().splitlines()[-1])


def run_pycanon(
    python: Path,
    csv_path: Path,
    release: ReleaseDef,
    repeat: int = 1,
    criteria: Sequence[str] = ("k", "l", "entropy", "recursive", "t"),
    timeout: float = 1800,
) -> dict[str, Any]:
    """Run ``pycanon_runner.py`` with the pyCANON venv and return its JSON."""
    cmd = [
        str(python),
        str(RUNNER),
        "--csv",
        str(csv_path),
        "--sep",
        ";",
        "--qi",
        ",".join(release.qis),
        "--sa",
        release.sensitive,
        "--repeat",
        str(repeat),
        "--criteria",
        ",".join(criteria),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"pycanon_runner failed ({proc.returncode}):\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


# ------------------------------------------------------------------- timing


def _time(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _stats(seconds: Sequence[float]) -> dict[str, Any]:
    return {
        "median_s": statistics.median(seconds),
        "min_s": min(seconds),
        "repeat": len(seconds),
        "seconds": list(seconds),
    }


K, L, ENTROPY_L, C, T = 5, 2, 2.0, 3.0, 0.2
CHECK_PARAMS: dict[str, float] = {"k": K, "l": L, "entropy_l": ENTROPY_L, "c": C, "t": T}


def ours_checks() -> dict[str, Callable[[Any], object]]:
    from airflow_privacy.core.criteria import classic

    return {
        "k_anonymity": lambda b: classic.k_anonymity(b, K),
        "l_diversity": lambda b: classic.distinct_l_diversity(b, L),
        "entropy_l_diversity": lambda b: classic.entropy_l_diversity(b, ENTROPY_L),
        "recursive_c_l_diversity": lambda b: classic.recursive_cl_diversity(b, C, L),
        "t_closeness": lambda b: classic.t_closeness(b, T),
    }


def bench_ours(csv_path: Path, release: ReleaseDef, repeat: int) -> dict[str, Any]:
    from airflow_privacy.core.io import read_release
    from airflow_privacy.core.model import Bucketization, ReleaseSpec

    spec = ReleaseSpec(sensitive=release.sensitive, group_columns=tuple(release.qis))
    checks = ours_checks()

    def all_checks(b: Bucketization) -> None:
        for fn in checks.values():
            fn(b)

    def full() -> None:
        table = read_release(csv_path, columns=release.columns)
        all_checks(Bucketization.from_arrow(table, spec))

    table = read_release(csv_path, columns=release.columns)
    b = Bucketization.from_arrow(table, spec)
    full()  # warm-up (imports, caches)
    res: dict[str, Any] = {
        "rows": b.n_records,
        "groups": b.n_groups,
        "values": len(b.values),
        "full": _stats(_time(full, repeat)),
        "read": _stats(_time(lambda: read_release(csv_path, columns=release.columns), repeat)),
        "count_check": _stats(
            _time(lambda: all_checks(Bucketization.from_arrow(table, spec)), repeat)
        ),
        "check": _stats(_time(lambda: all_checks(b), repeat)),
        "per_criterion": {name: _stats(_time(_bind(fn, b), repeat)) for name, fn in checks.items()},
    }
    return res


def _bind(fn: Callable[[Any], object], arg: Any) -> Callable[[], object]:
    return lambda: fn(arg)


def bench_pycanon(python: Path, csv_path: Path, release: ReleaseDef, repeat: int) -> dict[str, Any]:
    raw = run_pycanon(python, csv_path, release, repeat=repeat)
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


def _ms(s: float) -> str:
    return f"{s * 1e3:10.3f}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:10.1f}x" if b > 0 else "       n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="classic checks: airflow_privacy vs pyCANON")
    ap.add_argument("--repeat-ours", type=int, default=30)
    ap.add_argument("--repeat-pycanon", type=int, default=5)
    ap.add_argument(
        "--release",
        action="append",
        choices=[r.name for r in RELEASES],
        help="release(s) to run (default: all)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument(
        "--no-create-venv", action="store_true", help="fail instead of creating .venv-pycanon"
    )
    args = ap.parse_args(argv)

    python = pycanon_python(create=not args.no_create_venv)
    if python is None:
        print("pyCANON venv missing: run bash benchmarks/pycanon_env.sh", file=sys.stderr)
        return 2
    releases = [release_by_name(n) for n in args.release] if args.release else list(RELEASES)
    hw = hardware()
    print(
        f"hardware: {hw['nproc']} CPUs, {hw['cpu']}, {hw['ram_gib']} GiB RAM, Python {hw['python']}"
    )
    out: dict[str, Any] = {
        "hardware": hw,
        "parameters": CHECK_PARAMS,
        "repeat_ours": args.repeat_ours,
        "repeat_pycanon": args.repeat_pycanon,
        "releases": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for rel in releases:
            path = write_release_csv(rel, Path(tmp) / f"{rel.name}.csv")
            ours = bench_ours(path, rel, args.repeat_ours)
            theirs = bench_pycanon(python, path, rel, args.repeat_pycanon)
            if (ours["rows"], ours["groups"]) != (theirs["rows"], theirs["groups"]):
                raise RuntimeError(f"{rel.name}: rows/groups differ: {ours} vs {theirs}")
            out["versions"] = theirs["versions"]
            out["releases"][rel.name] = {
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
            _print_release(rel, ours, theirs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


def _print_release(rel: ReleaseDef, ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    print(
        f"\n== {rel.name}: {ours['rows']} rows, {ours['groups']} groups, "
        f"{ours['values']} sensitive values ({rel.description})"
    )
    print(f"{'median ms':<44}{'ours':>10}{'pyCANON':>10}{'ratio':>11}")
    rows = [
        ("full (read + count + 5 checks)", ours["full"], theirs["full"]),
        ("read only", ours["read"], theirs["read"]),
        ("count + 5 checks (table in memory)", ours["count_check"], theirs["check"]),
        ("5 checks (ours: Bucketization in memory)", ours["check"], theirs["check"]),
    ]
    for name, mine, py in rows:
        print(
            f"{name:<44}{_ms(mine['median_s'])}{_ms(py['median_s'])}"
            f"{_ratio(py['median_s'], mine['median_s'])}"
        )
    print(
        "per criterion (ours: check on the Bucketization; pyCANON: its function on the DataFrame)"
    )
    for name in ours["per_criterion"]:
        mine = ours["per_criterion"][name]["median_s"]
        py = theirs["per_criterion"][name]["median_s"]
        print(f"  {name:<42}{_ms(mine)}{_ms(py)}{_ratio(py, mine)}")


if __name__ == "__main__":
    raise SystemExit(main())
