"""OpenLineage facets of the provider's tasks (when ``apache-airflow-providers-openlineage``
is installed; ``pip install 'airflow-privacy[lineage]'``).

Airflow's OpenLineage listener asks each finished task for its lineage
(``get_openlineage_facets_on_complete`` / ``_on_failure``, :class:`~airflow_privacy.
providers.airflow.operators.base.PrivacyOperator`); the answer is built here from the
task's report envelope, the same one the task pushed to XCom:

* **inputs**: the release the step read (for the gate, the attempt's release), with the
  data-quality assertions facet: one assertion per criterion the step evaluated (a check's
  results; for the gate, every criterion its attempt's checks passed, plus the gate's own
  verdict), each with its parameters as the expected value, as common-sql's check operators
  report theirs. No measured value is given (``actual`` stays empty): nothing of the data;
* **outputs**: what the step wrote (an anonymized release, the noisy counts of a DP
  release, the published copy) with the column lineage facet: each quasi-identifier
  generalized (masked: a ``DIRECT`` / ``TRANSFORMATION`` with ``masking: true``), the
  sensitive column copied (``IDENTITY``);
* **run facet** ``airflowPrivacy``: the step, its outcome and verdict, and the ledger's ids
  (dataset, version, attempt, release), never a value of the data.

Dataset names follow OpenLineage's naming: a local path is namespace ``file`` and its
absolute path; a URI ``s3://bucket/key`` is namespace ``s3://bucket`` and ``key`` (without
any user or password); a SQL table is namespace ``sql`` and its name; a Spark table
namespace ``spark``.

Nothing of OpenLineage is imported unless its provider is installed and the listener asks:
every import is inside the functions, and without the provider the methods return None.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

RUN_FACET = "airflowPrivacy"
SCHEMA_URL = "https://github.com/airflow-privacy/airflow-privacy/blob/main/docs/lineage.md"


def dataset_name(ref: str) -> tuple[str, str]:
    """``(namespace, name)`` of a release reference as envelopes describe it (module doc)."""
    if ref.startswith("table:"):
        return "sql", ref[len("table:") :]
    if ref.startswith("spark:"):
        return "spark", ref[len("spark:") :]
    parts = urlsplit(ref)
    if parts.scheme and len(parts.scheme) > 1 and parts.netloc:
        host = parts.hostname or ""
        if parts.port is not None:
            host += f":{parts.port}"
        return f"{parts.scheme}://{host}", parts.path.lstrip("/") or "/"
    if parts.scheme == "file":
        return "file", parts.path
    return "file", os.path.abspath(ref)


def _part(envelope: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``envelope[key]`` when it is a mapping, else an empty one."""
    value = envelope.get(key)
    return value if isinstance(value, Mapping) else {}


def _run_facet_class() -> Any:
    import attr
    from openlineage.client.generated.base import RunFacet

    @attr.define
    class AirflowPrivacyRunFacet(RunFacet):
        """The verdict of a privacy step and the ledger's ids (module doc)."""

        step: str
        outcome: str
        safe: bool | None
        name: str | None = attr.field(default=None)
        dataset: str | None = attr.field(default=None)
        version: str | None = attr.field(default=None)
        attempt: str | None = attr.field(default=None)
        release_uuid: str | None = attr.field(default=None)
        release_id: int | None = attr.field(default=None)
        policy_version: int | None = attr.field(default=None)

        @staticmethod
        def _get_schema() -> str:
            return SCHEMA_URL

    return AirflowPrivacyRunFacet


def _assertions(envelope: Mapping[str, Any]) -> list[tuple[str, bool, str | None, str]]:
    """``(criterion, success, expected, description)`` of each criterion the step
    evaluated."""
    out: list[tuple[str, bool, str | None, str]] = []
    for r in envelope.get("results") or []:
        if not isinstance(r, Mapping) or not r.get("criterion"):
            continue
        params = _part(r, "parameters")
        expected = ",".join(f"{k}={v}" for k, v in sorted(params.items())) or None
        out.append((str(r["criterion"]), r.get("safe") is True, expected,
                    str(r.get("label") or r["criterion"])))  # fmt: skip
    details = _part(envelope, "details")
    if envelope.get("step") == "publish":
        for text in details.get("criteria") or []:  # what the attempt's passed checks showed
            name, _, expected = str(text).partition(":")
            out.append((name, True, expected or None, f"{text} (passed by the attempt)"))
        if details.get("dp"):
            out.append(("dp-budget", True, None, "the DP release's spend fits the budget"))
    if envelope.get("step") in ("publish", "dp-release") or not out:
        out.append((f"privacy:{envelope.get('step')}", envelope.get("safe") is True, None,
                    str(envelope.get("summary") or "")[:500]))  # fmt: skip
    return out


def _outputs(envelope: Mapping[str, Any]) -> list[str]:
    details = _part(envelope, "details")
    outputs = _part(envelope, "outputs")
    found: list[str] = []
    if envelope.get("step") == "publish" and envelope.get("outcome") in (
        "published", "already-published"
    ):  # fmt: skip
        where = details.get("destination")  # where the ledger says the copy went
        if isinstance(where, str) and where:
            found.append(where)
    written = outputs.get("release")
    if isinstance(written, str) and written and envelope.get("step") != "publish":
        found.append(written)
    return found


def operator_lineage(envelope: Mapping[str, Any] | None) -> Any:
    """The ``OperatorLineage`` of a task that produced ``envelope`` (module doc); None
    without the OpenLineage provider or without an envelope (the task failed before its
    step ran)."""
    if not envelope:
        return None
    try:
        from airflow.providers.openlineage.extractors import OperatorLineage
        from openlineage.client.generated import column_lineage_dataset as cl
        from openlineage.client.generated import data_quality_assertions_dataset as dq
        from openlineage.client.generated.base import InputDataset, OutputDataset
    except ImportError:
        return None
    release = _part(envelope, "release")
    attempt = _part(envelope, "attempt")
    details = _part(envelope, "details")
    inputs = []
    source: tuple[str, str] | None = None
    if isinstance(release.get("ref"), str) and release.get("ref"):
        source = dataset_name(str(release["ref"]))
        assertions = [
            dq.Assertion(assertion=name, success=ok, column=None, severity="error",
                         name=name, description=description, expected=expected)
            for name, ok, expected, description in _assertions(envelope)
        ]  # fmt: skip
        inputs.append(InputDataset(
            namespace=source[0], name=source[1],
            inputFacets={"dataQualityAssertions":
                         dq.DataQualityAssertionsDatasetFacet(assertions=assertions)},
        ))  # fmt: skip
    qis = [str(c) for c in release.get("group_columns") or []]
    sensitive = release.get("sensitive")
    outputs = []
    for target in _outputs(envelope):
        namespace, name = dataset_name(target)
        facets: dict[str, Any] = {}
        if source is not None and (qis or sensitive):
            facets["columnLineage"] = _column_lineage(cl, source, qis, sensitive)
        outputs.append(OutputDataset(namespace=namespace, name=name, facets=facets))
    facet = _run_facet_class()(
        step=str(envelope.get("step")), outcome=str(envelope.get("outcome")),
        safe=envelope.get("safe"), name=envelope.get("name"),
        dataset=attempt.get("dataset") or details.get("dataset"),
        version=attempt.get("version"), attempt=attempt.get("uuid"),
        release_uuid=attempt.get("release_uuid"), release_id=attempt.get("release_id"),
        policy_version=details.get("policy_version"),
    )  # fmt: skip
    return OperatorLineage(inputs=inputs, outputs=outputs, run_facets={RUN_FACET: facet})


def _column_lineage(cl: Any, source: tuple[str, str], qis: Sequence[str], sensitive: Any) -> Any:
    """Each QI generalized (masked), the sensitive column copied."""
    fields: dict[str, Any] = {}
    for column in qis:
        fields[column] = cl.Fields(
            inputFields=[cl.InputField(
                namespace=source[0], name=source[1], field=column,
                transformations=[cl.Transformation(
                    type="DIRECT", subtype="TRANSFORMATION", masking=True,
                    description="generalized quasi-identifier",
                )],
            )],
            transformationDescription="generalized quasi-identifier",
            transformationType="MASKED",
        )  # fmt: skip
    if isinstance(sensitive, str) and sensitive and sensitive not in fields:
        fields[sensitive] = cl.Fields(
            inputFields=[cl.InputField(
                namespace=source[0], name=source[1], field=sensitive,
                transformations=[cl.Transformation(type="DIRECT", subtype="IDENTITY",
                                                   masking=False)],
            )],
            transformationDescription="copied", transformationType="IDENTITY",
        )  # fmt: skip
    return cl.ColumnLineageDatasetFacet(fields=fields)
