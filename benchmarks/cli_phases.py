"""Where a whole ``airflow-privacy`` process spends its time, phase by phase.

Run as its own process by ``benchmarks/bench_cli_process.py`` (never imported by it: this
script imports only the standard library before it starts the clock)::

    python benchmarks/cli_phases.py MODULES_FILE -- check release.parquet --sensitive ...

``MODULES_FILE`` lists (one per line) the modules a ``check`` process imports, taken from
``python -X importtime`` of the same command. Phases, each a ``time.perf_counter``
difference inside this one process:

* ``imports``: importing those modules, in the order the command imported them;
* ``read``: :func:`airflow_privacy.core.io.read_bucketization` less the counting: the
  header and column checks, the Arrow reader, the blank-cell check of the sensitive column;
* ``count``: :meth:`Bucketization.from_arrow` (per-group sensitive counts);
* ``check``: the criteria (``Criterion.evaluate`` of each class) and their results;
* ``rest``: everything else of :func:`airflow_privacy.cli.main`: building the parser,
  parsing, the gate's request checks, the envelope and its output.

The interpreter's own start-up (before the first line of this script) is not in here: the
benchmark measures it as ``python -c pass``. The garbage collector is set as the command's
entry point sets it (:func:`airflow_privacy.cli.console`). Prints one JSON object on stdout.
"""

from __future__ import annotations

import gc
import time

T0 = time.perf_counter()
# as the command's entry point sets it (airflow_privacy.cli.console; asserted below)
gc.set_threshold(50_000, *gc.get_threshold()[1:])

import importlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402


def main() -> int:
    modules_file, sep, *argv = sys.argv[1:]
    assert sep == "--", "usage: cli_phases.py MODULES_FILE -- ARGS..."
    spent = {"read_count": 0.0, "count": 0.0, "check": 0.0}
    t_start = time.perf_counter()
    for name in Path(modules_file).read_text().split():
        try:
            importlib.import_module(name)
        except Exception:  # a module only importable as a side effect of another
            continue
    t_imports = time.perf_counter()

    def timed(key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - t

        return wrapper

    from airflow_privacy.cli import GC_THRESHOLD
    from airflow_privacy.cli import main as cli_main

    assert gc.get_threshold()[0] == GC_THRESHOLD, "cli_phases.py: set the threshold as console()"
    from airflow_privacy.core import io as core_io
    from airflow_privacy.core.criteria.registry import CRITERIA
    from airflow_privacy.core.model import Bucketization

    core_io.read_bucketization = timed("read_count", core_io.read_bucketization)
    from_arrow = Bucketization.__dict__["from_arrow"].__func__
    Bucketization.from_arrow = classmethod(timed("count", from_arrow))  # type: ignore[assignment]
    for cls in list(CRITERIA.values()):
        cls.evaluate = timed("check", cls.evaluate)  # type: ignore[method-assign]

    out = io.StringIO()
    t_main = time.perf_counter()
    code = cli_main(argv, out)
    t_end = time.perf_counter()
    main_seconds = t_end - t_main
    result = {
        "exit_code": code,
        "script_preamble": t_start - T0,
        "imports": t_imports - t_start,
        "read": spent["read_count"] - spent["count"],
        "count": spent["count"],
        "check": spent["check"],
        "rest": main_seconds - spent["read_count"] - spent["check"],
        "main": main_seconds,
        "in_process": t_end - T0,
        "output_chars": len(out.getvalue()),
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
