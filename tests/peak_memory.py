"""Run one ``airflow-privacy`` command in a fresh process and measure its own peak memory:
the high-water mark of that program's memory map (``VmHWM`` in ``/proc/self/status``, in
KiB). ``ru_maxrss`` would also count the pages of the test process it was forked from.

The command runs under a memory limit as well (``RLIMIT_DATA``, 1 GiB unless told: the heap
and every private writable mapping, what malloc, Arrow and DuckDB allocate; ``RLIMIT_AS``
would also count DuckDB's reservations, which it cannot start under at 1 GiB): a command
that would need more fails inside the limit instead of taking the machine's memory."""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import Sequence

_PROBE = (
    "import sys, runpy\n"
    "sys.argv = ['airflow-privacy', *sys.argv[1:]]\n"
    "code = 0\n"
    "try:\n"
    "    runpy.run_module('airflow_privacy.cli', run_name='__main__')\n"
    "except SystemExit as exit_:\n"
    "    code = exit_.code\n"
    "peak = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0]\n"
    "print('PEAK', peak, code, file=sys.stderr)\n"
)


DATA_LIMIT = 1 << 30


def _limit(data_limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))


def run_limited(
    argv: Sequence[str], timeout: float = 600, data_limit: int = DATA_LIMIT
) -> subprocess.CompletedProcess[str]:
    """``airflow-privacy ARGV`` under the same limit, as it ends (a process that runs out of
    memory inside Arrow's C++ may abort there, with no exit code of its own)."""
    return subprocess.run(
        [sys.executable, "-m", "airflow_privacy.cli", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=lambda: _limit(data_limit),
    )


def run_measured(
    argv: Sequence[str], timeout: float = 600, data_limit: int = DATA_LIMIT
) -> tuple[str, str, int, str]:
    """``(stdout, stderr, peak KiB, exit code as printed)`` of ``airflow-privacy ARGV``, run
    with at most ``data_limit`` bytes of data (``RLIMIT_DATA``)."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=lambda: _limit(data_limit),
    )
    peak = [line.split() for line in proc.stderr.splitlines() if line.startswith("PEAK ")]
    assert peak, proc.stderr[-2000:]
    return proc.stdout, proc.stderr, int(peak[0][1]), peak[0][2]
