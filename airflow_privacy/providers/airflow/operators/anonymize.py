"""``BucketizeOperator`` and ``AnonymizeLatticeOperator``: produce the release.

Their arguments are checked as the step declares them
(:class:`airflow_privacy.gate.steps.anonymize.AnonymizeStep`, the declaration behind
``airflow-privacy anonymize``): the input and output travel by reference (path, URI or SQL
table), the release is written with its manifest beside it (``<release>.manifest.json``) in
one atomic step, and XCom carries the report envelope (``outputs.release`` is where the
release went).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from airflow_privacy.gate.steps.anonymize import ANONYMIZE
from airflow_privacy.providers.airflow.operators.base import PrivacyOperator

METHODS = ("lattice", "mondrian")


class _AnonymizeBase(PrivacyOperator):
    #: derived from the step's declaration
    template_fields: Sequence[str] = ANONYMIZE.template_fields()
    template_fields_renderers: ClassVar[dict[str, str]] = {"criteria": "json"}

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
        replace: bool = False,
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
        self.replace = replace
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
        # the subclass sets its method, then checks the arguments (_check_at_parse_time)

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """Every argument, as the step declares them
        (:func:`airflow_privacy.providers.airflow.steps.check_arguments`)."""
        from airflow_privacy.providers.airflow import steps

        return steps.check_arguments(self, ANONYMIZE, parsing)

    def execute(self, context: Any) -> dict[str, Any]:
        from airflow_privacy.providers.airflow import steps

        return steps.execute(self, ANONYMIZE, context)


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
    :param replace: write over a release (file or table), manifest that exists already
        (default False: an existing one fails the task before any work, and nothing is
        written; a Spark table is never written over)
    An anonymizer records nothing in the ledger (the attempt opened afterwards records the
    release), and a release it writes has passed its criteria.

    Returns (XCom) the report envelope (step ``anonymize``; ``outputs.release`` and
    ``outputs.manifest`` are where the files went).
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.method = "bucketize"
        self._check_at_parse_time()


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
    ``benign_values``, ``replace``. An anonymizer works outside the ledger: it takes no ``attempt``,
    ``check_name`` or ledger connection.
    """

    def __init__(self, *, method: str = "lattice", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.method = method
        self._check_at_parse_time()

    def check_arguments(self, parsing: bool) -> dict[str, Any]:
        """As the step declares them; the method is lattice or mondrian (bucketization is
        :class:`BucketizeOperator`)."""
        from airflow_privacy.errors import InputError
        from airflow_privacy.providers.airflow.params import templated

        if not templated(self.method) and self.method not in METHODS:
            raise InputError(
                f"method must be one of {', '.join(METHODS)}, got {self.method!r} "
                "(bucketization is BucketizeOperator)"
            )
        return super().check_arguments(parsing)
