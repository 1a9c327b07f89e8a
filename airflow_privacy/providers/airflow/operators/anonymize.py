"""``BucketizeOperator`` and ``AnonymizeLatticeOperator``: produce the release.

Adapters over :func:`airflow_privacy.gate.anonymize.run_anonymize`, the service behind
``airflow-privacy anonymize``: the input and output travel by reference (path, URI or SQL
table), the release is written with its manifest beside it (``<release>.manifest.json``) in
one atomic step, and XCom carries the report envelope (``outputs.release`` is where the
release went).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from airflow_privacy.providers.airflow.operators.base import PrivacyOperator
from airflow_privacy.providers.airflow.params import (
    choice,
    columns,
    mapping,
    templated,
    text,
    whole,
)

METHODS = ("lattice", "mondrian")


class _AnonymizeBase(PrivacyOperator):
    template_fields: Sequence[str] = (
        "source", "source_table", "source_conn_id", "release", "release_conn_id", "qis",
        "sensitive", "criteria", "hierarchies", "seed", "missing_as",
    )  # fmt: skip
    template_fields_renderers: ClassVar[dict[str, str]] = {"criteria": "json"}
    method: ClassVar[str] = ""

    def __init__(
        self,
        *,
        release: str,
        qis: Sequence[str],
        sensitive: str,
        criteria: Sequence[Mapping[str, Any] | str],
        source: str | None = None,
        source_table: str | None = None,
        source_conn_id: str | None = None,
        release_conn_id: str | None = None,
        hierarchies: Mapping[str, str] | None = None,
        intervals: Mapping[str, Sequence[int]] | None = None,
        masks: Mapping[str, int | None] | None = None,
        seed: int | str = 0,
        method_options: Mapping[str, Any] | None = None,
        missing_as: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.source = source
        self.source_table = source_table
        self.source_conn_id = source_conn_id
        self.release = release
        self.release_conn_id = release_conn_id
        self.qis = qis
        self.sensitive = sensitive
        self.criteria = criteria
        self.hierarchies = hierarchies or {}
        self.intervals = mapping(intervals, "intervals")
        self.masks = mapping(masks, "masks")
        self.seed = seed
        self.method_options = mapping(method_options, "method_options")
        self.missing_as = missing_as
        from airflow_privacy.errors import InputError, speaking
        from airflow_privacy.gate.criteria import parse_criteria

        if (source is None) == (source_table is None):
            raise InputError("give exactly one of source and source_table")
        if not templated(qis):
            columns(qis, "qis")
        if not templated(hierarchies):
            mapping(hierarchies, "hierarchies")
        if not templated(criteria):
            with speaking("airflow"):
                parse_criteria(criteria, "criteria")

    def _method(self) -> str:
        return self.method

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.anonymize import AnonymizeRequest, run_anonymize
        from airflow_privacy.gate.refs import ReleaseRef

        def service(ctx: Any, attempt: str | None) -> Any:
            source = (
                ReleaseRef(sql_table=text(self.source_table, "source_table"),
                           conn=self.source_conn_id)
                if self.source_table is not None
                else ReleaseRef(path=text(self.source, "source"), conn=self.source_conn_id)
            )  # fmt: skip
            options = {
                k: (v if not isinstance(v, str) else _number(v))
                for k, v in self.method_options.items()
            }
            return run_anonymize(
                AnonymizeRequest(
                    source=source,
                    release=ReleaseRef(
                        path=text(self.release, "release"), conn=self.release_conn_id
                    ),
                    qis=columns(self.qis, "qis") or [],
                    sensitive=str(text(self.sensitive, "sensitive")),
                    method=self._method(),
                    criteria=self.criteria,
                    hierarchies=mapping(self.hierarchies, "hierarchies"),
                    intervals=self.intervals,
                    masks=self.masks,
                    seed=whole(self.seed, "seed", 0, 2**32 - 1) or 0,
                    options=options,
                    name=self.name,
                    missing_as=text(self.missing_as, "missing_as", required=False),
                ),
                ctx,
            )

        return self.run_service(context, lambda ctx: service(ctx, None))


def _number(value: str) -> Any:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            continue
    return value


class BucketizeOperator(_AnonymizeBase):
    """Anatomy bucketization: QIs published exactly, plus a bucket id whose sensitive
    values are diverse enough for ``criteria``.

    :param source: path/URI of the input table (or ``source_table`` + ``source_conn_id``)
    :param source_table: instead of ``source``, a SQL table on ``source_conn_id``
    :param source_conn_id: the connection of a source URI or table
    :param release: path/URI of the release to write (CSV, ``.csv.gz`` or Parquet by name);
        its manifest goes beside it as ``<release>.manifest.json``
    :param release_conn_id: the connection of a release URI
    :param qis: the quasi-identifier columns (a list)
    :param sensitive: the sensitive column
    :param criteria: criteria every release must pass (all), as for ``CheckSafetyOperator``
    :param hierarchies: ``{column: ARX hierarchy CSV}`` (not used by bucketization's groups;
        kept in the manifest)
    :param intervals: ``{column: [width, ...]}`` numeric hierarchies built from the data
    :param masks: ``{column: depth or None}`` mask hierarchies built from the data
    :param seed: makes the bucketization deterministic (whole number >= 0)
    :param method_options: ``{"bucket_column": "bucket"}``
    :param missing_as: publish blank sensitive cells as this value (default: refused)
    An anonymizer records nothing in the ledger (the attempt opened afterwards records the
    release), and a release it writes has passed its criteria.

    Returns (XCom) the report envelope (step ``anonymize``; ``outputs.release`` and
    ``outputs.manifest`` are where the files went).
    """

    method = "bucketize"


class AnonymizeLatticeOperator(_AnonymizeBase):
    """Full-domain generalization over hierarchies (``method="lattice"``, the least-distorted
    minimal node that meets every criterion) or Mondrian multidimensional partitioning
    (``method="mondrian"``).

    :param method: ``lattice`` (default) or ``mondrian``
    :param hierarchies: ``{column: path of an ARX hierarchy CSV}`` for QI columns (a
        hierarchy for a column that is not a QI is bad input)
    :param method_options: lattice: ``utility``, ``suppression_limit``,
        ``max_lattice_size``, ``disclosure`` (``naive``/``safe``), ``disclosure_limit``
    Other parameters as :class:`BucketizeOperator`: ``source``, ``source_table``,
    ``source_conn_id``, ``release``, ``release_conn_id``, ``qis``, ``sensitive``,
    ``criteria``, ``intervals``, ``masks``, ``seed``, ``missing_as``, ``check_name``; and, with
    no use here, ``attempt``, ``attempt_task_id``, ``privacy_ledger_conn_id``, ``on_unsafe``.
    """

    template_fields: Sequence[str] = (*_AnonymizeBase.template_fields, "method_name")

    def __init__(self, *, method: str = "lattice", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not templated(method):
            choice(method, "method", METHODS)
        self.method_name = method

    def _method(self) -> str:
        return choice(self.method_name, "method", METHODS)
