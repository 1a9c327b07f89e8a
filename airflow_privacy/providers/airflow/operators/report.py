"""``ReleaseReportOperator``: the release report a privacy officer reads, at the end of a DAG.

An adapter over :func:`airflow_privacy.gate.report.run_report`, the service behind
``airflow-privacy report``: everything comes from the ledger (the attempt's checks and its
status), so the report says "published" only when the gate published the release; it is
written beside the release (and beside its published copy) atomically and stored in the
ledger, where the plugin's UI page shows it. The task carries an extra link, "Privacy
report", to the page of its own attempt's report, by the attempt's UUID (it survives moving
the ledger; a later run of the same release never changes what this run's link opens).

Use it as a teardown of the gate (``publish >> report.as_teardown()``): it runs whatever
happened, and its outcome decides the run's (``as_teardown`` sets
``on_failure_fail_dagrun=True``): it fails, after writing and storing its report, unless the
ledger says this run's attempt was published. So the run's state comes from the ledger,
whatever else is in the DAG: a gate marked "success" by hand, a blocked attempt, or a run
that never opened one all end red. The provider's cluster policy
(:mod:`airflow_privacy.providers.airflow.policy`) refuses a DAG whose gate has no such
teardown, or has a task after it that is not a teardown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperatorLink

from airflow_privacy.gate.steps.report import REPORT
from airflow_privacy.providers.airflow.operators.base import AttemptOperator
from airflow_privacy.providers.airflow.urls import URL_PREFIX

if TYPE_CHECKING:
    from airflow.sdk import BaseOperator
    from airflow.sdk.types import TaskInstanceKey

URL_KEY = "privacy_report_url"


def attempt_page(attempt_uuid: str, base_url: str | None = None) -> str:
    """The plugin's page of one attempt's own report: ``{[api] base_url}/privacy/attempts/
    <uuid>`` (each run's link opens its own attempt's report, never a later run's)."""
    return f"{_base(base_url)}{URL_PREFIX}/attempts/{attempt_uuid}"


def _base(base_url: str | None) -> str:
    if base_url is None:
        from airflow.sdk.configuration import conf

        base_url = conf.get("api", "base_url", fallback="") or ""
    return base_url.rstrip("/")


def release_page(release_uuid: str, base_url: str | None = None) -> str:
    """The plugin's page of a release: ``{[api] base_url}/privacy/releases/<uuid>`` (a path
    from the server root when ``base_url`` is not configured)."""
    return f"{_base(base_url)}{URL_PREFIX}/releases/{release_uuid}"


def run_tab(dag_id: str, run_id: str, base_url: str | None = None) -> str:
    """The run's "Privacy report" tab inside Airflow (the plugin's external view on
    ``dag_run``): ``{[api] base_url}/dags/<dag>/runs/<run>/plugin/privacy-report``."""
    from urllib.parse import quote

    return (
        f"{_base(base_url)}/dags/{quote(dag_id, safe='')}/runs/{quote(run_id, safe='')}"
        "/plugin/privacy-report"
    )


class ReleaseReportLink(BaseOperatorLink):
    """The "Privacy report" button of a :class:`ReleaseReportOperator` task: the run's
    "Privacy report" tab, inside Airflow (the report of the attempt the run opened). Shown
    once the task stored a report (it pushes the attempt's own page to XCom, key
    ``privacy_report_url``); Airflow 3 stores what this returns when the task finishes."""

    name = "Privacy report"

    def get_link(self, operator: BaseOperator, *, ti_key: TaskInstanceKey) -> str:
        from airflow.sdk.execution_time.xcom import XCom

        url = XCom.get_value(ti_key=ti_key, key=URL_KEY)
        return run_tab(ti_key.dag_id, ti_key.run_id) if url else ""


class ReleaseReportOperator(AttemptOperator):
    """Build, write and store the release report of the attempt; link to its UI page.

    :param release: the release file (path/URI) the DAG produced
    :param sql_table: instead of ``release``, a release table on the SQL connection
        ``conn_id``: its groups are counted in its database (``GROUP BY``)
    :param manifest: path of the release's manifest (default: beside ``release``)
    :param report_path: where the report (``.html``) is written (default: beside
        ``release``; required with ``sql_table``)
    :param attempt: / :param attempt_task_id: the attempt (see :class:`AttemptOperator`);
        one of the two is required. When ``attempt_task_id`` pushed none (the attempt was
        never opened) the task says so and writes nothing
    :param sensitive: the release's sensitive column (default: its manifest's)
    :param group_columns: the columns defining its groups (default: its manifest's)
    :param c: the confidence line of the disclosure curve, in (0, 1]
    :param k_max: the curve's largest k (whole number, at most 1000)
    :param skyline_c: the confidence of the skyline staircase, in (0, 1]
    :param conn_id: the connection of URIs, or of ``sql_table``
    :param missing_as: count blank sensitive cells as this value (as the checks did);
        default: blank cells are bad input
    Also ``privacy_ledger_conn_id``. The trigger rule defaults to ``all_done``.

    Returns (XCom) the report envelope (step ``report``; ``outputs.report`` is the file,
    ``details.status`` the ledger's status). It fails, after writing and storing its report,
    whenever the ledger does not say this run's attempt was published (or was already
    published), and on its own errors. As a teardown (``report.as_teardown()``, the required
    use: the cluster policy refuses a gate without one) that failure fails the run.
    """

    #: derived from the step's declaration, plus the attempt
    template_fields: Sequence[str] = (*REPORT.template_fields(), "attempt")
    operator_extra_links = (ReleaseReportLink(),)
    ui_color = "#f3efe2"

    def __init__(
        self,
        *,
        release: str | None = None,
        sql_table: str | None = None,
        manifest: str | None = None,
        report_path: str | None = None,
        sensitive: str | None = None,
        group_columns: Sequence[str] | None = None,
        c: float | str | None = None,
        k_max: int | str | None = None,
        skyline_c: float | str | None = None,
        conn_id: str | None = None,
        missing_as: str | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("trigger_rule", "all_done")
        super().__init__(**kwargs)
        if self.attempt is None and self.attempt_task_id is None:
            from airflow_privacy.errors import InputError

            raise InputError("give attempt or attempt_task_id: the attempt to report")
        self.release = release
        self.sql_table = sql_table
        self.manifest = manifest
        self.report_path = report_path
        self.sensitive = sensitive
        self.group_columns = group_columns
        self.c = c
        self.k_max = k_max
        self.skyline_c = skyline_c
        self.conn_id = conn_id
        self.missing_as = missing_as
        self._check_at_parse_time()

    def as_teardown(
        self,
        *,
        setups: Any = None,
        on_failure_fail_dagrun: bool | None = None,
    ) -> ReleaseReportOperator:
        """A teardown of the gate whose failure fails the run (``on_failure_fail_dagrun``
        defaults to True here): the run's state then comes from the ledger."""
        super().as_teardown(
            setups=setups,
            on_failure_fail_dagrun=True
            if on_failure_fail_dagrun is None
            else on_failure_fail_dagrun,
        )
        return self

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it (:mod:`airflow_privacy.gate.steps.report`;
        :func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, REPORT, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.errors import InputError
        from airflow_privacy.providers.airflow import adapter
        from airflow_privacy.providers.airflow.operators.publish import failed_upstream

        try:
            attempt = adapter.attempt_of(self, context)
        except InputError:
            attempt = None
        if attempt is None:
            from airflow_privacy.gate.envelope import Envelope, failed_task_reasons

            failed = failed_upstream(self, context)
            reasons = failed_task_reasons(failed)
            env = Envelope(
                step="report", name=self.name, outcome="not-published", safe=False,
                summary="no report: no attempt was opened, so nothing was recorded or published",
                reasons=reasons,
            )  # fmt: skip
            self.log.warning("%s%s", env.summary, f" ({'; '.join(reasons)})" if reasons else "")
            data = env.to_dict()
            context["ti"].xcom_push(key=adapter.REPORT_KEY, value=data)
            self._fail_unless_published("not-published", [env.summary, *reasons])
            return data

        def service(ctx: Any, _attempt: str | None) -> Any:
            values = self.check_arguments(parsing=False)
            values.update(
                attempt=attempt, failed_tasks=failed_upstream(self, context), name=self.name
            )
            return REPORT.run(REPORT.request(values), ctx)

        data = adapter.execute(self, context, lambda ctx: service(ctx, attempt), "continue")
        attempt_uuid = (data.get("attempt") or {}).get("uuid")
        if attempt_uuid:
            url = attempt_page(str(attempt_uuid))
            context["ti"].xcom_push(key=URL_KEY, value=url)
            # the URL last on its line and nothing glued to it: a log viewer that turns URLs
            # into links takes a closing parenthesis or full stop for part of it (a 404)
            self.log.info("release report: %s", data["outputs"].get("report"))
            self.log.info("release report in the Airflow UI: %s", url)
        details = data.get("details") or {}
        self._fail_unless_published(str(details.get("status")), list(data.get("reasons") or []))
        return data

    def _fail_unless_published(self, status: str, reasons: Sequence[str]) -> None:
        """Fail the task when the ledger does not say this run's attempt was published: as
        the gate's teardown (``on_failure_fail_dagrun``) that fails the run, so the run's
        state is the ledger's whatever else the DAG holds."""
        if status == "published":
            return
        from airflow.sdk.exceptions import AirflowFailException

        from airflow_privacy.core.redaction import redact

        why = "; ".join(redact(str(r)) for r in reasons).rstrip(". ") or "no reason recorded"
        raise AirflowFailException(
            f"the release was not published ({status}): {why}. The run is red because the "
            "ledger does not say this run's attempt was published"
        )
