"""The report step, declared once (:class:`ReportStep`; ``airflow-privacy report`` and
``ReleaseReportOperator`` are derived from it): the HTML release report of an attempt, from
the ledger, or of check envelopes given (:func:`airflow_privacy.gate.report.run_report`
builds, writes and stores it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope
    from airflow_privacy.gate.report import ReportRequest


class ReportStep(Step):
    """``report``: the HTML release report (module doc)."""

    name = "report"
    summary = "write the HTML release report of an attempt or of checks"
    description = (
        "Write the self-contained HTML release report of RELEASE: the verdict, the criteria "
        "and their numbers, the disclosure-vs-k curve, the privacy skyline, the composition "
        "audit and MaxEnt posteriors, and the utility of the release. With --attempt "
        "everything comes from the ledger (the status is the ledger's: published only when "
        "the gate published it) and the report is stored there too; otherwise from --check "
        "files (the --format json output of check, maxent, audit): a look at the numbers, not "
        "a publication decision. Exit 0 = written and published (or every check passed); 1 = "
        "written, not published (or a check did not pass); 2 = bad input."
    )
    operator = "airflow_privacy.providers.airflow.operators.report.ReleaseReportOperator"
    fields = (
        Field(
            "release",
            "ref",
            "the release file (.csv[.gz] or .parquet) or SQL table (counted "
            "in its database; give the report's file and the manifest)",
            cli="RELEASE",
            required=True,
            variants=("sql_table",),
            type_hint="str | None",
            cli_note="table:NAME on --conn",
            airflow_note="exactly one of release and sql_table (with conn_id and report_path)",
        ),
        Field(
            "manifest",
            "text",
            "the release's manifest (default: RELEASE.manifest.json beside a file)",
            metavar="FILE",
            type_hint="str | None",
        ),
        Field(
            "attempt",
            "text",
            "the attempt whose report this is (its checks and status come from the ledger)",
            cli="--attempt",
            airflow=None,
            metavar="UUID",
        ),
        Field(
            "report-out",
            "text",
            "where to write the report, a name ending in .html "
            "(default: RELEASE.report.html beside the release; required for a SQL table)",
            cli="--out",
            airflow="report_path",
            metavar="FILE.html",
            type_hint="str | None",
        ),
        Field(
            "check",
            "values",
            "a report envelope saved with --format json by check, maxent "
            "or audit (not with --attempt); NAME is the text before the first '=' (it holds "
            "none), FILE the rest; default NAME: the envelope's own",
            cli="--check",
            airflow=None,
            default=(),
            metavar="[NAME=]FILE",
            dest="checks",
        ),
        shared.sensitive("the sensitive column (default: the manifest's)", required=False),
        Field(
            "group",
            "columns",
            "a column defining the groups (default: the manifest's)",
            cli="--group",
            airflow="group_columns",
            metavar="COL",
            dest="groups",
            type_hint="Sequence[str] | None",
        ),
        Field(
            "dataset",
            "label",
            "the dataset name shown (without an attempt)",
            airflow=None,
            metavar="NAME",
        ),
        Field(
            "version",
            "label",
            "the version label shown (without an attempt)",
            airflow=None,
            metavar="LABEL",
        ),
        Field(
            "c",
            "number",
            "the confidence line of the disclosure curve",
            metavar="C",
            low=0,
            high=1,
            open_low=True,
            type_hint="float | str | None",
        ),
        Field(
            "k_max",
            "whole",
            "the curve's largest k",
            cli="--k-max",
            metavar="K",
            low=0,
            high=1000,
            type_hint="int | str | None",
        ),
        Field(
            "skyline_c",
            "number",
            "the confidence of the skyline staircase",
            cli="--skyline-c",
            metavar="C",
            low=0,
            high=1,
            open_low=True,
            type_hint="float | str | None",
        ),
        shared.missing_as(" (as the checks did)"),
    )
    cli_groups = ("ledger", "input", "output")

    def rules(self, known: Known) -> None:
        attempt = known.get("attempt")
        if attempt and known.get("check"):
            raise InputError(
                f"{opt('check')} files and {opt('attempt')} do not mix: an attempt's checks "
                "are the ones recorded in the ledger"
            )
        if attempt and (known.get("dataset") or known.get("version")):
            raise InputError(
                f"{opt('dataset')} and {opt('version')} come from the ledger with {opt('attempt')}"
            )
        release = known.get("release")
        if (
            release is not None
            and release.is_table
            and known.has("report-out")
            and known["report-out"] is None
        ):
            raise InputError(
                f"{release.describe()} is a SQL table: give {opt('report-out')}, the file "
                "the report is written to"
            )

    def request(self, values: Mapping[str, Any]) -> ReportRequest:
        from airflow_privacy.gate.refs import ReleaseRef
        from airflow_privacy.gate.report import ReportRequest, checks_from_files

        out, manifest = values.get("report-out"), values.get("manifest")
        return ReportRequest(
            release=values["release"],
            attempt=values.get("attempt"),
            checks=checks_from_files(list(values.get("check") or ())),
            out=ReleaseRef(path=out) if out is not None else None,
            failed_tasks=dict(values.get("failed_tasks") or {}),
            sensitive=values.get("sensitive"),
            group_columns=values.get("group") or None,
            dataset=values.get("dataset"),
            version=values.get("version"),
            c=values.get("c"),
            k_max=values.get("k_max"),
            skyline_c=values.get("skyline_c"),
            ledger=values.get("ledger"),
            name=values.get("name") or "report",
            missing_as=values.get("missing_as"),
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
            manifest=ReleaseRef(path=manifest) if manifest is not None else None,
        )

    def run(self, req: ReportRequest, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.report import run_report

        self.check(
            Known(
                {
                    "attempt": req.attempt, "check": list(req.checks), "dataset": req.dataset,
                    "version": req.version, "release": req.release, "report-out": req.out,
                }
            )
        )  # fmt: skip
        return run_report(req, ctx)


REPORT = ReportStep()
