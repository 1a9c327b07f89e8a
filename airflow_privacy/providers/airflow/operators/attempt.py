"""``OpenAttemptOperator``: the first step of a gated release: record the candidate and open
an attempt to publish it, naming the checks that must pass.

An adapter over :func:`airflow_privacy.gate.attempts.open_attempt`, the service behind
``airflow-privacy attempt``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.providers.airflow.operators.base import LedgerOperator
from airflow_privacy.providers.airflow.params import Args, label


class OpenAttemptOperator(LedgerOperator):
    """Open an attempt to publish ``release`` as a version of ``dataset``.

    :param release: path/URI of the candidate release (its manifest beside it names the QIs
        and the sensitive column)
    :param dataset: the dataset (the series of releases of one population)
    :param required_checks: the names of the checks that must be recorded and pass before
        the gate publishes (the ``check_name`` of each check operator, by default its task
        id), e.g. ``["check_safety", "maxent_risk", "composition_audit"]``; no name twice
    :param version: the version label, text (``3`` is refused: write ``"3"``; default: the
        dataset's next number, also when a template renders it empty)
    :param first_release: declare this the dataset's first release: the ledger may be
        created, and the composition audit has nothing to intersect with. Without it, a
        dataset with no published release (a typo in its name) or a ledger that does not
        exist (a typo in its location) is bad input. With it, a dataset that has published
        releases is bad input.
    :param population: the candidate's original records (path/URI): with ``id_column`` the
        keyed hashes of its people are stored, so that a later audit can use
        ``overlap="known"``
    :param id_column: the identifier column of ``population``
    :param sql_table: instead of ``release``, a release table on the SQL connection
        ``conn_id`` (one written by an anonymize operator's ``release_table``): its groups are
        counted in its database and its content digest is that of its rows as a multiset
    :param manifest: path of the release's manifest (default: beside ``release``; needed
        with ``sql_table`` unless the columns are known otherwise)
    :param conn_id: the connection of URIs, or of ``sql_table``
    Also ``privacy_ledger_conn_id`` (see :class:`LedgerOperator`).

    Returns (XCom) the report envelope (step ``attempt``); ``attempt.uuid`` names the
    attempt for the checks (``attempt_task_id=<this task>``), the gate and the report. When
    the content was published before, the outcome is ``already-published`` and every later
    step says so without checking or publishing again.
    """

    template_fields: Sequence[str] = (
        "release", "dataset", "version", "first_release", "population", "id_column",
        "sql_table", "manifest",
    )  # fmt: skip
    ui_color = "#eef0fb"
    blank_means_default = frozenset({"version"})

    def __init__(
        self,
        *,
        dataset: str,
        required_checks: Sequence[str],
        release: str | None = None,
        sql_table: str | None = None,
        manifest: str | None = None,
        version: str | None = None,
        first_release: bool | str = False,
        population: str | None = None,
        id_column: str | None = None,
        conn_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.release = release
        self.sql_table = sql_table
        self.manifest = manifest
        self.dataset = dataset
        self.required_checks = required_checks
        self.version = version
        self.first_release = first_release
        self.population = population
        self.id_column = id_column
        self.conn_id = conn_id
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument (:meth:`PrivacyOperator.check_arguments`)."""
        from airflow_privacy.errors import InputError

        a = Args(self, parsing)
        out = {
            "release": a.text("release", optional=True),
            "sql_table": a.text("sql_table", optional=True),
            "manifest": a.text("manifest", optional=True),
            "dataset": a.label("dataset"),
            "required_checks": a.names("required_checks", noun="check name", unique=True),
            "version": a.label("version", optional=True),
            "first_release": a.flag("first_release"),
            "population": a.text("population", optional=True),
            "id_column": a.text("id_column", optional=True),
            "conn_id": a.text("conn_id", optional=True),
        }
        for check in out["required_checks"] if isinstance(out["required_checks"], list) else ():
            label(check, f"required_checks: {check[:40]!r}")
        if (self.population is None) != (self.id_column is None):
            raise InputError("population and id_column go together")
        if (self.release is None) == (self.sql_table is None):
            raise InputError("give exactly one of release and sql_table")
        if self.sql_table is not None and self.conn_id is None:
            raise InputError("sql_table needs conn_id: the SQL connection of the table")
        return out

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.attempts import AttemptRequest, open_attempt
        from airflow_privacy.gate.refs import ReleaseRef

        def service(ctx: Any) -> Any:
            a = self.check_arguments(parsing=False)
            pop = a["population"]
            return open_attempt(
                AttemptRequest(
                    release=(
                        ReleaseRef(sql_table=a["sql_table"], conn=a["conn_id"])
                        if a["sql_table"] is not None
                        else ReleaseRef(path=a["release"], conn=a["conn_id"])
                    ),
                    manifest=ReleaseRef(path=a["manifest"]) if a["manifest"] else None,
                    dataset=a["dataset"],
                    required=a["required_checks"],
                    version=a["version"],
                    first_release=a["first_release"],
                    population=ReleaseRef(path=pop, conn=a["conn_id"]) if pop else None,
                    id_column=a["id_column"],
                    name=self.name,
                ),
                ctx,
            )

        return self.run_service(context, service)
