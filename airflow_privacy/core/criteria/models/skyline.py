"""The skyline privacy criterion (Chen, LeFevre, Ramakrishnan 2007)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.criteria.base import (
    Criterion,
    GroupTest,
    Kind,
    Monotonicity,
    Parameter,
    fmt,
    points_of,
)

if TYPE_CHECKING:
    from airflow_privacy.core.criteria.result import CriterionResult
    from airflow_privacy.core.model import Bucketization


class Skyline(Criterion):
    """For every point ``(l, k, m, c)`` the maximum breach against ``(l, k, m)`` knowledge
    stays below ``c`` ("Skyline Privacy Criterion")."""

    name = "skyline"
    summary = (
        "at every point (l, k, m, c), an adversary who knows l values the target does not "
        "have, the values of k other people and m people who have the target's value if "
        "anyone does stays below confidence c"
    )
    reference = (
        'Chen, LeFevre, Ramakrishnan, "Privacy Skyline: Privacy with Multidimensional '
        'Adversarial Knowledge", VLDB 2007'
    )
    parameters = (
        Parameter(
            "points", Kind.POINTS,
            "a knowledge point, repeat for several: safe iff an adversary who knows l values "
            "the target does not have, the values of k other people and m people who have the "
            "target's value if anyone does stays below confidence c (0 < c <= 1)",
            flag="point",
        ),
    )  # fmt: skip
    monotonicity = Monotonicity(
        True, False, False,
        "Chen et al. 2007 (SkylineAnonymize builds on Mondrian); checked by brute force "
        "once the criterion is registered",
    )  # fmt: skip
    cost = 10
    measure = "maximum breach (probability)"
    report_section = "skyline"

    def evaluate(self, b: Bucketization) -> CriterionResult:
        from airflow_privacy.core.criteria.skyline import check_skyline

        return check_skyline(b, self.params["points"])

    def group_test(
        self, values: Sequence[str], benign: frozenset[str] = frozenset()
    ) -> tuple[GroupTest, bool] | None:
        # necessary only: every placement inside one group is open to the adversary
        from airflow_privacy.core.criteria import group_tests

        return group_tests.alone(self, values, by_profile=False, benign=benign), False

    @classmethod
    def threshold_text(cls, params: Mapping[str, Any]) -> str | None:
        if "points" not in params:
            return None
        pts = "; ".join(
            f"(l, k, m) = {fmt(q[:3])} below c = {fmt(q[3])}" for q in points_of(params["points"])
        )
        return f"at every point: {pts}"

    @classmethod
    def terminal_text(
        cls, result: Mapping[str, Any], where: str, wrap: Callable[[str], str]
    ) -> str | None:
        """One table row per point, then the deciding point's reason."""
        verdict = "SAFE" if result["safe"] else "UNSAFE"
        points = result["details"]["points"]
        lines = [
            f"skyline ({len(points)} point{'s' if len(points) != 1 else ''}): {verdict}",
            f"  release: {where}",
            "     l    k    m      c    breach  verdict",
        ]
        for p in points:
            l, k, m = p["point"]  # noqa: E741
            lines.append(
                f"  {l:4d} {k:4d} {m:4d} {p['c']:6.3g}  {p['breach']:8.4f}  "
                f"{'safe' if p['safe'] else 'UNSAFE'}"
            )
        lines.append(f"  why:     {wrap(result['reason'])}")
        return "\n".join(lines)
