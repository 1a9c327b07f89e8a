"""``BucketizeOperator`` and ``AnonymizeLatticeOperator``: produce the release.

Thin wrappers over :func:`airflow_privacy.core.anonymize.anonymize`. The input and output
travel by reference (path, URI or SQL table); the release is written next to its manifest
(``<release>.manifest.json``), and XCom carries only a small report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from airflow.sdk import BaseOperator

from airflow_privacy.errors import InputError
from airflow_privacy.providers.airflow.sources import ReleaseRef, read_table, write_table
from airflow_privacy.providers.airflow.verdict import coerce, fail_on_input_error


def manifest_path_for(release: str) -> str:
    """Where the manifest of a release written to ``release`` goes."""
    return f"{release}.manifest.json"


class _AnonymizeBase(BaseOperator):
    template_fields: Sequence[str] = (
        "source",
        "source_table",
        "source_conn_id",
        "release",
        "release_conn_id",
        "qis",
        "sensitive",
        "criteria",
        "hierarchies",
        "seed",
    )
    template_fields_renderers: ClassVar[dict[str, str]] = {"criteria": "json"}
    method: ClassVar[str] = ""

    def __init__(
        self,
        *,
        release: str,
        qis: Sequence[str],
        sensitive: str,
        criteria: Sequence[Mapping[str, Any]],
        source: str | None = None,
        source_table: str | None = None,
        source_conn_id: str | None = None,
        release_conn_id: str | None = None,
        hierarchies: Mapping[str, str] | None = None,
        seed: int | str = 0,
        method_options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.source = source
        self.source_table = source_table
        self.source_conn_id = source_conn_id
        self.release = release
        self.release_conn_id = release_conn_id
        self.qis = list(qis)
        self.sensitive = sensitive
        self.criteria = [dict(c) for c in criteria]
        self.hierarchies = dict(hierarchies or {})
        self.seed = seed
        self.method_options = dict(method_options or {})
        if not self.criteria:
            raise ValueError("criteria is empty: name at least one criterion the release must meet")

    def _method(self) -> str:
        return self.method

    def execute(self, context: Any) -> dict[str, Any]:
        try:
            return self._run()
        except InputError as exc:
            raise fail_on_input_error(exc) from exc

    def _run(self) -> dict[str, Any]:
        from airflow_privacy.core.anonymize import anonymize
        from airflow_privacy.core.criteria.registry import validate
        from airflow_privacy.core.hierarchy import Hierarchy
        from airflow_privacy.serialization import json_safe

        criteria: list[tuple[str, dict[str, Any]]] = []
        for item in self.criteria:
            spec = coerce(dict(item))
            name = spec.pop("name", None)
            if not isinstance(name, str):
                raise InputError(f"criterion {item!r} has no 'name'")
            criteria.append((name, validate(name, spec)))
        hierarchies = {
            col: Hierarchy.from_arx_csv(path, col) for col, path in self.hierarchies.items()
        }
        source = ReleaseRef(self.source, self.source_conn_id, self.source_table)
        table = read_table(source)
        self.log.info("anonymizing %s (%d records) by %s", source.describe(),
                      table.num_rows, self._method())  # fmt: skip
        result = anonymize(
            table,
            self.qis,
            self.sensitive,
            method=self._method(),  # type: ignore[arg-type]
            criteria=criteria,
            hierarchies=hierarchies,
            seed=int(coerce(self.seed)),
            **coerce(self.method_options),
        )
        written = write_table(result.release, ReleaseRef(self.release, self.release_conn_id))
        manifest = json_safe(result.manifest.to_dict())
        manifest_ref = manifest_path_for(written)
        if "://" in written:
            from airflow.sdk import ObjectStoragePath

            ObjectStoragePath(manifest_ref, conn_id=self.release_conn_id).write_text(
                json.dumps(manifest, indent=2)
            )
        else:
            tmp = Path(manifest_ref + ".tmp")
            tmp.write_text(json.dumps(manifest, indent=2))
            tmp.replace(manifest_ref)
        self.log.info("release written to %s (%d records), manifest %s", written,
                      result.release.num_rows, manifest_ref)  # fmt: skip
        report: dict[str, Any] = {
            "check": type(self).__name__,
            "safe": True,
            "release": written,
            "manifest": manifest_ref,
            "group_columns": list(result.group_columns),
            "sensitive": self.sensitive,
            "records": result.release.num_rows,
            "method": self._method(),
        }
        return report


class BucketizeOperator(_AnonymizeBase):
    """Anatomy-style bucketization: QIs published exactly, plus a bucket id whose sensitive
    values are diverse enough for ``criteria`` (any ``airflow-privacy check`` criterion).

    :param source: path/URI of the input table (or ``source_table`` + ``source_conn_id``)
    :param release: path/URI of the release to write (CSV or Parquet by extension)
    :param qis: quasi-identifier columns; :param sensitive: the sensitive column
    :param criteria: ``[{"name": "ck-safety", "c": 0.7, "k": 3}, ...]``, all must hold
    :param seed: makes the bucketization deterministic
    :param method_options: further options of the bucketizer
    """

    method = "bucketize"


class AnonymizeLatticeOperator(_AnonymizeBase):
    """Full-domain generalization over hierarchies (``method="lattice"``, the least-distorted
    minimal node that meets every criterion) or Mondrian multidimensional partitioning
    (``method="mondrian"``).

    :param hierarchies: ``{column: path of an ARX hierarchy CSV}`` for the QI columns
    :param method: ``lattice`` (default) or ``mondrian``
    Other parameters as :class:`BucketizeOperator`.
    """

    template_fields: Sequence[str] = (*_AnonymizeBase.template_fields, "method_name")

    def __init__(self, *, method: str = "lattice", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if "{{" not in method and method not in ("lattice", "mondrian"):  # unless templated
            raise ValueError(f"method must be 'lattice' or 'mondrian', got {method!r}")
        self.method_name = method

    def _method(self) -> str:
        if self.method_name not in ("lattice", "mondrian"):
            raise InputError(f"method must be 'lattice' or 'mondrian', got {self.method_name!r}")
        return self.method_name
