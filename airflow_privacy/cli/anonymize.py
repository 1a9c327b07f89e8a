"""``airflow-privacy anonymize``: write the least-distorted release that passes the criteria.

Derived from the step's declaration
(:class:`airflow_privacy.gate.steps.anonymize.AnonymizeStep`, also behind
``BucketizeOperator`` / ``AnonymizeLatticeOperator``): the release, its manifest (beside it,
``RELEASE.manifest.json``, unless --manifest says elsewhere) and the QIT / ST tables of a
bucketization are written together and atomically, so a failure leaves nothing behind; an
output that exists already is written over only with --replace.
Exit 0 = release written, 2 = bad input or no release can pass the criteria.
"""

from __future__ import annotations

import argparse
import shlex
from typing import TYPE_CHECKING, Any, TextIO

from airflow_privacy.cli import steps
from airflow_privacy.cli.common import context, emit
from airflow_privacy.gate.steps.anonymize import ANONYMIZE

if TYPE_CHECKING:
    from airflow_privacy.gate.envelope import Envelope

NAME = ANONYMIZE.name


def register(sub: Any) -> None:
    steps.register(sub, ANONYMIZE)


def run(args: argparse.Namespace, out: TextIO) -> int:
    from airflow_privacy.gate.steps.base import Known

    values = steps.values(ANONYMIZE, args)
    ANONYMIZE.check(Known(values))  # the flags' rules, in their own words (--utility ...)
    env = ANONYMIZE.run(ANONYMIZE.request(values), context(args))
    return emit(env, args, out, render, 0)


def recheck_command(env: Envelope) -> str:
    """The ``check`` command line that re-checks the release's first criterion (with the
    benign values the anonymizer used)."""
    d = env.details
    groups = " ".join(f"--group {c}" for c in d["group_columns"])
    crit = d["criteria"][0]
    params = " ".join(_flag(k, v) for k, v in crit["parameters"].items() if v is not None)
    benign = " ".join(f"--benign {shlex.quote(str(v))}" for v in d.get("benign") or ())
    population = d.get("population")
    if population:
        params = f"{params} --population {population['ref']}".strip()
    if str(env.outputs["release"]).startswith("table:"):  # never the URL: it may hold a password
        params = f"{params} --conn DATABASE_URL".strip()
    return (f"airflow-privacy check {env.outputs['release']} --sensitive "
            f"{env.release.sensitive if env.release else '?'} {groups} "
            f"--criterion {crit['name']} {params} {benign}").strip()  # fmt: skip


def _flag(key: str, value: Any) -> str:
    """A parameter as `check` flags, as its declaration writes it (skyline points as
    ``--point l,k,m,c``, repeated)."""
    from airflow_privacy.core.criteria.registry import parameter_named

    declared = parameter_named(key)
    return declared.cli_words(value) if declared is not None else f"--{key} {value}"


def render(env: Envelope) -> str:
    d = env.details
    md = d.get("method_details") or {}
    method = d["method"]
    lines = [
        f"anonymize ({method}): release written to {env.outputs['release']}",
        f"  input:    {d['records_in']:,} records; {len(d['qis'])} QIs; sensitive "
        f"'{env.release.sensitive if env.release else '?'}'",
        f"  release:  {d['records_out']:,} records in {d['groups']:,} groups"
        + (f" ({d['suppressed']:,} suppressed)" if d.get("suppressed") else ""),
    ]
    if method == "lattice":
        node = ", ".join(f"{k}={v}" for k, v in md["levels"].items())
        s = md["search"]
        if "disclosure" in md:
            lines.append(f"  node:     {node} (first node in {md['utility_metric']} order whose "
                         "disclosure set passes)")  # fmt: skip
        else:
            lines.append(f"  node:     {node} (best {md['utility_metric']} of "
                         f"{md['minimal_nodes_total']} minimal nodes)")  # fmt: skip
        lines.append(f"  search:   {s['nodes_checked']:,} of {s['lattice_size']:,} nodes checked")
        if "disclosure" in md:
            info = md["disclosure"]
            lines.append(f"  disclosure: safe — node {info['rank']} of {info['candidates']} in "
                         f"search order (the naive search publishes node {info['naive_rank']}); "
                         f"disclosure set {info['disclosure_set_size']:,} of "
                         f"{info['block_size']:,} worlds")  # fmt: skip
    elif method == "mondrian":
        lines.append(f"  split:    {md['partitions']:,} partitions "
                     f"({md['split_attempts']:,} split attempts)")  # fmt: skip
    else:
        lines.append(f"  buckets:  {md['buckets']:,} (l={md['l']} values per round, "
                     f"{md['rounds_per_bucket']} round(s) per bucket)")  # fmt: skip
    for r in env.results:
        params = ", ".join(
            f"{k}={'/'.join(map(str, v)) if isinstance(v, list) and k == 'benign' else v}"
            for k, v in r["parameters"].items()
            if v is not None
        )
        lines.append(f"  criterion: {r['criterion']} ({params}): SAFE (value {r['value']:.6g})")
    util = ", ".join(f"{k}={v:.6g}" for k, v in d["utility"].items() if v is not None)
    lines.append(f"  utility:  {util}")
    lines.append(f"  re-check: {recheck_command(env)}")
    lines.append(f"  manifest: {env.outputs['manifest']}")
    return "\n".join(lines) + "\n"
