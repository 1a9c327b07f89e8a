"""``ExpectRowsToBeInGroupsOfAtLeastK``: k-anonymity row by row."""

from __future__ import annotations

from typing import Any

import pandas as pd
from great_expectations.execution_engine.pandas_execution_engine import PandasExecutionEngine
from great_expectations.expectations.expectation import (
    ColumnMapExpectation,
    MulticolumnMapExpectation,
)
from great_expectations.expectations.metrics.map_metric_provider.column_condition_partial import (
    column_condition_partial,
)
from great_expectations.expectations.metrics.map_metric_provider.column_map_metric_provider import (
    ColumnMapMetricProvider,
)
from great_expectations.expectations.metrics.map_metric_provider.multicolumn_condition_partial import (  # noqa: E501
    multicolumn_condition_partial,
)
from great_expectations.expectations.metrics.map_metric_provider.multicolumn_map_metric_provider import (  # noqa: E501
    MulticolumnMapMetricProvider,
)

METRIC = "multicolumn_values.privacy.group_at_least_k"
COLUMN_METRIC = "column_values.privacy.group_at_least_k"


class MulticolumnGroupAtLeastK(MulticolumnMapMetricProvider):
    condition_metric_name = METRIC
    condition_domain_keys = (
        "batch_id",
        "table",
        "column_list",
        "row_condition",
        "condition_parser",
        "ignore_row_if",
    )
    condition_value_keys = ("k",)

    @multicolumn_condition_partial(engine=PandasExecutionEngine)  # type: ignore[untyped-decorator]
    def _pandas(cls, column_list: pd.DataFrame, k: int, **kwargs: Any) -> pd.Series:
        counts = column_list.value_counts(dropna=False)
        sizes = counts.reindex(pd.MultiIndex.from_frame(column_list)).to_numpy()
        return pd.Series(sizes >= int(k), index=column_list.index)


class ExpectRowsToBeInGroupsOfAtLeastK(MulticolumnMapExpectation):
    """Expect every row's QI-group (the combination of ``column_list``, two or more columns:
    GX's multicolumn domain needs two) to have at least ``k`` rows: k-anonymity, reported row
    by row so the exposed records are listed. One group column: use
    :class:`ExpectColumnValuesToBeInGroupsOfAtLeastK`."""

    k: int

    map_metric = METRIC
    success_keys = ("column_list", "k", "mostly", "ignore_row_if")


class ColumnGroupAtLeastK(ColumnMapMetricProvider):
    condition_metric_name = COLUMN_METRIC
    condition_value_keys = ("k",)

    @column_condition_partial(engine=PandasExecutionEngine)
    def _pandas(cls, column: pd.Series, k: int, **kwargs: Any) -> pd.Series:
        return column.map(column.value_counts(dropna=False)) >= int(k)


class ExpectColumnValuesToBeInGroupsOfAtLeastK(ColumnMapExpectation):
    """Expect every value of a single group column (e.g. a bucket id) to occur at least
    ``k`` times: k-anonymity row by row for a release with one group column."""

    k: int

    map_metric = COLUMN_METRIC
    success_keys = ("k", "mostly")
