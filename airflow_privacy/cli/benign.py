"""``--benign VALUE`` (repeatable): sensitive values whose disclosure is not a breach.

One definition for every command that checks a release (``check``, ``anonymize``, ``audit``,
``maxent``, ``skyline``); the value reaches the gate request's ``benign`` field. Benign is a
property of the sensitive attribute, shared by all criteria of a release
(docs/worst-case-engine.md, "Benign values")."""

from __future__ import annotations

import argparse

BENIGN_HELP = (
    "a sensitive value whose disclosure is not a breach (e.g. 'none'; repeat for several): "
    "the criteria protect every other value and ignore this one as a target; a value absent "
    "from the release is noted, not an error"
)


def add_benign_arg(p: argparse.ArgumentParser, *aliases: str) -> None:
    """``--benign VALUE`` (and ``aliases``, e.g. ``--not-sensitive``), collected in
    ``args.benign`` (a list, empty by default)."""
    p.add_argument(
        "--benign", *aliases, action="append", default=[], dest="benign", metavar="VALUE",
        help=BENIGN_HELP,
    )  # fmt: skip
