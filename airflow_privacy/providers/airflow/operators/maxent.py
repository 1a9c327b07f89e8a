"""``MaxEntRiskOperator``: disclosure risk under probabilistic background knowledge.

Its arguments are checked as the step declares them
(:class:`airflow_privacy.gate.steps.maxent.MaxEntStep`), the declaration behind
``airflow-privacy maxent``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.gate.steps.maxent import MAXENT
from airflow_privacy.providers.airflow.operators.base import CheckOperator


class MaxEntRiskOperator(CheckOperator):
    """Estimate P*(s | q) by maximum entropy (Du et al. 2008) and block when the largest
    posterior reaches ``threshold`` (erring on the safe side: it must be below by more than
    the solver's error bound).

    :param release: a bucketized release (QI columns exact + ``bucket_column``), path/URI
    :param conn_id: the connection of a URI
    :param qis: the QI columns (a list; default: every column but the bucket and sensitive)
    :param sensitive: the sensitive column
    :param bucket_column: the bucket id column (default ``bucket``)
    :param threshold: safe iff the largest P*(s | q) is below it, in (0, 1]; ``None`` gives an
        estimate without a verdict, which no gate accepts as a pass (a template that renders
        blank is bad input, not ``None``)
    :param knowledge: optional YAML/JSON knowledge file (docs/usage/maxent.md)
    :param original: the original table (path/URI), to mine association rules and report
        accuracy
    :param top_positive: how many strongest positive rules the adversary is assumed to know
    :param top_negative: how many strongest negative rules
    :param min_support: a mined rule's minimum support (records, default 3)
    :param rule_widths: mine rules whose condition names these numbers of QI columns (a
        list of whole numbers, each 1 to 64)
    :param benign_values: sensitive values whose disclosure is not a breach (a list of text):
        the largest posterior and the verdict consider only the other values; a value absent
        from the release is noted in the envelope, not an error
    :param not_sensitive: the former name of ``benign_values`` (kept; both lists are merged)
    :param top: how many QI values at risk to report (default 10)
    :param heatmap_rows: how many QI values most at risk the report's heatmap shows
        (default 10)
    :param joint: solve every bucket jointly (no closed form; slower, same answer)
    :param missing_as: publish blank sensitive cells as this value (default: refused)
    Also ``attempt``, ``attempt_task_id``, ``check_name``, ``privacy_ledger_conn_id``,
    ``on_unsafe`` (see :class:`CheckOperator`).

    Returns (XCom) the report envelope (step ``maxent``); named people of the knowledge file
    appear only by pseudonym (``person #i``) with their largest posterior, never by name or
    with a value.
    """

    #: derived from the step's declaration, plus the attempt
    template_fields: Sequence[str] = (*MAXENT.template_fields(), "attempt")

    def __init__(
        self,
        *,
        release: str,
        sensitive: str,
        threshold: float | str | None,
        qis: Sequence[str] | None = None,
        bucket_column: str = "bucket",
        knowledge: str | None = None,
        original: str | None = None,
        top_positive: int | str = 0,
        top_negative: int | str = 0,
        min_support: int | str = 3,
        rule_widths: Sequence[int] | None = None,
        not_sensitive: Sequence[str] = (),
        benign_values: Sequence[str] = (),
        top: int = 10,
        heatmap_rows: int = 10,
        joint: bool = False,
        conn_id: str | None = None,
        missing_as: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.release = release
        self.qis = qis
        self.sensitive = sensitive
        self.bucket_column = bucket_column
        self.knowledge = knowledge
        self.original = original
        self.top_positive = top_positive
        self.top_negative = top_negative
        self.min_support = min_support
        self.rule_widths = rule_widths
        self.not_sensitive = not_sensitive
        self.benign_values = benign_values
        self.threshold = threshold
        self.top = top
        self.heatmap_rows = heatmap_rows
        self.joint = joint
        self.conn_id = conn_id
        self.missing_as = missing_as
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it (:mod:`airflow_privacy.gate.steps.maxent`;
        :func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, MAXENT, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.providers.airflow import steps

        return steps.execute(self, MAXENT, context)
