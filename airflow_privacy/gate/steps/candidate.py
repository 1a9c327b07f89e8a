"""The fields that say how a release file is published (its sensitive column, its
quasi-identifiers, its kind, its bucket column, its manifest), shared by the steps that read a
candidate release (attempt, audit); by default each comes from the anonymizer's manifest
beside the release (:func:`airflow_privacy.gate.attempts.read_candidate`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.vocabulary import RELEASE_KINDS


def candidate_fields(what: str, *, airflow: frozenset[str] = frozenset()) -> tuple[Field, ...]:
    """The description fields of ``what`` (the release, the candidate); ``airflow`` names
    those the step's operator takes too."""

    def arg(key: str, name: str = "") -> str | None:
        return name if key in airflow else None

    return (
        Field(
            "sensitive",
            "column",
            f"the sensitive column of {what} (default: from its manifest)",
            metavar="COL",
            airflow=arg("sensitive", "sensitive"),
            templated=False,
            type_hint="str | None",
        ),
        Field(
            "qi",
            "columns",
            f"a quasi-identifier column of {what} (default: from its manifest)",
            cli="--qi",
            airflow=arg("qi", "qis"),
            metavar="COL",
            dest="qis",
            templated=False,
            type_hint="list[str] | None",
        ),
        Field(
            "kind",
            "choice",
            "generalized: groups are the distinct QI labels (intervals, "
            "masks, hierarchy labels, *); bucketized: exact QIs plus a bucket id (Anatomy); "
            "microaggregated: QIs are group centroids (default: from the manifest's method, "
            "else generalized)",
            airflow=arg("kind", "kind"),
            choices=RELEASE_KINDS,
        ),
        Field(
            "bucket",
            "column",
            "the bucket id column of a bucketized release",
            cli="--bucket",
            airflow=arg("bucket", "bucket_column"),
            metavar="COL",
        ),
        Field(
            "manifest",
            "text",
            "the anonymizer's manifest (JSON; default: RELEASE.manifest.json when present)",
            airflow=arg("manifest", "manifest"),
            metavar="FILE",
            type_hint="str | None",
        ),
    )


def candidate_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The request's description fields from the checked values (a manifest is a file)."""
    from airflow_privacy.gate.refs import ReleaseRef

    manifest = values.get("manifest")
    return {
        "qis": values.get("qi") or None,
        "sensitive": values.get("sensitive"),
        "kind": values.get("kind"),
        "bucket": values.get("bucket"),
        "manifest": ReleaseRef(path=manifest) if manifest is not None else None,
    }
