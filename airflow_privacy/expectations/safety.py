"""``ExpectReleaseToBeCKSafe``: (c,k)-safety as a GX batch expectation."""

from __future__ import annotations

from typing import Any, ClassVar

from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.execution_engine.pandas_execution_engine import PandasExecutionEngine
from great_expectations.expectations.expectation import BatchExpectation
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider

METRIC = "table.privacy.ck_max_disclosure"


class TableCKMaxDisclosure(TableMetricProvider):
    """Maximum disclosure of the batch against k basic implications, with its witness."""

    metric_name = METRIC
    value_keys = ("sensitive", "group_columns", "k")

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(
        cls,
        execution_engine: PandasExecutionEngine,
        metric_domain_kwargs: dict[str, Any],
        metric_value_kwargs: dict[str, Any],
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any],
    ) -> dict[str, Any]:
        from airflow_privacy.core.criteria.worst_case import describe_witness, max_disclosure
        from airflow_privacy.core.model import Bucketization, ReleaseSpec

        df, _, _ = execution_engine.get_compute_domain(
            domain_kwargs=metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE
        )
        spec = ReleaseSpec(
            sensitive=metric_value_kwargs["sensitive"],
            group_columns=tuple(metric_value_kwargs["group_columns"]),
        )
        b = Bucketization.from_frame(df, spec)
        result = max_disclosure(b, int(metric_value_kwargs["k"]))
        return {"max_disclosure": result.max_disclosure, "witness": describe_witness(b, result)}


class ExpectReleaseToBeCKSafe(BatchExpectation):
    """Expect the release to be (c,k)-safe: an adversary with k basic implications never
    reaches confidence c about anyone's sensitive value (Martin et al. 2007, Definition 13)."""

    sensitive: str
    group_columns: list[str]
    c: float
    k: int

    metric_dependencies = (METRIC,)
    success_keys = ("sensitive", "group_columns", "c", "k")
    domain_keys: ClassVar[tuple[str, ...]] = ("batch_id", "row_condition", "condition_parser")

    def _validate(
        self,
        metrics: dict[str, Any],
        runtime_configuration: dict[str, Any] | None = None,
        execution_engine: Any = None,
    ) -> dict[str, Any]:
        observed = metrics[METRIC]
        return {
            "success": observed["max_disclosure"] < self.c,
            "result": {
                "observed_value": observed["max_disclosure"],
                "details": {"witness": observed["witness"], "c": self.c, "k": self.k},
            },
        }
