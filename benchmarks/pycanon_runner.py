"""Compute pyCANON's classic criteria on a release CSV and print them as JSON.

This script is run BY the pyCANON virtualenv's python (``.venv-pycanon``, created by
``benchmarks/pycanon_env.sh``), never imported by the project: pyCANON pins pandas/numpy
versions that conflict with the project's own environment. It imports nothing from
``airflow_privacy``.

Usage::

    .venv-pycanon/bin/python benchmarks/pycanon_runner.py --csv release.csv --sep ';' \\
        --qi age,sex,race --sa occupation [--repeat 3] [--criteria k,l,entropy,recursive,t] \\
        [--bare]

``--criteria`` also takes the distribution-based criteria ``alpha_k`` (pyCANON's
``alpha_k_anonymity``: ``[alpha, k]``), ``basic_beta``, ``enhanced_beta`` and ``delta``
(``basic_beta_likeness``, ``enhanced_beta_likeness``, ``delta_disclosure``: one number each);
the default is the classic five.

Output (stdout, one JSON object)::

    {"pycanon": "1.3.6", "pandas": ..., "numpy": ..., "python": ..., "rows": N,
     "groups": G, "sa_dtype": "int64", "sa_numeric": true, "repeat": R,
     "read_seconds": [...],                 # pandas.read_csv, once per repetition
     "results": {"k_anonymity": {"value": 5, "seconds": [...]},
                 "l_diversity": {"value": 2, "seconds": [...]},
                 "entropy_l_diversity": {"value": 1, "seconds": [...]},
                 "recursive_c_l_diversity": {"value": [2, 2], "seconds": [...]},
                 "t_closeness": {"value": 0.31, "seconds": [...]}}}

``value`` is exactly what pyCANON returns (NaN becomes ``null``); ``seconds`` holds one
wall-clock time per repetition, each call made on the DataFrame read in that repetition.

``--bare`` is the mode for timing pyCANON as a whole process (benchmarks/bench_cli_process.py):
the process does only what a user's script would, read the CSV and call the requested
function(s), so ``groups`` (an extra grouping pass for the cross-check) is ``null``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time
from typing import Any

#: the classic five, run by default
CLASSIC = ("k", "l", "entropy", "recursive", "t")
#: the distribution-based criteria (opt in with --criteria)
DISTRIBUTION = ("alpha_k", "basic_beta", "enhanced_beta", "delta")
CRITERIA = CLASSIC + DISTRIBUTION
NAMES = {
    "k": "k_anonymity",
    "l": "l_diversity",
    "entropy": "entropy_l_diversity",
    "recursive": "recursive_c_l_diversity",
    "t": "t_closeness",
    "alpha_k": "alpha_k_anonymity",
    "basic_beta": "basic_beta_likeness",
    "enhanced_beta": "enhanced_beta_likeness",
    "delta": "delta_disclosure",
}


def _plain(x: Any) -> Any:
    """numpy scalars / tuples -> JSON-safe Python values (NaN -> None)."""
    if isinstance(x, tuple | list):
        return [_plain(v) for v in x]
    if hasattr(x, "item"):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", required=True, help="release CSV file")
    ap.add_argument("--sep", default=",", help="CSV delimiter (default ',')")
    ap.add_argument("--qi", required=True, help="comma-separated quasi-identifier columns")
    ap.add_argument("--sa", required=True, help="the sensitive column")
    ap.add_argument("--repeat", type=int, default=1, help="repetitions (default 1)")
    ap.add_argument(
        "--bare",
        action="store_true",
        help="no extra work beyond reading and the requested checks (groups: null)",
    )
    ap.add_argument(
        "--criteria",
        default=",".join(CLASSIC),
        help=f"comma-separated subset of {','.join(CRITERIA)} (default: {','.join(CLASSIC)})",
    )
    args = ap.parse_args(argv)

    import numpy as np
    import pandas as pd
    import pycanon
    from pycanon import anonymity
    from pycanon.anonymity.utils import aux_anonymity

    qi = [c for c in args.qi.split(",") if c]
    sa = [args.sa]
    wanted = [c.strip() for c in args.criteria.split(",") if c.strip()]
    unknown = [c for c in wanted if c not in CRITERIA]
    if unknown:
        ap.error(f"unknown criteria {unknown}; choose from {list(CRITERIA)}")
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")

    calls = {
        "k": lambda df: anonymity.k_anonymity(df, qi),
        "l": lambda df: anonymity.l_diversity(df, qi, sa),
        "entropy": lambda df: anonymity.entropy_l_diversity(df, qi, sa),
        "recursive": lambda df: anonymity.recursive_c_l_diversity(df, qi, sa),
        "t": lambda df: anonymity.t_closeness(df, qi, sa),
        "alpha_k": lambda df: anonymity.alpha_k_anonymity(df, qi, sa),
        "basic_beta": lambda df: anonymity.basic_beta_likeness(df, qi, sa),
        "enhanced_beta": lambda df: anonymity.enhanced_beta_likeness(df, qi, sa),
        "delta": lambda df: anonymity.delta_disclosure(df, qi, sa),
    }
    read_seconds: list[float] = []
    results: dict[str, dict[str, Any]] = {NAMES[c]: {"seconds": []} for c in wanted}
    df = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        df = pd.read_csv(args.csv, sep=args.sep, usecols=[*qi, args.sa])
        read_seconds.append(time.perf_counter() - t0)
        for c in wanted:
            t0 = time.perf_counter()
            value = calls[c](df)
            results[NAMES[c]]["seconds"].append(time.perf_counter() - t0)
            results[NAMES[c]]["value"] = _plain(value)
    assert df is not None
    out = {
        "pycanon": getattr(pycanon, "__version__", None) or _version("pycanon"),
        "pandas": pd.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "rows": len(df),
        "groups": None if args.bare else len(aux_anonymity.get_equiv_class(df, qi)),
        "sa_dtype": str(df[args.sa].dtype),
        "sa_numeric": bool(pd.api.types.is_numeric_dtype(df[args.sa])),
        "repeat": args.repeat,
        "read_seconds": read_seconds,
        "results": results,
    }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
