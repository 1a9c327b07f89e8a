"""Shared test set-up: the project root on sys.path (for ``benchmarks.*`` baselines), the
hypothesis profiles, and one local SparkSession for the session (fixture ``spark``:
``local[1]``, no UI, one shuffle partition, adaptive execution off: tiny jobs; a private
warehouse folder; started only by a test that asks for it). pyspark and a Java runtime are
needed: missing, the tests that use it are skipped locally and fail under ``CI=true``
(``.ci/run`` installs Java)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# CI runs property tests derandomized (the same examples every run), so a red CI always
# points at a reproducible failure; locally hypothesis explores with fresh random examples.
# No per-example deadline in either profile: hypothesis's default (200 ms of wall-clock time)
# fails correct code on a machine running other work; speed belongs in benchmarks/.
import os  # noqa: E402

from hypothesis import settings  # noqa: E402

settings.register_profile("local", deadline=None)
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.load_profile("ci" if os.environ.get("CI", "").lower() == "true" else "local")


import logging  # noqa: E402
import shutil  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

IN_CI = os.environ.get("CI", "").lower() == "true"


# The modules that use the ``spark`` fixture run on one worker (one JVM for the run: each
# local Spark costs about 25 s of CPU to start and warm); checked at collection.
SPARK_MODULES = (
    "tests/core/backends/test_backends_spark.py",
    "tests/core/backends/test_backends_signed_zero.py",
    "tests/gate/test_spark_gate.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules marked ``long_module`` first, each kept whole and in its own order: under
    ``make test`` (``--dist loadfile --no-loadscope-reorder``) the workers take modules in
    this order, so the minutes a live Airflow spends waiting overlap the other modules' work
    instead of ending the run with one worker busy and the other idle. A module that uses
    the ``spark`` fixture must be listed in :data:`SPARK_MODULES`."""
    for item in items:
        module = item.nodeid.split("::")[0]
        if "spark" in getattr(item, "fixturenames", ()) and module not in SPARK_MODULES:
            raise pytest.UsageError(f"{module} uses the spark fixture: list it in SPARK_MODULES")
    items.sort(key=lambda item: item.get_closest_marker("long_module") is None)  # stable


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, with :data:`SPARK_MODULES` as one unit of work (one worker)."""
    if config.getoption("dist", None) != "loadfile":
        return None
    import importlib

    scheduler: Any = importlib.import_module("xdist.scheduler")  # untyped

    class Scheduling(scheduler.LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::")[0]
            return "spark modules" if module in SPARK_MODULES else module

    return Scheduling(config, log)


# a short-lived JVM: the client compiler only and the serial collector start Spark and run
# its first (tiny) queries about twice as fast
JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"Spark tests cannot run under CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        _unavailable("no Java runtime (install openjdk-17-jre-headless)")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        _unavailable("pyspark is not installed (pip install 'airflow-privacy[spark]')")
    warehouse = tmp_path_factory.mktemp("spark-warehouse")
    started = time.perf_counter()
    session = (
        SparkSession.builder.master("local[1]")
        .appName("airflow-privacy-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.default.parallelism", "1")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.driver.extraJavaOptions", JAVA_OPTIONS + f" -Dderby.system.home={warehouse}")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    print(f"Spark {session.version} started in {time.perf_counter() - started:.1f} s")
    yield session
    session.stop()
    # py4j says goodbye at INFO when its last connection is collected, at interpreter exit,
    # after pytest has closed the stream the root logger writes to ("--- Logging error ---")
    logging.getLogger("py4j").setLevel(logging.WARNING)
