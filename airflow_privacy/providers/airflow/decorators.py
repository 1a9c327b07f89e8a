"""TaskFlow decorators (declared in the provider metadata, ``task-decorators``):
``@task.privacy_check(...)``: the function returns the release to check (a path or URI; a
SQL table with ``sql_table`` given instead), and ``CheckSafetyOperator`` checks it with the
decorator's arguments, recorded under the run's attempt like any check::

    @task.privacy_check(attempt_task_id="open_attempt", sensitive="occupation",
                        group_columns=["bucket"], criteria=["k-anonymity:k=5"])
    def check_release(release: str) -> str:
        return release

Every argument of ``CheckSafetyOperator`` is accepted except ``release``, which the function
returns; its name in the attempt is the task's (the function's) unless ``check_name`` says
otherwise.
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

from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator

#: what ``release`` holds until the function has run: a template, so that the checks made
#: when the DAG is parsed wait for the value (the function's, set when the task runs)
FROM_THE_FUNCTION = "{{ '' }}"


class _PrivacyCheckDecoratedOperator(DecoratedOperator, CheckSafetyOperator):
    """A ``CheckSafetyOperator`` whose release is what its function returns."""

    template_fields: Sequence[str] = (
        *DecoratedOperator.template_fields,
        *CheckSafetyOperator.template_fields,
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {
        **DecoratedOperator.template_fields_renderers,
    }
    custom_operator_name: str = "@task.privacy_check"

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        op_args: Collection[Any] | None = None,
        op_kwargs: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if "release" in kwargs:
            from airflow_privacy.errors import InputError

            raise InputError("@task.privacy_check: the function returns the release; not release=")
        if kwargs.get("sql_table") is None:
            kwargs["release"] = FROM_THE_FUNCTION
        super().__init__(
            python_callable=python_callable, op_args=op_args, op_kwargs=op_kwargs, **kwargs
        )

    def execute(self, context: Any) -> Any:
        from airflow_privacy.errors import InputError

        context_merge(context, self.op_kwargs)
        kwargs = determine_kwargs(self.python_callable, self.op_args, context)
        returned = self.python_callable(*self.op_args, **kwargs)
        if self.sql_table is None:
            if not isinstance(returned, str) or not returned.strip():
                raise InputError(
                    f"@task.privacy_check {self.task_id!r}: the function must return the "
                    f"release's path or URI (text), got {type(returned).__name__}"
                )
            self.release = returned
        return CheckSafetyOperator.execute(self, context)


def privacy_check_task(
    python_callable: Callable[..., Any] | None = None, **kwargs: Any
) -> TaskDecorator:
    """``@task.privacy_check`` (module doc)."""
    return task_decorator_factory(
        python_callable=python_callable,
        decorated_operator_class=_PrivacyCheckDecoratedOperator,
        **kwargs,
    )
