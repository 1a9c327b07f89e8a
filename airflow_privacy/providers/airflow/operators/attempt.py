"""``OpenAttemptOperator``: the first step of a gated release: record the candidate and open
an attempt to publish it, naming the checks that must pass.

Its arguments are checked as the step declares them
(:class:`airflow_privacy.gate.steps.attempt.AttemptStep`), the declaration behind
``airflow-privacy attempt``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.gate.steps.attempt import ATTEMPT
from airflow_privacy.providers.airflow.operators.base import LedgerOperator


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
    :param new_dataset: with ``first_release``, the dataset's name repeated: confirms a new
        dataset whose name is close to one the ledger knows (``adlut`` beside ``adult`` is
        refused as a typo without it)
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

    #: derived from the step's declaration
    template_fields: Sequence[str] = ATTEMPT.template_fields()
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
        new_dataset: str | None = None,
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
        self.new_dataset = new_dataset
        self.population = population
        self.id_column = id_column
        self.conn_id = conn_id
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it (:mod:`airflow_privacy.gate.steps.attempt`;
        :func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, ATTEMPT, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.providers.airflow import steps

        return steps.execute(self, ATTEMPT, context)
