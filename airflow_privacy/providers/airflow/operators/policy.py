"""``DatasetPolicyOperator``: record a new version of a dataset's policy (what every release
must pass), or approve / reject a proposed one, from a DAG: an officer's own DAG, or a
ledger-administration DAG. An adapter over :mod:`airflow_privacy.gate.policy`, the service
behind ``airflow-privacy policy``; the arguments of ``action="set"`` are checked as the
step declares them (:class:`airflow_privacy.gate.steps.policy.PolicyStep`).

A change that loosens the policy in force is *proposed*: the task fails (``on_unsafe``
semantics do not apply: nothing is in force until a second person approves it), and a
second, different person approves it with ``action="approve"`` (or ``airflow-privacy policy
approve``). The task's user is ``by`` (default: the task id, which is rarely a person: name
the person).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow_privacy.gate.steps.policy import POLICY
from airflow_privacy.providers.airflow.operators.base import LedgerOperator

ACTIONS = ("set", "approve", "reject")


class DatasetPolicyOperator(LedgerOperator):
    """Set, approve or reject a version of a dataset's policy (docs/policy.md).

    :param dataset: the dataset the policy governs
    :param reason: why (kept with the version)
    :param action: ``set`` (default: record a new version), ``approve`` or ``reject`` (a
        proposed ``version``; never by its proposer)
    :param version: the proposed version to approve or reject
    :param criteria: criteria every release must pass with their minimum parameters
        (``["k-anonymity:k=5", ...]``)
    :param composition_measure: / :param confidence: / :param max_pvp: / :param overlap:
        the composition audit's line (measure, largest confidence, largest share pinned in
        percent, worst-case or known overlap)
    :param maxent_c: MaxEnt's largest posterior
    :param benign_values: sensitive values a check may declare benign
    :param approvers: who may approve a loosening change
    :param max_prosecutor_risk: the highest prosecutor risk a release may have on its QIs
        (default: identity disclosure accepted)
    :param required_steps: kinds of check every release must have passed, whatever the DAG
        names them (``["audit"]``: a composition audit; also ``check``, ``maxent``, ``risk``,
        ``validate``)
    :param dp_rho_cap: the privacy budget of the dataset's differentially private releases,
        their total zCDP loss rho, never reset (default: no DP release; raising it, or
        setting it where there was none, loosens the policy)
    :param dp_epsilon_cap: instead of ``dp_rho_cap``, the budget as a total pure-DP epsilon
        (its DP releases use the Laplace mechanism)
    :param new_dataset: the dataset's name again, for a new name close to a known one
    :param by: who sets or decides it (a person's name)
    Also ``privacy_ledger_conn_id``.

    Returns (XCom) the report envelope (step ``policy``; outcome ``recorded``, ``proposed``
    or ``rejected``; ``details.policy`` the version). A proposed or rejected version fails
    the task (it is not in force).
    """

    #: derived from the step's declaration
    template_fields: Sequence[str] = (*POLICY.template_fields(), "version")
    ui_color = "#e8f4ea"

    def __init__(
        self,
        *,
        dataset: str,
        reason: str,
        action: str = "set",
        version: int | str | None = None,
        criteria: Sequence[str] | None = None,
        composition_measure: str | None = None,
        confidence: float | str | None = None,
        max_pvp: float | str | None = None,
        overlap: str = "worst-case",
        maxent_c: float | str | None = None,
        benign_values: Sequence[str] | None = None,
        approvers: Sequence[str] | None = None,
        max_prosecutor_risk: float | str | None = None,
        required_steps: Sequence[str] | None = None,
        dp_rho_cap: float | str | None = None,
        dp_epsilon_cap: float | str | None = None,
        new_dataset: str | None = None,
        by: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        from airflow_privacy.errors import InputError

        if action not in ACTIONS:
            raise InputError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
        if (action == "set") != (version is None):
            raise InputError(
                "version goes with action approve or reject (the proposed version), and only "
                "with them"
            )
        self.action = action
        self.version = version
        self.dataset = dataset
        self.reason = reason
        self.criteria = criteria
        self.composition_measure = composition_measure
        self.confidence = confidence
        self.max_pvp = max_pvp
        self.overlap = overlap
        self.maxent_c = maxent_c
        self.benign_values = benign_values
        self.approvers = approvers
        self.max_prosecutor_risk = max_prosecutor_risk
        self.required_steps = required_steps
        self.dp_rho_cap = dp_rho_cap
        self.dp_epsilon_cap = dp_epsilon_cap
        self.new_dataset = new_dataset
        self.by = by
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares it (:mod:`airflow_privacy.gate.steps.policy`;
        :func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps
        from airflow_privacy.providers.airflow.params import Args

        values = steps.check_arguments(self, POLICY, parsing)
        if self.action != "set":
            values["version"] = Args(self, parsing).whole("version", 1, 2**31 - 1)
        return values

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.policy import decide_policy

        def service(ctx: Any) -> Any:
            values = self.check_arguments(parsing=False)
            values["by"] = values.get("by") or self.task_id
            values["ledger"] = None
            if self.action == "set":
                env = POLICY.run(POLICY.request(values), ctx)
            else:
                env = decide_policy(
                    values["dataset"], int(values["version"]), approve=self.action == "approve",
                    by=values["by"], reason=values["reason"], ctx=ctx,
                )  # fmt: skip
            if env.outcome in ("proposed", "rejected"):
                from airflow_privacy.errors import ReleaseBlocked

                raise ReleaseBlocked(f"{env.summary}: not in force", env)
            return env

        return self.run_service(context, service)
