"""``MaxEntRiskOperator``: disclosure risk under probabilistic background knowledge.

An adapter over :func:`airflow_privacy.gate.maxent.run_maxent`, the service behind
``airflow-privacy maxent``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.providers.airflow.operators.base import CheckOperator
from airflow_privacy.providers.airflow.params import columns, flag, number, templated, text, whole


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
        estimate without a verdict, which no gate accepts as a pass
    :param knowledge: optional YAML/JSON knowledge file (docs/usage/maxent.md)
    :param original: the original table (path/URI), to mine association rules and report
        accuracy
    :param top_positive: how many strongest positive rules the adversary is assumed to know
    :param top_negative: how many strongest negative rules
    :param min_support: a mined rule's minimum support (records, default 3)
    :param rule_widths: mine rules whose condition names these numbers of QI columns
    :param not_sensitive: sensitive values whose disclosure is acceptable (a list)
    :param top: how many QI values at risk to report (default 10)
    :param joint: solve every bucket jointly (no closed form; slower, same answer)
    :param missing_as: publish blank sensitive cells as this value (default: refused)
    Also ``attempt``, ``attempt_task_id``, ``check_name``, ``privacy_ledger_conn_id``,
    ``on_unsafe`` (see :class:`CheckOperator`).

    Returns (XCom) the report envelope (step ``maxent``); named people of the knowledge file
    appear only by pseudonym (``person #i``) with their largest posterior, never by name or
    with a value.
    """

    template_fields: Sequence[str] = (
        "release", "sensitive", "original", "knowledge", "top_positive", "top_negative",
        "min_support", "threshold", "missing_as", "attempt",
    )  # fmt: skip

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
        top: int = 10,
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
        self.rule_widths = list(rule_widths) if rule_widths else None
        self.not_sensitive = not_sensitive
        self.threshold = threshold
        self.top = whole(top, "top", 0, 10_000)
        self.joint = flag(joint, "joint")
        self.conn_id = conn_id
        self.missing_as = missing_as
        if qis is not None and not templated(qis):
            columns(qis, "qis")
        if isinstance(not_sensitive, str):
            from airflow_privacy.errors import InputError

            raise InputError("not_sensitive must be a list of values")
        if not templated(threshold):
            number(threshold, "threshold", 0, 1, open_low=True)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.maxent import MaxEntRequest, run_maxent
        from airflow_privacy.gate.refs import ReleaseRef

        def service(ctx: Any, attempt: str | None) -> Any:
            original = text(self.original, "original", required=False)
            return run_maxent(
                MaxEntRequest(
                    release=ReleaseRef(path=text(self.release, "release"), conn=self.conn_id),
                    sensitive=str(text(self.sensitive, "sensitive")),
                    bucket=str(text(self.bucket_column, "bucket_column")),
                    qis=columns(self.qis, "qis", required=False),
                    knowledge=text(self.knowledge, "knowledge", required=False),
                    original=ReleaseRef(path=original, conn=self.conn_id) if original else None,
                    top_positive=whole(self.top_positive, "top_positive", 0, 100_000) or 0,
                    top_negative=whole(self.top_negative, "top_negative", 0, 100_000) or 0,
                    min_support=whole(self.min_support, "min_support", 1, 10**9) or 3,
                    rule_widths=self.rule_widths,
                    not_sensitive=tuple(self.not_sensitive),
                    c=number(self.threshold, "threshold", 0, 1, open_low=True),
                    top=self.top if self.top is not None else 10,
                    joint=self.joint,
                    name=self.name,
                    attempt=attempt,
                    missing_as=text(self.missing_as, "missing_as", required=False),
                ),
                ctx,
            )

        return self.attempt_service(context, service)
