"""TaskFlow decorators (declared in the provider metadata, ``task-decorators``).

* ``@task.privacy_check(...)``: the function returns the release to check (a path or URI;
  give ``sql_table`` instead and its value is not used), and ``CheckSafetyOperator`` checks
  it with the decorator's arguments, recorded under the run's attempt like any check::

      @task.privacy_check(attempt_task_id="open_attempt", sensitive="occupation",
                          group_columns=["bucket"], criteria=["k-anonymity:k=5"])
      def check_release(release: str) -> str:
          return release

* ``@task.anonymize(...)``: the function returns the input to anonymize (a path or URI;
  give ``source_table`` or ``source_spark_table`` instead and its value is not used), and
  the anonymizer of ``method`` (``bucketize``, the default: ``BucketizeOperator``;
  ``lattice`` or ``mondrian``: ``AnonymizeLatticeOperator``) writes the release.

Every argument of the operator is accepted except the one the function returns; the task's
name is the function's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, ClassVar

from airflow.sdk.bases.decorator import (
    DecoratedOperator,
    TaskDecorator,
    determine_kwargs,
    task_decorator_factory,
)
from airflow.sdk.definitions.context import context_merge

from airflow_privacy.providers.airflow.operators.anonymize import (
    AnonymizeLatticeOperator,
    BucketizeOperator,
)
from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator

#: what the argument the function fills holds until it has run: a template, so that the
#: checks made when the DAG is parsed wait for the value (set when the task runs)
FROM_THE_FUNCTION = "{{ '' }}"


class _FromFunction(DecoratedOperator):
    """An operator one of whose arguments (``filled``) is what its function returns, unless
    one of ``instead`` is given."""

    filled: ClassVar[str]
    instead: ClassVar[tuple[str, ...]]
    custom_operator_name: str = "@task"

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        op_args: Collection[Any] | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        from airflow_privacy.errors import InputError

        if self.filled in kwargs:
            raise InputError(
                f"{self.custom_operator_name}: the function returns {self.filled}; do not give "
                f"{self.filled}="
            )
        if all(kwargs.get(name) is None for name in self.instead):
            kwargs[self.filled] = FROM_THE_FUNCTION
        super().__init__(
            python_callable=python_callable, op_args=op_args, op_kwargs=op_kwargs, **kwargs
        )

    def execute(self, context: Any) -> Any:
        from airflow_privacy.errors import InputError

        context_merge(context, self.op_kwargs)
        kwargs = determine_kwargs(self.python_callable, self.op_args, context)
        returned = self.python_callable(*self.op_args, **kwargs)
        if all(getattr(self, name, None) is None for name in self.instead):
            if not isinstance(returned, str) or not returned.strip():
                raise InputError(
                    f"{self.custom_operator_name} {self.task_id!r}: the function must return "
                    f"the {self.filled}'s path or URI (text), got {type(returned).__name__}"
                )
            setattr(self, self.filled, returned)
        # the operator's own execution (the next class after DecoratedOperator)
        return super(DecoratedOperator, self).execute(context)


class _PrivacyCheckDecoratedOperator(_FromFunction, CheckSafetyOperator):
    """A ``CheckSafetyOperator`` whose release is what its function returns."""

    template_fields: Sequence[str] = (
        *DecoratedOperator.template_fields,
        *CheckSafetyOperator.template_fields,
    )
    custom_operator_name: str = "@task.privacy_check"
    filled = "release"
    instead = ("sql_table",)


class _BucketizeDecoratedOperator(_FromFunction, BucketizeOperator):
    """A ``BucketizeOperator`` whose input is what its function returns."""

    template_fields: Sequence[str] = (
        *DecoratedOperator.template_fields,
        *BucketizeOperator.template_fields,
    )
    custom_operator_name: str = "@task.anonymize"
    filled = "source"
    instead = ("source_table", "source_spark_table")


class _LatticeDecoratedOperator(_FromFunction, AnonymizeLatticeOperator):
    """An ``AnonymizeLatticeOperator`` whose input is what its function returns."""

    template_fields: Sequence[str] = (
        *DecoratedOperator.template_fields,
        *AnonymizeLatticeOperator.template_fields,
    )
    custom_operator_name: str = "@task.anonymize"
    filled = "source"
    instead = ("source_table", "source_spark_table")


def privacy_check_task(
    python_callable: Callable[..., Any] | None = None, **kwargs: Any
) -> TaskDecorator:
    """``@task.privacy_check`` (module doc)."""
    return task_decorator_factory(
        python_callable=python_callable,
        decorated_operator_class=_PrivacyCheckDecoratedOperator,
        **kwargs,
    )


def anonymize_task(
    python_callable: Callable[..., Any] | None = None, **kwargs: Any
) -> TaskDecorator:
    """``@task.anonymize`` (module doc): ``method`` picks the anonymizer."""
    method = kwargs.get("method", "bucketize")
    if method == "bucketize":
        kwargs.pop("method", None)
        cls: type[DecoratedOperator] = _BucketizeDecoratedOperator
    else:
        cls = _LatticeDecoratedOperator
    return task_decorator_factory(
        python_callable=python_callable, decorated_operator_class=cls, **kwargs
    )
