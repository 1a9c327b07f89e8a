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

from airflow_privacy.gate.pushdown import ANONYMIZE_BACKENDS
from airflow_privacy.providers.airflow.operators.base import PrivacyOperator
from airflow_privacy.providers.airflow.params import (
    Args,
    choice,
    intervals,
    masks,
    method_options,
    templated,
)

METHODS = ("lattice", "mondrian")


class _AnonymizeBase(PrivacyOperator):
    template_fields: Sequence[str] = (
        "source", "source_table", "source_conn_id", "release", "release_conn_id", "qis",
        "sensitive", "criteria", "hierarchies", "seed", "missing_as", "benign_values",
        "population", "release_table", "manifest", "backend", "source_spark_table",
        "release_spark_table",
    )  # fmt: skip
    template_fields_renderers: ClassVar[dict[str, str]] = {"criteria": "json"}
    method: ClassVar[str] = ""

    def __init__(
        self,
        *,
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
        benign_values: Sequence[str] = (),
        population: str | None = None,
        release: str | None = None,
        release_table: str | None = None,
        manifest: str | None = None,
        backend: str = "auto",
        source_spark_table: str | None = None,
        release_spark_table: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.source_spark_table = source_spark_table
        self.release_spark_table = release_spark_table
        self.release_table = release_table
        self.manifest = manifest
        self.backend = backend
        self.benign_values = benign_values
        self.population = population
        self.source = source
        self.source_table = source_table
        self.source_conn_id = source_conn_id
        self.release = release
        self.release_conn_id = release_conn_id
        self.qis = qis
        self.sensitive = sensitive
        self.criteria = criteria
        self.hierarchies = hierarchies
        self.intervals = intervals
        self.masks = masks
        self.seed = seed
        self.method_options = method_options
        self.missing_as = missing_as
        self._check_at_parse_time()

    def _methods(self) -> tuple[str, ...]:
        """The method (several while it is a template, or not yet known)."""
        return (self.method,)

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument (:meth:`PrivacyOperator.check_arguments`)."""
        from airflow_privacy.errors import InputError

        a = Args(self, parsing)
        methods = self._methods()
        out = {
            "source": a.text("source", optional=True),
            "source_table": a.text("source_table", optional=True),
            "source_conn_id": a.text("source_conn_id", optional=True),
            "release": a.text("release", optional=True),
            "release_table": a.text("release_table", optional=True),
            "manifest": a.text("manifest", optional=True),
            "backend": a.choice("backend", ANONYMIZE_BACKENDS),
            "release_conn_id": a.text("release_conn_id", optional=True),
            "qis": a.names("qis"),
            "sensitive": a.text("sensitive"),
            "criteria": a.criteria("criteria"),
            "hierarchies": a.files("hierarchies"),
            "intervals": intervals(self.intervals),
            "masks": masks(self.masks),
            "seed": a.whole("seed", 0, 2**32 - 1),
            "method_options": method_options(self.method_options, "method_options", methods),
            "missing_as": a.text("missing_as", optional=True),
            "benign_values": a.values("benign_values"),
            "population": a.text("population", optional=True),
            "method": methods[0],
            "source_spark_table": a.text("source_spark_table", optional=True),
            "release_spark_table": a.text("release_spark_table", optional=True),
        }
        self._check_population(methods)
        sources = (self.source, self.source_table, self.source_spark_table)
        if sum(x is not None for x in sources) != 1:
            raise InputError("give exactly one of source, source_table and source_spark_table")
        if self.source_table is not None and self.source_conn_id is None:
            raise InputError("source_table needs source_conn_id: the SQL connection of the table")
        releases = (self.release, self.release_table, self.release_spark_table)
        if sum(x is not None for x in releases) != 1:
            raise InputError("give exactly one of release, release_table and release_spark_table")
        if self.source_spark_table is not None and self.release_spark_table is None:
            raise InputError(
                "source_spark_table is anonymized by Spark into release_spark_table: give "
                "release_spark_table (a file release of it: export the table to Parquet)"
            )
        if self.release_spark_table is not None and self.manifest is None:
            raise InputError(
                "release_spark_table needs manifest: the file its manifest is written to"
            )
        if self.release_table is not None and self.source_table is None:
            raise InputError(
                "release_table is written in the database of source_table: give source_table "
                "(a file source is written to release)"
            )
        if self.release_table is not None and self.manifest is None:
            raise InputError("release_table needs manifest: the file its manifest is written to")
        built = {"hierarchies": out["hierarchies"], "intervals": out["intervals"],
                 "masks": out["masks"]}  # fmt: skip
        qis = out["qis"] if isinstance(out["qis"], list) and not templated(self.qis) else None
        for what, given in built.items():
            for col in given:
                if qis is not None and col not in qis:
                    raise InputError(
                        f"{what} is given for column {col!r}, which is not a quasi-identifier "
                        f"(qis: {', '.join(qis)})"
                    )
                others = [w for w, g in built.items() if w != what and col in g]
                if others:
                    raise InputError(f"column {col!r} has both {what} and {others[0]}")
        return out

    def _check_population(self, methods: tuple[str, ...]) -> None:
        """``population`` with a method that cannot use it, or criteria that need it
        without it: bad input when the DAG is parsed (templates wait for the task)."""
        from airflow_privacy.core.anonymize import check_population_method
        from airflow_privacy.core.anonymize.criteria import CriteriaSet
        from airflow_privacy.gate.criteria import parse_criteria
        from airflow_privacy.providers.airflow.operators.check import require_population_for

        if self.population is None:
            require_population_for(self.criteria)
            return
        if len(methods) == 1 and not templated(self.criteria):
            parsed = CriteriaSet.parse(parse_criteria(self.criteria, "criteria"))
            check_population_method(methods[0], parsed, True)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.gate.anonymize import AnonymizeRequest, run_anonymize
        from airflow_privacy.gate.refs import ReleaseRef

        def service(ctx: Any) -> Any:
            a = self.check_arguments(parsing=False)
            source = (
                ReleaseRef(sql_table=a["source_table"], conn=a["source_conn_id"])
                if a["source_table"] is not None
                else ReleaseRef(spark_table=a["source_spark_table"])
                if a["source_spark_table"] is not None
                else ReleaseRef(path=a["source"], conn=a["source_conn_id"])
            )
            return run_anonymize(
                AnonymizeRequest(
                    source=source,
                    release=(
                        ReleaseRef(sql_table=a["release_table"], conn=a["source_conn_id"])
                        if a["release_table"] is not None
                        else ReleaseRef(spark_table=a["release_spark_table"])
                        if a["release_spark_table"] is not None
                        else ReleaseRef(path=a["release"], conn=a["release_conn_id"])
                    ),
                    manifest=(
                        ReleaseRef(path=a["manifest"], conn=a["release_conn_id"])
                        if a["manifest"] is not None
                        else None
                    ),
                    backend=a["backend"],
                    qis=a["qis"],
                    sensitive=a["sensitive"],
                    method=a["method"],
                    criteria=a["criteria"],
                    hierarchies=a["hierarchies"],
                    intervals=a["intervals"],
                    masks=a["masks"],
                    seed=a["seed"],
                    options=a["method_options"],
                    name=self.name,
                    missing_as=a["missing_as"],
                    benign=a["benign_values"],
                    population=(
                        ReleaseRef(path=a["population"], conn=a["source_conn_id"])
                        if a["population"] is not None
                        else None
                    ),
                ),
                ctx,
            )

        return self.run_service(context, service)


class BucketizeOperator(_AnonymizeBase):
    """Anatomy bucketization: QIs published exactly, plus a bucket id whose sensitive
    values are diverse enough for ``criteria``.

    :param source: path/URI of the input table (or ``source_table`` + ``source_conn_id``)
    :param source_table: instead of ``source``, a SQL table on ``source_conn_id``
    :param source_conn_id: the connection of a source URI or table
    :param release: path/URI of the release to write (CSV, ``.csv.gz`` or Parquet by name);
        its manifest goes beside it as ``<release>.manifest.json`` (or to ``manifest``)
    :param release_table: instead of ``release``, a SQL table on ``source_conn_id`` (the
        source must be a table there): the release is created in the database
        (``CREATE TABLE ... AS SELECT``), its rows never leave it; needs ``manifest``
    :param source_spark_table: instead of ``source``, a table of the Spark catalog
        (``db.name``), read by Spark (docs/spark.md); its release is a
        ``release_spark_table``
    :param release_spark_table: instead of ``release``, a Spark table (``db.name``) that
        Spark writes (``saveAsTable``) from ``source_spark_table`` or a local Parquet
        ``source``, re-counted by Spark and re-checked; needs ``manifest``. The ledger gates
        files and SQL tables: publish it through a SQL warehouse or a file
    :param manifest: path/URI (through ``release_conn_id``) of the manifest (default: beside
        ``release``; required with ``release_table``)
    :param release_conn_id: the connection of a release or manifest URI
    :param backend: where the anonymization runs: ``"auto"`` (default: a table in its
        database; a file with DuckDB from 4 MiB of Parquet, in process below), ``"arrow"``
        (in process), ``"duckdb"`` (out of core: the distinct tuples counted and the release
        written by DuckDB), ``"sql"`` (a ``source_table`` in its database), ``"spark"`` (a
        ``release_spark_table``: counted and written by Spark; ``auto`` picks it); recorded in
        ``details.backend`` (docs/backends.md)
    :param qis: the quasi-identifier columns (a list)
    :param sensitive: the sensitive column
    :param criteria: criteria every release must pass (all), as for ``CheckSafetyOperator``
    :param hierarchies: ``{column: ARX hierarchy CSV}`` (not used by bucketization's groups;
        kept in the manifest)
    :param intervals: ``{column: [width, ...]}`` numeric hierarchies built from the data
        (a list of whole numbers > 0, increasing; not the text ``"5,10"``)
    :param masks: ``{column: depth or None}`` mask hierarchies built from the data (a depth
        is a whole number >= 0)
    :param seed: makes the bucketization deterministic (whole number >= 0)
    :param method_options: ``{"bucket_column": "bucket"}`` (any other key is bad input)
    :param missing_as: publish blank sensitive cells as this value (default: refused)
    :param benign_values: sensitive values whose disclosure is not a breach (a list of text,
        e.g. ``["none"]``): the search and the manifest's results judge the criteria with
        them, as ``CheckSafetyOperator(benign_values=...)`` re-checks the release
    :param population: not for bucketization (its buckets publish the exact QIs): bad input
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
    :param method_options: lattice: ``utility`` (a metric name), ``suppression_limit`` (in
        [0, 1)), ``max_lattice_size`` (1 to 10,000,000), ``disclosure`` (``naive``/``safe``),
        ``disclosure_limit`` (1 to 10,000,000); mondrian: ``categorical_split``
        (``"auto"``, the default: both splits below, the one with more classes published,
        the hierarchy's on a tie; ``"hierarchy"``: a categorical QI splits along its
        hierarchy and publishes the lowest common ancestor; ``"halving"``: into two halves
        of the values present, published as the set ``{a|b|c}``, see docs/anonymizers.md).
        Checked when the DAG is parsed
    :param population: path/URI (through ``source_conn_id``) of a population table
        containing the source (the lattice generalizes it with the same hierarchies, Mondrian
        counts its records in each region), for k-map
        without ``sampling_fraction``/``population_size`` and delta-presence (which need it:
        checked when the DAG is parsed); the manifest's results count it at the published
        node
    Other parameters as :class:`BucketizeOperator`: ``source``, ``source_table``,
    ``source_conn_id``, ``source_spark_table``, ``release``, ``release_table``,
    ``release_spark_table``, ``manifest``, ``release_conn_id``, ``backend``, ``qis``,
    ``sensitive``, ``criteria``, ``intervals``, ``masks``, ``seed``, ``missing_as``,
    ``benign_values``. An anonymizer works outside the ledger: it takes no ``attempt``,
    ``check_name`` or ledger connection.
    """

    template_fields: Sequence[str] = (*_AnonymizeBase.template_fields, "method_name")

    def __init__(self, *, method: str = "lattice", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.method_name = method
        self._check_at_parse_time()

    def _methods(self) -> tuple[str, ...]:
        method = getattr(self, "method_name", None)  # None while the base constructor checks
        if method is None or templated(method):
            return METHODS
        return (choice(method, "method", METHODS),)
