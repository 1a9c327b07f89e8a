"""``ExpectColumnValuesToNotBeDirectIdentifiers``: no e-mail, phone, SSN or card numbers."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
from great_expectations.execution_engine.pandas_execution_engine import PandasExecutionEngine
from great_expectations.expectations.expectation import ColumnMapExpectation
from great_expectations.expectations.metrics.map_metric_provider.column_condition_partial import (
    column_condition_partial,
)
from great_expectations.expectations.metrics.map_metric_provider.column_map_metric_provider import (
    ColumnMapMetricProvider,
)

METRIC = "column_values.privacy.not_direct_identifier"

#: Patterns of values that identify a person on their own.
PATTERNS: dict[str, re.Pattern[str]] = {
    "e-mail address": re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}"),
    "US social security number": re.compile(r"\b\d{3}-\d{2}-\d{4}\b"),
    "phone number": re.compile(
        r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,4}\)[\s.-]?)?\d{3,4}[\s.-]\d{3,4}(?:[\s.-]\d{2,4})?"
    ),
    "payment card number": re.compile(r"\b(?:\d[ -]?){13,19}\b"),
}


def identifier_kind(value: object) -> str | None:
    """The kind of direct identifier ``value`` looks like, or None."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None
    text = str(value)
    for kind, pattern in PATTERNS.items():
        if pattern.search(text):
            return kind
    return None


class ColumnValuesNotDirectIdentifier(ColumnMapMetricProvider):
    condition_metric_name = METRIC

    @column_condition_partial(engine=PandasExecutionEngine)
    def _pandas(cls, column: pd.Series, **kwargs: Any) -> pd.Series:
        return column.map(lambda v: identifier_kind(v) is None)


class ExpectColumnValuesToNotBeDirectIdentifiers(ColumnMapExpectation):
    """Expect no value of the column to be a direct identifier (e-mail address, phone number,
    US social security number, payment card number). The unexpected rows are the leaks."""

    map_metric = METRIC
    success_keys = ("mostly",)
