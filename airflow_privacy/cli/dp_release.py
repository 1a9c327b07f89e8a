"""``airflow-privacy dp-release``: noisy counts of declared marginals with differential
privacy, within the dataset's budget (``DPReleaseOperator`` in Airflow).

Derived from the step's declaration
(:class:`airflow_privacy.gate.steps.dp_release.DPReleaseStep`). Prints the attempt's UUID
to publish with, the mechanism and the budget. Exit 0 = released (the spend recorded, the
file written), 1 = refused (nothing drawn, recorded or written), 2 = bad input."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import context, emit
from airflow_privacy.gate.steps.dp_release import DP_RELEASE

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = DP_RELEASE.name


def register(sub: Any) -> None:
    steps.register(sub, DP_RELEASE)


def run(args: argparse.Namespace, out: TextIO) -> int:
    env = DP_RELEASE.run(DP_RELEASE.request(steps.values(DP_RELEASE, args)), context(args))
    return emit(env, args, out, render)


def render(env: Envelope) -> str:
    d = env.details
    b = d["budget"]
    if env.safe is not True:
        lines = [f"REFUSED  {env.summary}"]
        lines += [f"  next:  {a['text']}" for a in env.advice]
        return "\n".join(lines) + "\n"
    a = env.attempt
    assert a is not None
    m = d["mechanism"]
    return (
        f"RELEASED {env.summary}\n"
        f"  attempt {a.uuid}: {a.dataset} v{a.version} (release #{a.release_id})\n"
        f"  noise:   {m['mechanism']}, scale {m['scale']:.4g}, standard deviation "
        f"{m['stddev']:.4g} per cell, 95% interval +-{m['half_width']}\n"
        f"  budget:  {d['unit']} spent {b['spent']:.6g} of {b['cap']:g} over "
        f"{b['releases']} release(s), {b['left']:.6g} left (never reset)\n"
        f"  meaning: {d['loss']['text']}\n"
        f"  written: {env.outputs.get('release', '')}\n"
        f"  next:    `airflow-privacy publish --attempt {a.uuid} --to DIR "
        f"{env.outputs.get('release', 'OUT')}`\n"
    )
