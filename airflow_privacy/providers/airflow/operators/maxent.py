"""``MaxEntRiskOperator``: disclosure risk under probabilistic background knowledge.

A thin wrapper over :func:`airflow_privacy.core.maxent.estimate` (Privacy-MaxEnt, Du, Teng
and Zhu 2008): the adversary's knowledge (a YAML/JSON file, and/or the Top-(K+, K-)
association rules mined from the original table: the publisher's worst case, section 4.4)
gives the maximum-entropy estimate of ``P(sensitive | QI)``; its largest value is the gate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.sources import ReleaseRef, read_table
from airflow_privacy.providers.airflow.verdict import (
    check_on_unsafe,
    coerce,
    enforce,
    fail_on_input_error,
)


class MaxEntRiskOperator(BaseOperator):
    """Estimate P*(s | q) by maximum entropy and block when it reaches ``threshold``.

    :param release: a bucketized release (QI columns exact + ``bucket_column``)
    :param qis: the QI columns; :param sensitive: the sensitive column
    :param bucket_column: the bucket id column (default ``bucket``)
    :param knowledge: optional YAML/JSON knowledge file (docs/usage/maxent.md)
    :param original: the original table, to mine association rules and report accuracy
    :param top_positive: / :param top_negative: how many strongest positive / negative
        rules the adversary is assumed to know
    :param min_support: a rule's minimum support (records)
    :param threshold: safe iff the largest P*(s | q) is below it
    :param on_unsafe: ``fail`` (default), ``skip`` or ``continue``
    """

    template_fields: Sequence[str] = (
        "release",
        "sensitive",
        "original",
        "knowledge",
        "top_positive",
        "top_negative",
        "min_support",
        "threshold",
    )

    def __init__(
        self,
        *,
        release: str,
        qis: Sequence[str],
        sensitive: str,
        threshold: float | str,
        bucket_column: str = "bucket",
        knowledge: str | None = None,
        original: str | None = None,
        top_positive: int | str = 0,
        top_negative: int | str = 0,
        min_support: int | str = 3,
        top: int = 10,
        on_unsafe: str = "fail",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.release = release
        self.qis = list(qis)
        self.sensitive = sensitive
        self.bucket_column = bucket_column
        self.knowledge = knowledge
        self.original = original
        self.top_positive = top_positive
        self.top_negative = top_negative
        self.min_support = min_support
        self.threshold = threshold
        self.top = top
        self.on_unsafe = check_on_unsafe(on_unsafe)

    def execute(self, context: Any) -> dict[str, Any]:
        try:
            report = self._run()
        except InputError as exc:
            raise fail_on_input_error(exc) from exc
        return enforce(report, self.on_unsafe, context)

    def _run(self) -> dict[str, Any]:
        from airflow_privacy.core.maxent import BucketRelease, estimate
        from airflow_privacy.core.maxent.knowledge_file import load_knowledge
        from airflow_privacy.report import maxent_heatmap
        from airflow_privacy.report.build import HEATMAP_ROWS
        from airflow_privacy.serialization import json_safe

        threshold = float(coerce(self.threshold))
        if not 0 < threshold <= 1:
            raise InputError(f"threshold must be in (0, 1], got {threshold:g}")
        cols = [*self.qis, self.sensitive, self.bucket_column]
        table = read_table(ReleaseRef(self.release), cols)
        release = BucketRelease.from_arrow(table, self.qis, self.sensitive, self.bucket_column)
        knowledge = load_knowledge(self.knowledge, release) if self.knowledge else None
        original = (
            read_table(ReleaseRef(self.original), [*self.qis, self.sensitive])
            if self.original
            else None
        )
        result = estimate(
            release,
            knowledge,
            original=original,
            top_positive=int(coerce(self.top_positive)),
            top_negative=int(coerce(self.top_negative)),
            min_support=int(coerce(self.min_support)),
        )
        worst = result.max_at
        safe = result.max_posterior < threshold
        where = (
            f"{worst.label} has {worst.value!r} with probability {worst.posterior:.4g}"
            if worst is not None
            else "no value is at risk"
        )
        summary = (
            f"largest MaxEnt posterior {result.max_posterior:.4g} "
            f"({'below' if safe else 'not below'} {threshold:g}): {where}, "
            f"given {len(result.facts)} piece(s) of probabilistic knowledge"
        )
        self.log.info("maxent: %s", summary)
        details = result.to_dict(self.top)
        details.pop("people", None)
        report: dict[str, Any] = json_safe(
            {
                "check": type(self).__name__,
                "safe": safe,
                "reasons": [] if safe else [f"maxent: {summary}"],
                "summary": summary,
                "max_posterior": result.max_posterior,
                "top_at_risk": details.get("top_at_risk"),
                "heatmap": maxent_heatmap(result, HEATMAP_ROWS),
                "accuracy": details.get("accuracy"),
                "residual": details.get("residual"),
            }
        )
        return report
