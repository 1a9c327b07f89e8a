"""Whole processes, side by side: ``airflow-privacy`` as a user runs it vs pyCANON's own
process and vs the paper's DP.

Every time here is the wall-clock time of a whole subprocess (``time.perf_counter`` around
``subprocess.run``: interpreter start-up, imports, reading, counting, the check, the output),
the median of ``--repeat`` runs; the two sides of a comparison run alternately, so both see
the same machine.

* **start-up**: ``python -c pass``; importing :mod:`airflow_privacy.cli` and building its
  argument parser (timed inside a fresh process); ``airflow-privacy --help`` and
  ``airflow-privacy check --help`` as processes; the modules a ``check`` process imports
  (``python -X importtime``): pandas and scipy must not be among them.
* **classic**: every classic check on the four Adult releases of
  ``bench_classic_vs_pycanon`` (k = 5, l = 2, entropy l = 2, recursive c = 3, t = 0.2), one
  ``airflow-privacy check RELEASE.csv ... --criterion NAME`` process per check vs one
  ``pycanon_runner.py --bare --criteria NAME`` process (pandas.read_csv + the pyCANON
  function) in ``.venv-pycanon``; and all five checks in one process on both sides.
* **anonymize**: ``airflow-privacy anonymize`` of Adult (lattice, 8 QIs with their ARX
  hierarchies, 5-anonymity) as a process vs the same command run again inside this process
  (imports warm: the search, the release, its re-check and the manifest alone), and
  whether the process imported ``scipy.stats`` (it must not).
* **ck**: ``airflow-privacy check RELEASE.parquet --criterion ck-safety --c 0.9 --k 6`` on
  the 100,000-group release of ``bench_worst_case`` (5,998,431 rows, Parquet) vs the paper's
  DP computation alone for k = 6 (in this process), with the process broken down by
  ``benchmarks/cli_phases.py`` (start-up, imports, read, count, check, the rest).

The project's modules are byte-compiled first (``compileall``), as an installed package is:
the environment may set ``PYTHONDONTWRITEBYTECODE``, and without bytecode caches every
process would compile the package's sources again (measured, as ``compile_seconds``).

Usage: ``.venv/bin/python -m benchmarks.bench_cli_process [--repeat 7] [--repeat-ck 5]
[--release NAME ...] [--groups 100000] [--skip-classic] [--skip-anonymize] [--skip-ck]``. Writes
``benchmarks/results/cli_process.json``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.bench_classic_vs_pycanon import (
    CHECK_PARAMS,
    RELEASES,
    RUNNER,
    ReleaseDef,
    pycanon_python,
    release_by_name,
    write_release_csv,
)
from benchmarks.machine import hardware

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PHASES = ROOT / "benchmarks" / "cli_phases.py"
PYTHON = Path(sys.executable)
EXE = PYTHON.with_name("airflow-privacy")
HEAVY = (
    "numpy", "pyarrow", "pandas", "scipy", "sqlalchemy", "yaml", "psycopg", "airflow",
    "great_expectations", "matplotlib", "fsspec",
)  # fmt: skip
FORBIDDEN = ("pandas", "scipy")

P = CHECK_PARAMS
#: criterion key -> (our NAME:PARAMS, pyCANON runner name, pyCANON result key)
CLASSIC = {
    "k": (f"k-anonymity:k={P['k']:g}", "k", "k_anonymity"),
    "l": (f"distinct-l-diversity:l={P['l']:g}", "l", "l_diversity"),
    "entropy": (f"entropy-l-diversity:l={P['entropy_l']:g}", "entropy", "entropy_l_diversity"),
    "recursive": (
        f"recursive-cl-diversity:c={P['c']:g},l={P['l']:g}", "recursive",
        "recursive_c_l_diversity",
    ),
    "t": (f"t-closeness:t={P['t']:g}", "t", "t_closeness"),
}  # fmt: skip


# ------------------------------------------------------------------ running processes
def run(argv: Sequence[str], ok: Sequence[int] = (0,)) -> tuple[float, str]:
    """One whole process: wall seconds and its stdout (its exit code must be in ``ok``)."""
    t0 = time.perf_counter()
    proc = subprocess.run(list(argv), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode not in ok:
        raise RuntimeError(f"{argv[:3]}... exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return wall, proc.stdout


def stats(seconds: Sequence[float]) -> dict[str, Any]:
    return {"median_s": statistics.median(seconds), "min_s": min(seconds),
            "max_s": max(seconds), "runs": list(seconds)}  # fmt: skip


def median_of(argv: Sequence[str], repeat: int, ok: Sequence[int] = (0,)) -> dict[str, Any]:
    run(argv, ok)  # warm-up: the page cache, not the process
    return stats([run(argv, ok)[0] for _ in range(repeat)])


def importtime(argv: Sequence[str], ok: Sequence[int] = (0, 1)) -> list[tuple[int, int, str]]:
    """``(self_us, cumulative_us, module)`` of every import of ``python -X importtime``;
    a module's indentation (its depth) is kept in the name's leading spaces."""
    proc = subprocess.run([str(PYTHON), "-X", "importtime", *argv], capture_output=True,
                          text=True)  # fmt: skip
    if proc.returncode not in ok:
        raise RuntimeError(f"importtime run exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    rows = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (.*)$", line)
        if m:
            rows.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    return rows


def import_report(rows: list[tuple[int, int, str]]) -> dict[str, Any]:
    names = [name.strip() for _, _, name in rows]
    tops = {n.split(".", 1)[0] for n in names}
    outermost = sorted(((cum, name.strip()) for _, cum, name in rows if not name.startswith("  ")),
                       reverse=True)  # fmt: skip
    own = sorted(
        ((self_us, n.strip()) for self_us, _, n in rows if n.strip().startswith("airflow_privacy")),
        reverse=True,
    )
    return {
        "modules": len(names),
        "heavy_imported": [h for h in HEAVY if h in tops],
        "heavy_not_imported": [h for h in HEAVY if h not in tops],
        "forbidden_imported": [h for h in FORBIDDEN if h in tops],
        "largest_imports_ms": [[n, c / 1000] for c, n in outermost[:12]],
        "airflow_privacy_modules": len(own),
        "airflow_privacy_self_ms": sum(s for s, _ in own) / 1000,
        "sum_self_ms": sum(s for s, _, _ in rows) / 1000,
    }


def compile_seconds(modules: Sequence[str]) -> float:
    """Compiling the sources of the ``airflow_privacy`` modules in ``modules`` (what every
    process pays again when the bytecode caches are missing and cannot be written)."""
    import importlib.util

    total = 0.0
    for name in modules:
        if not name.startswith("airflow_privacy"):
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        source = Path(spec.origin).read_bytes()
        t0 = time.perf_counter()
        compile(source, spec.origin, "exec", dont_inherit=True)
        total += time.perf_counter() - t0
    return total


def phases(argv: Sequence[str], modules: Sequence[str], repeat: int, tmp: Path) -> dict[str, Any]:
    """Median phases of ``argv`` (an ``airflow-privacy`` command line) in a fresh process."""
    mods = tmp / "modules.txt"
    mods.write_text("\n".join(modules) + "\n")
    cmd = [str(PYTHON), str(PHASES), str(mods), "--", *argv]
    runs = [json.loads(run(cmd)[1]) for _ in range(repeat)]
    keys = ("script_preamble", "imports", "read", "count", "check", "rest", "main",
            "in_process")  # fmt: skip
    return {k: statistics.median(r[k] for r in runs) for k in keys} | {"runs": runs}


# ------------------------------------------------------------------ sections
def startup(repeat: int, check_argv: list[str], tmp: Path) -> dict[str, Any]:
    pyc = _pycanon()
    parser_code = (
        "import time, json\nt0 = time.perf_counter()\nimport airflow_privacy.cli as c\n"
        "t1 = time.perf_counter()\nc.build_parser()\nt2 = time.perf_counter()\n"
        "print(json.dumps([t1 - t0, t2 - t1]))\n"
    )
    inside = [json.loads(run([str(PYTHON), "-c", parser_code])[1]) for _ in range(repeat)]
    rows = importtime([str(EXE), *check_argv])
    report = import_report(rows)
    if report["forbidden_imported"]:
        raise AssertionError(f"a check process imports {report['forbidden_imported']}")
    names = [n.strip() for _, _, n in rows]
    pyc_imports = "import numpy, pandas, pycanon; from pycanon import anonymity"
    out = {
        "python_c_pass": median_of([str(PYTHON), "-c", "pass"], repeat),
        "pycanon_python_c_pass": median_of([str(pyc), "-c", "pass"], repeat) if pyc else None,
        "pycanon_imports": median_of([str(pyc), "-c", pyc_imports], repeat) if pyc else None,
        "import_cli_s": statistics.median(x[0] for x in inside),
        "build_parser_s": statistics.median(x[1] for x in inside),
        "help": median_of([str(EXE), "--help"], repeat),
        "check_help": median_of([str(EXE), "check", "--help"], repeat),
        "check_imports": report,
        "check_argv": check_argv,
        "compile_seconds": compile_seconds(names),
    }
    (tmp / "check_modules.txt").write_text("\n".join(names) + "\n")
    return out


def classic(releases: list[ReleaseDef], repeat: int, tmp: Path) -> dict[str, Any]:
    pyc = _pycanon()
    out: dict[str, Any] = {}
    for rel in releases:
        path = write_release_csv(rel, tmp / f"{rel.name}.csv")
        groups: list[str] = []
        for q in rel.qis:
            groups += ["--group", q]
        base = [str(EXE), "check", str(path), "--sensitive", rel.sensitive, *groups,
                "--format", "json", "--quiet"]  # fmt: skip
        theirs_base = [str(pyc), str(RUNNER), "--csv", str(path), "--sep", ";", "--qi",
                       ",".join(rel.qis), "--sa", rel.sensitive, "--bare"]  # fmt: skip
        cases: dict[str, tuple[list[str], list[str]]] = {}
        for key, (ours, theirs, _) in CLASSIC.items():
            cases[key] = ([*base, "--criterion", ours], [*theirs_base, "--criteria", theirs])
        every = [a for key in CLASSIC for a in ("--criterion", CLASSIC[key][0])]
        cases["all"] = ([*base, *every], [*theirs_base, "--criteria", ",".join(CLASSIC)])
        times: dict[str, dict[str, list[float]]] = {k: {"ours": [], "pycanon": []} for k in cases}
        inside: dict[str, list[float]] = {k: [] for k in cases}
        values: dict[str, Any] = {}
        for i in range(repeat + 1):  # the first round warms the page cache, untimed
            for key, (ours_argv, theirs_argv) in cases.items():
                t_ours, o_out = run(ours_argv, ok=(0, 1))
                t_theirs, p_out = run(theirs_argv)
                if i == 0:
                    values[key] = _values(key, json.loads(o_out), json.loads(p_out))
                    continue
                times[key]["ours"].append(t_ours)
                times[key]["pycanon"].append(t_theirs)
                raw = json.loads(p_out)
                inside[key].append(raw["read_seconds"][0] + sum(
                    r["seconds"][0] for r in raw["results"].values()))  # fmt: skip
        res = {}
        for key in cases:
            o, p = stats(times[key]["ours"]), stats(times[key]["pycanon"])
            res[key] = {"ours": o, "pycanon": p, "ratio": p["median_s"] / o["median_s"],
                        "pycanon_read_and_check_in_process_s": statistics.median(inside[key]),
                        "values": values[key]}  # fmt: skip
        out[rel.name] = {"description": rel.description, "checks": res}
        _print_classic(rel, res)
    return out


def ck(groups: int, k: int, repeat: int, tmp: Path) -> dict[str, Any]:
    from benchmarks.paper_dp import max_disclosure_dp
    from benchmarks.synthetic import synthetic_counts, write_release_parquet

    counts = synthetic_counts(groups)
    path = tmp / "synthetic_release.parquet"
    n_rows = write_release_parquet(counts, path)
    argv = ["check", str(path), "--sensitive", "diagnosis", "--group", "bucket",
            "--criterion", "ck-safety", "--c", "0.9", "--k", str(k), "--quiet",
            "--format", "json"]  # fmt: skip
    whole = median_of([str(EXE), *argv], repeat, ok=(0, 1))
    modules = [n.strip() for _, _, n in importtime([str(EXE), *argv])]
    parts = phases(argv, modules, repeat, tmp)
    start = median_of([str(PYTHON), "-c", "pass"], repeat)["median_s"]
    t0 = time.perf_counter()
    dp_value = max_disclosure_dp(counts.tolist(), k)
    dp = time.perf_counter() - t0
    verdict = json.loads(run([str(EXE), *argv], ok=(0, 1))[1])
    value = verdict["results"][0]["value"]
    assert abs(value - dp_value) < 1e-9, (value, dp_value)
    breakdown = {
        "interpreter_start": start,
        "imports": parts["script_preamble"] + parts["imports"],
        "read": parts["read"],
        "count": parts["count"],
        "check": parts["check"],
        "rest": parts["rest"],
    }
    out = {
        "groups": groups, "rows": n_rows, "k": k, "max_disclosure": value,
        "process": whole, "dp_compute_s": dp,
        "ratio_median": whole["median_s"] / dp, "ratio_min": whole["min_s"] / dp,
        "breakdown_median_s": breakdown, "breakdown_sum_s": sum(breakdown.values()),
        "phases": parts,
    }  # fmt: skip
    print(f"\n== (c,k)-safety, k = {k}: {groups:,} groups, {n_rows:,} Parquet rows")
    print(f"whole process: median {whole['median_s']:.3f} s (min {whole['min_s']:.3f}, max "
          f"{whole['max_s']:.3f}); paper DP alone {dp:.2f} s; {dp / whole['median_s']:.1f}x "
          f"faster (ratio {out['ratio_median']:.3f}, min {out['ratio_min']:.3f}; target: "
          "20x, ratio <= 0.05)")  # fmt: skip
    print("  " + ", ".join(f"{k_} {v:.3f} s" for k_, v in breakdown.items())
          + f" (sum {out['breakdown_sum_s']:.3f} s)")  # fmt: skip
    return out


ADULT_QIS = ("age", "sex", "race", "marital-status", "education", "native-country",
             "workclass", "salary-class")  # fmt: skip


def anonymize_process(repeat: int, tmp: Path) -> dict[str, Any]:
    import io

    from airflow_privacy.cli import main as cli_main

    data = ROOT / "airflow_privacy" / "data" / "adult"
    argv = ["anonymize", str(data / "adult.csv.gz"), "--sensitive", "occupation",
            "--method", "lattice", "--criterion", "k-anonymity:k=5",
            "--out", str(tmp / "anonymized.csv"), "--replace", "--quiet"]  # fmt: skip
    for q in ADULT_QIS:
        argv += ["--qi", q, "--hierarchy", f"{q}={data / f'adult_hierarchy_{q}.csv'}"]
    whole = median_of([str(EXE), *argv], repeat)
    probe = ("import io, sys\nfrom airflow_privacy.cli import main\n"
             f"main({argv!r}, io.StringIO())\nprint('scipy.stats' in sys.modules)\n")  # fmt: skip
    imported = run([str(PYTHON), "-c", probe])[1].strip().splitlines()[-1] == "True"
    cli_main(argv, io.StringIO())  # warm: imports, page cache
    inside = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        assert cli_main(argv, io.StringIO()) == 0
        inside.append(time.perf_counter() - t0)
    work = statistics.median(inside)
    out = {"process": whole, "in_process": stats(inside),
           "ratio_median": whole["median_s"] / work,
           "imports_scipy_stats": imported}  # fmt: skip
    print(f"\n== anonymize (lattice, Adult, 8 QIs, 5-anonymity): process median "
          f"{whole['median_s']:.3f} s (min {whole['min_s']:.3f}); the same command inside this "
          f"process {work:.3f} s; ratio {out['ratio_median']:.2f}; scipy.stats imported: "
          f"{out['imports_scipy_stats']}")  # fmt: skip
    return out


# ------------------------------------------------------------------ helpers
def _pycanon() -> Path | None:
    return pycanon_python(create=False)


def _values(key: str, ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Both sides' values of one case; the ones defined alike must agree."""
    mine = {r["criterion"]: r["value"] for r in ours["results"]}
    pyc = {name: r["value"] for name, r in theirs["results"].items()}
    for k_, (spec, _, pname) in CLASSIC.items():
        name = spec.split(":", 1)[0]
        if name in mine and pname in pyc and k_ in ("k", "l"):
            assert mine[name] == pyc[pname], (key, name, mine[name], pyc[pname])
        if name in mine and pname in pyc and k_ == "t":
            assert abs(mine[name] - pyc[pname]) <= 1e-9 * max(1.0, abs(pyc[pname])), key
    return {"ours": mine, "pycanon": pyc}


def _print_classic(rel: ReleaseDef, res: dict[str, Any]) -> None:
    print(f"\n== {rel.name} ({rel.description})")
    print(f"{'median s (whole process)':<26}{'ours':>8}{'pyCANON':>9}{'ratio':>8}")
    for key, r in res.items():
        print(f"  {key:<24}{r['ours']['median_s']:8.3f}{r['pycanon']['median_s']:9.3f}"
              f"{r['ratio']:7.2f}x")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs per process (median)")
    ap.add_argument("--repeat-ck", type=int, default=5, help="runs of the (c,k) process")
    ap.add_argument("--release", action="append", choices=[r.name for r in RELEASES])
    ap.add_argument("--groups", type=int, default=100_000)
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--skip-classic", action="store_true")
    ap.add_argument("--skip-anonymize", action="store_true")
    ap.add_argument("--skip-ck", action="store_true")
    args = ap.parse_args(argv)
    if _pycanon() is None:
        print("pyCANON venv missing: run bash benchmarks/pycanon_env.sh", file=sys.stderr)
        return 2
    t_start = time.perf_counter()
    package = ROOT / "airflow_privacy"
    had_bytecode = any(package.rglob("__pycache__/*.pyc"))
    compileall.compile_dir(str(package), quiet=1)
    releases = [release_by_name(n) for n in args.release] if args.release else list(RELEASES)
    hw = hardware()
    print(f"hardware: {hw['nproc']} CPUs, {hw['cpu']}, {hw['ram_gib']} GiB RAM, "
          f"Python {hw['python']}; PYTHONDONTWRITEBYTECODE="
          f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")  # fmt: skip
    out: dict[str, Any] = {"hardware": hw, "bytecode_cached_before": had_bytecode,
                           "repeat": args.repeat, "parameters": CHECK_PARAMS}  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        first = releases[0]
        path = write_release_csv(first, tmp / "startup.csv")
        check_argv = ["check", str(path), "--sensitive", first.sensitive,
                      *[a for q in first.qis for a in ("--group", q)],
                      "--criterion", CLASSIC["k"][0], "--format", "json", "--quiet"]  # fmt: skip
        out["startup"] = s = startup(max(args.repeat, 11), check_argv, tmp)
        imp = s["check_imports"]
        print(f"\n== start-up: python -c pass {s['python_c_pass']['median_s'] * 1e3:.0f} ms; "
              f"import airflow_privacy.cli {s['import_cli_s'] * 1e3:.0f} ms + build_parser "
              f"{s['build_parser_s'] * 1e3:.0f} ms (in process); airflow-privacy --help "
              f"{s['help']['median_s'] * 1e3:.0f} ms, check --help "
              f"{s['check_help']['median_s'] * 1e3:.0f} ms (whole processes)")  # fmt: skip
        print(f"   a check process imports {imp['modules']} modules; heavy: "
              f"{', '.join(imp['heavy_imported'])}; not imported: "
              f"{', '.join(imp['heavy_not_imported'])}; compiling the package's sources "
              f"would add {s['compile_seconds'] * 1e3:.0f} ms")  # fmt: skip
        print("   largest imports (cumulative ms): " + ", ".join(
            f"{n} {ms:.0f}" for n, ms in imp["largest_imports_ms"][:8]))  # fmt: skip
        if not args.skip_classic:
            out["classic"] = classic(releases, args.repeat, tmp)
            modules = (tmp / "check_modules.txt").read_text().split()
            out["classic_phases"] = phases(check_argv, modules, args.repeat, tmp)
            ph = out["classic_phases"]
            print(f"\n{first.name}, k-anonymity, in one process: imports "
                  f"{(ph['script_preamble'] + ph['imports']) * 1e3:.0f} ms, read "
                  f"{ph['read'] * 1e3:.1f} ms, count {ph['count'] * 1e3:.1f} ms, check "
                  f"{ph['check'] * 1e3:.1f} ms, rest {ph['rest'] * 1e3:.1f} ms")  # fmt: skip
        if not args.skip_anonymize:
            out["anonymize"] = anonymize_process(args.repeat, tmp)
        if not args.skip_ck:
            out["ck"] = ck(args.groups, args.k, args.repeat_ck, tmp)
    out["seconds"] = time.perf_counter() - t_start
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "cli_process.json").write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwrote {RESULTS / 'cli_process.json'} ({out['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
