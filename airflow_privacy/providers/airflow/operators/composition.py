"""``CompositionAuditOperator``: the intersection attack against every earlier release.

A thin wrapper over :func:`airflow_privacy.ledger.audit.run_audit` (Ganta et al. 2008): the
candidate is located, person by person, in every published release of the ledger (through
:class:`PrivacyLedgerHook`) and intersected; PVP_C above the limit blocks publication.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from airflow.sdk import BaseOperator

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.hooks.ledger import DEFAULT_CONN_ID, PrivacyLedgerHook
from airflow_privacy.providers.airflow.verdict import (
    check_on_unsafe,
    coerce,
    enforce,
    fail_on_input_error,
)


class CompositionAuditOperator(BaseOperator):
    """Audit a candidate release against the published releases in the ledger.

    :param candidate: path of the candidate release (its ``.manifest.json`` beside it names
        the QIs and the sensitive column; else give ``qis``, ``sensitive``)
    :param population: the candidate's original records (exact QI values), needed unless the
        candidate is bucketized
    :param datasets: datasets whose published releases count as earlier releases (default:
        all)
    :param prior_files: further earlier releases as files
    :param confidence: the confidence C of PVP_C (default 1: perfect breaches)
    :param max_pvp: the largest tolerated PVP_C in percent (default 0: any breach blocks)
    :param measure: ``ganta`` (C_i = 1/|S_i|) or ``posterior`` (frequency-aware)
    :param overlap: ``worst-case`` (everyone locatable is present) or ``known`` (identifier
        hashes, with ``id_column``)
    :param hierarchies: ``{column: ARX hierarchy CSV}`` to locate hierarchy labels
    :param record_as: when set, record the candidate in the ledger under this dataset name
        (status ``candidate``, or ``blocked`` with the reason); its id is in the report
    :param version: the version label to record it under
    :param privacy_ledger_conn_id: the ledger connection (default: a SQLite file under
        AIRFLOW_HOME)
    :param on_unsafe: ``fail`` (default), ``skip`` or ``continue``
    """

    template_fields: Sequence[str] = (
        "candidate",
        "population",
        "datasets",
        "prior_files",
        "confidence",
        "max_pvp",
        "record_as",
        "version",
        "hierarchies",
    )

    def __init__(
        self,
        *,
        candidate: str,
        population: str | None = None,
        qis: Sequence[str] | None = None,
        sensitive: str | None = None,
        datasets: Sequence[str] | None = None,
        prior_files: Sequence[str] | None = None,
        confidence: float | str = 1.0,
        max_pvp: float | str = 0.0,
        measure: str = "ganta",
        overlap: str = "worst-case",
        id_column: str | None = None,
        hierarchies: Mapping[str, str] | None = None,
        record_as: str | None = None,
        version: str | None = None,
        privacy_ledger_conn_id: str = DEFAULT_CONN_ID,
        on_unsafe: str = "fail",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.candidate = candidate
        self.population = population
        self.qis = list(qis) if qis else None
        self.sensitive = sensitive
        self.datasets = list(datasets) if datasets else None
        self.prior_files = list(prior_files) if prior_files else None
        self.confidence = confidence
        self.max_pvp = max_pvp
        self.measure = measure
        self.overlap = overlap
        self.id_column = id_column
        self.hierarchies = dict(hierarchies or {})
        self.record_as = record_as
        self.version = version
        self.privacy_ledger_conn_id = privacy_ledger_conn_id
        self.on_unsafe = check_on_unsafe(on_unsafe)

    def execute(self, context: Any) -> dict[str, Any]:
        try:
            report = self._run()
        except InputError as exc:
            raise fail_on_input_error(exc) from exc
        return enforce(report, self.on_unsafe, context)

    def _run(self) -> dict[str, Any]:
        from airflow_privacy.core.hierarchy import Hierarchy
        from airflow_privacy.ledger.audit import AuditRequest, run_audit
        from airflow_privacy.serialization import json_safe

        hierarchies = {c: Hierarchy.from_arx_csv(p, c) for c, p in self.hierarchies.items()}
        req = AuditRequest(
            candidate=self.candidate,
            population=self.population,
            qis=self.qis,
            sensitive=self.sensitive,
            datasets=self.datasets,
            prior_files=self.prior_files,
            overlap=self.overlap,  # type: ignore[arg-type]
            id_column=self.id_column,
            hierarchies=hierarchies,
            confidence=float(coerce(self.confidence)),
            max_pvp=float(coerce(self.max_pvp)),
            measure=self.measure,  # type: ignore[arg-type]
        )
        with PrivacyLedgerHook(self.privacy_ledger_conn_id).get_conn() as ledger:
            published = ledger.list(status="published", datasets=self.datasets)
            if not published and not self.prior_files:
                self.log.info("no earlier published release: nothing to intersect")
                report: dict[str, Any] = {
                    "check": type(self).__name__,
                    "safe": True,
                    "reasons": [],
                    "priors": [],
                    "summary": "no earlier published release in the ledger",
                }
                if self.record_as:
                    report["release_id"] = self._record(ledger, None)
                return report
            audit = run_audit(req, ledger, lambda msg: self.log.info("%s", msg))
            verdict = audit.verdict
            self.log.info("composition: %s", verdict.reason)
            report = json_safe(
                {
                    "check": type(self).__name__,
                    "safe": verdict.safe,
                    "reasons": [] if verdict.safe else [f"composition: {verdict.reason}"],
                    "verdict": verdict.to_dict(),
                    "pvp": audit.result.pvp_table(),
                    "worst": [_pseudonymous(b) for b in audit.result.worst],
                    "priors": audit.sources,
                    "summary": verdict.reason,
                }
            )
            if self.record_as:
                report["release_id"] = self._record(ledger, audit)
        return report

    def _record(self, ledger: Any, audit: Any) -> int:
        """Record the candidate as ``candidate`` (or ``blocked`` with the audit's reason)."""
        from airflow_privacy.core.composition.files import read_release_file

        cand = audit.cand if audit is not None else read_release_file(self.candidate)
        safe = audit is None or audit.verdict.safe
        criteria = list((cand.manifest or {}).get("criteria_results") or [])
        if audit is not None:
            criteria.append(audit.verdict.to_dict())
        info = ledger.record(
            self.record_as,
            cand.release,
            version=self.version or None,
            status="candidate" if safe else "blocked",
            spec=cand.spec(),
            manifest=cand.manifest,
            criteria=criteria,
            reasons=[] if safe else [audit.verdict.reason],
        )
        self.log.info("recorded in the ledger as release #%d (%s)", info.id, info.status)
        return int(info.id)


def _pseudonymous(breach: Any) -> dict[str, Any]:
    """A worst individual for XCom and the report: the row number, how sure the attack is and
    which releases combine; never the person's QI values or the sensitive values left."""
    return {
        "row": breach.row,
        "confidence": breach.confidence,
        "posterior": breach.posterior,
        "ea_hat": breach.ea_hat,
        "anon_drop": breach.anon_drop,
        "releases": [{"release": r.get("release"), "ea": r.get("ea")} for r in breach.releases],
    }
