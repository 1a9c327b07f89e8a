"""``MaxEntRiskOperator``: disclosure risk under probabilistic background knowledge.

An adapter over :func:`airflow_privacy.gate.maxent.run_maxent`, the service behind
``airflow-privacy maxent``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.providers.airflow.operators.base import CheckOperator
from airflow_privacy.providers.airflow.params import Args


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
        "min_support", "threshold", "missing_as", "benign_values", "attempt",
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
        benign_values: Sequence[str] = (),
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
        self.rule_widths = rule_widths
        self.not_sensitive = not_sensitive
        self.benign_values = benign_values
        self.threshold = threshold
        self.top = top
        self.joint = joint
        self.conn_id = conn_id
        self.missing_as = missing_as
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument (:meth:`PrivacyOperator.check_arguments`)."""
        from airflow_privacy.errors import InputError

        a = Args(self, parsing)
        out = {
            "release": a.text("release"),
            "sensitive": a.text("sensitive"),
            "bucket_column": a.text("bucket_column"),
            "qis": a.names("qis", optional=True),
            "knowledge": a.text("knowledge", optional=True),
            "original": a.text("original", optional=True),
            "top_positive": a.whole("top_positive", 0, 100_000),
            "top_negative": a.whole("top_negative", 0, 100_000),
            "min_support": a.whole("min_support", 1, 10**9),
            "rule_widths": a.wholes("rule_widths", 1, 64, optional=True),
            "not_sensitive": a.values("not_sensitive"),
            "benign_values": a.values("benign_values"),
            "threshold": a.number("threshold", 0, 1, optional=True, open_low=True),
            "top": a.whole("top", 0, 10_000),
            "joint": a.flag("joint"),
            "conn_id": a.text("conn_id", optional=True),
            "missing_as": a.text("missing_as", optional=True),
        }
        rules = [out[k] for k in ("top_positive", "top_negative")]
        if self.original is None and any(isinstance(n, int) and n > 0 for n in rules):
            raise InputError("top_positive/top_negative mine rules from original: give original")
        qis = out["qis"] if isinstance(out["qis"], list) else []
        for name in ("sensitive", "bucket_column"):
            if out[name] in qis:
                raise InputError(f"qis must not name the {name} column {out[name]!r}")
        return out

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.maxent import MaxEntRequest, run_maxent
        from airflow_privacy.gate.refs import ReleaseRef

        def service(ctx: Any, attempt: str | None) -> Any:
            a = self.check_arguments(parsing=False)
            conn = a["conn_id"]
            return run_maxent(
                MaxEntRequest(
                    release=ReleaseRef(path=a["release"], conn=conn),
                    sensitive=a["sensitive"],
                    bucket=a["bucket_column"],
                    qis=a["qis"],
                    knowledge=a["knowledge"],
                    original=ReleaseRef(path=a["original"], conn=conn) if a["original"] else None,
                    top_positive=a["top_positive"],
                    top_negative=a["top_negative"],
                    min_support=a["min_support"],
                    rule_widths=a["rule_widths"],
                    not_sensitive=a["not_sensitive"],
                    benign=a["benign_values"],
                    c=a["threshold"],
                    top=a["top"],
                    joint=a["joint"],
                    name=self.name,
                    attempt=attempt,
                    missing_as=a["missing_as"],
                ),
                ctx,
            )

        return self.attempt_service(context, service)
