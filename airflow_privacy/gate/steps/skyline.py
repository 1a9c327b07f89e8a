"""The skyline step, declared once (:class:`SkylineStep`; ``airflow-privacy skyline``): the
privacy skyline of a release at a confidence ``c``, the maximal ``(l, k, m)`` for which it is
safe (SkylineFind; Chen, LeFevre, Ramakrishnan, VLDB 2007, section 5 and the talk's "Skyline
Exploratory Tool"): an adversary who knows ``l`` values the target does not have, the values
of ``k`` other people and ``m`` implications "v has s -> the target has s" stays below ``c``
for every point on or beneath the skyline.

An exploration: the envelope has no verdict (``safe`` None, outcome ``computed``), also when
nothing is safe; gate with ``check --criterion skyline``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.disclosure import facts, read_release, release_fields
from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.refs import ReleaseRef

DEFAULT_MAX = 10
MAX_BOUND = 1000  # the staircase holds (max-l + 1) x (max-k + 1) numbers


@dataclass(frozen=True)
class SkylineRequest:
    release: ReleaseRef
    sensitive: str
    group_columns: Sequence[str]
    c: float
    max_l: int = DEFAULT_MAX
    max_k: int = DEFAULT_MAX
    max_m: int = DEFAULT_MAX
    plot: str | None = None
    benign: Sequence[str] = ()
    missing_as: str | None = None
    fmt: Any = None
    delimiter: str | None = None
    name: str = "skyline"


def _bound(dim: str, what: str) -> Field:
    return Field(
        f"max_{dim}", "whole", f"explore at most this many {what}", cli=f"--max-{dim}",
        airflow=None, metavar=dim.upper(), default=DEFAULT_MAX, low=0, high=MAX_BOUND,
    )  # fmt: skip


class SkylineStep(Step):
    """``skyline``: the maximal knowledge a release withstands (module doc)."""

    name = "skyline"
    summary = "the maximal (l, k, m) knowledge a release withstands at confidence c"
    description = (
        "Find the privacy skyline of a release: the maximal points (l, k, m) such that an "
        "adversary who knows l values the target does not have, the values of k other "
        "people and m implications 'v has s -> the target has s' stays below confidence c. "
        "Exit 0 when the skyline was computed (also when nothing is safe; gate with 'check "
        "--criterion skyline'), 2 = bad input."
    )
    fields = (
        *release_fields(),
        Field(
            "c", "number", "the confidence threshold: safe means every breach stays below c",
            airflow=None, required=True, metavar="C", low=0, high=1, open_low=True,
        ),
        _bound("l", "values the target is known not to have"),
        _bound("k", "people whose values the adversary knows"),
        _bound("m", "implications about other people"),
        Field(
            "plot", "text", "also draw the skyline as staircases: FILE.svg (no dependency) or "
            "FILE.png (needs matplotlib: pip install 'airflow-privacy[plot]')", airflow=None,
            metavar="FILE",
        ),
    )  # fmt: skip
    cli_groups = ("input", "output")

    def request(self, values: Mapping[str, Any]) -> SkylineRequest:
        return SkylineRequest(
            release=values["release"],
            sensitive=values["sensitive"],
            group_columns=list(values["group"]),
            c=values["c"],
            max_l=values.get("max_l", DEFAULT_MAX),
            max_k=values.get("max_k", DEFAULT_MAX),
            max_m=values.get("max_m", DEFAULT_MAX),
            plot=values.get("plot"),
            benign=tuple(values.get("benign") or ()),
            missing_as=values.get("missing_as"),
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
        )

    def run(self, req: SkylineRequest, ctx: GateContext) -> Envelope:
        from pathlib import Path

        from airflow_privacy.core.criteria.skyline import find_skyline, witness_dict
        from airflow_privacy.gate.benign import benign_details, benign_values
        from airflow_privacy.gate.envelope import Envelope
        from airflow_privacy.report.skyline_plot import check_plot_path, write_plot

        # before reading a possibly large file
        self.check(Known({"c": req.c, "max_l": req.max_l, "max_k": req.max_k,
                          "max_m": req.max_m}))  # fmt: skip
        plot = check_plot_path(req.plot) if req.plot is not None else None
        b = read_release(req, ctx)
        bounds = (req.max_l, req.max_k, req.max_m)
        ctx.progress(f"exploring l <= {bounds[0]}, k <= {bounds[1]}, m <= {bounds[2]} at "
                     f"c = {req.c:g}")  # fmt: skip
        result = find_skyline(b, req.c, *bounds)
        ctx.progress(
            f"{len(result.points)} skyline points after {result.evaluations} breach evaluations"
        )
        outputs: dict[str, str] = {}
        if plot is not None:
            write_plot(result, plot, Path(req.release.describe()).name)
            outputs["plot"] = str(plot)
            ctx.progress(f"wrote {plot}")
        beyond = result.unsafe_example
        summary = (
            f"privacy skyline at c = {req.c:g}: {len(result.points)} maximal safe point(s) "
            f"within l <= {bounds[0]}, k <= {bounds[1]}, m <= {bounds[2]} (no verdict)"
        )
        return Envelope(
            step="skyline", name=req.name, outcome="computed", safe=None, summary=summary,
            release=facts(req, b), outputs=outputs,
            details={
                **benign_details(benign_values(req.benign), b.values),
                "c": result.c,
                "points": [list(p) for p in result.points],
                "bounds": dict(zip("lkm", result.bounds, strict=True)),
                "breaches": [
                    {
                        "point": [r.l, r.k, r.m],
                        "breach": r.breach,
                        "exact": f"{r.numerator}/{r.denominator}",
                        "witness": witness_dict(b, r),
                    }
                    for r in result.breaches
                ],
                "beyond": None if beyond is None else {
                    "point": [beyond.l, beyond.k, beyond.m],
                    "breach": beyond.breach,
                    "witness": witness_dict(b, beyond),
                    "text": _describe(b, beyond),
                },
                "staircase": [list(row) for row in result.staircase],
                "evaluations": result.evaluations,
            },
        )  # fmt: skip


def _describe(b: Any, breach: Any) -> str:
    from airflow_privacy.core.criteria.skyline import describe_breach

    return describe_breach(b, breach)


SKYLINE = SkylineStep()
