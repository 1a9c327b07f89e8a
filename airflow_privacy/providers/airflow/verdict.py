"""How an operator turns a privacy verdict into a task outcome.

A privacy verdict is not a transient error: retrying cannot change it, so an unsafe release
fails the task with ``AirflowFailException`` (no retries are burnt) and the reasons, witness
included, in the message. ``on_unsafe="skip"`` skips instead, ``"continue"`` only reports.
The report is pushed to XCom (key ``privacy_report``) *before* the task fails, so a
downstream "record as blocked" task can collect every reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from airflow_privacy.errors import InputError

OnUnsafe = Literal["fail", "skip", "continue"]
REPORT_KEY = "privacy_report"
ON_UNSAFE = ("fail", "skip", "continue")


def check_on_unsafe(value: str) -> OnUnsafe:
    if value not in ON_UNSAFE:
        raise ValueError(f"on_unsafe must be one of {', '.join(ON_UNSAFE)}, got {value!r}")
    return value  # type: ignore[return-value]


def enforce(report: dict[str, Any], on_unsafe: str, context: Mapping[str, Any]) -> dict[str, Any]:
    """Publish the report to XCom, then fail / skip / continue when it is not safe."""
    from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

    ti = context.get("ti")
    if ti is not None:
        ti.xcom_push(key=REPORT_KEY, value=report)
    if report.get("safe", False):
        return report
    reasons = "; ".join(str(r) for r in report.get("reasons", [])) or "unsafe"
    message = f"release blocked by {report.get('check', 'privacy check')}: {reasons}"
    if on_unsafe == "fail":
        raise AirflowFailException(message)
    if on_unsafe == "skip":
        raise AirflowSkipException(message)
    return report


def fail_on_input_error(exc: InputError) -> Exception:
    """Data errors (missing column, bad hierarchy) fail the task at once, no retries."""
    from airflow.sdk.exceptions import AirflowFailException

    return AirflowFailException(f"bad input: {exc}")


def coerce(value: Any) -> Any:
    """Templated parameters arrive as strings ("0.7"): numbers become numbers again."""
    if isinstance(value, str):
        text = value.strip()
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                continue
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
    if isinstance(value, list):
        return [coerce(v) for v in value]
    if isinstance(value, dict):
        return {k: coerce(v) for k, v in value.items()}
    return value
