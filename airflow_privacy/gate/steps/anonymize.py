"""The anonymize step, declared once (:class:`AnonymizeStep`; ``airflow-privacy anonymize``,
``BucketizeOperator`` and ``AnonymizeLatticeOperator`` are derived from it): write the
least-distorted release that passes every criterion (the service:
:func:`airflow_privacy.gate.anonymize.run_anonymize`).

The method's options are fields of their own on the command line (``--utility``,
``--suppression``, ...) and one mapping in Airflow (``method_options``); both become the
request's ``options``, and the rules say which method each applies to.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from airflow_privacy.errors import InputError, opt
from airflow_privacy.gate.steps import shared
from airflow_privacy.gate.steps.base import Known, Step
from airflow_privacy.gate.steps.fields import Field
from airflow_privacy.vocabulary import (
    ANONYMIZE_BACKENDS,
    CATEGORICAL_SPLITS,
    DISCLOSURE_MODES,
    METHODS,
    METRICS,
)

if TYPE_CHECKING:
    from airflow_privacy.gate.anonymize import AnonymizeRequest
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope

#: the largest lattice (nodes) and safe-mode block (worlds): what memory can hold
MAX_NODES = 10_000_000

#: the method options: ``{field key: (its key in method_options, the method it applies to)}``
OPTIONS: dict[str, tuple[str, str]] = {
    "utility": ("utility", "lattice"),
    "suppression": ("suppression_limit", "lattice"),
    "max_lattice_size": ("max_lattice_size", "lattice"),
    "disclosure": ("disclosure", "lattice"),
    "disclosure_limit": ("disclosure_limit", "lattice"),
    "categorical_split": ("categorical_split", "mondrian"),
    "bucket_column": ("bucket_column", "bucketize"),
}


def _option(key: str, kind: Any, help: str, **kw: Any) -> Field:
    """A method option: a flag of its own on the command line, a key of ``method_options``
    in Airflow."""
    method = OPTIONS[key][1]
    return Field(key, kind, f"{method}: {help}", airflow=None, templated=False, **kw)


class AnonymizeStep(Step):
    """``anonymize``: write a release that passes the criteria (module doc)."""

    name = "anonymize"
    summary = "write a release that passes the criteria (bucketize, lattice, mondrian)"
    description = (
        "Anonymize INPUT so that every --criterion passes, and write the release "
        "(re-checkable with `airflow-privacy check`) with its manifest, atomically. Exit 0 = "
        "written, 2 = bad input or no release can pass."
    )
    operator = "airflow_privacy.providers.airflow.operators.anonymize.AnonymizeLatticeOperator"
    fields = (
        Field(
            "input", "ref", "the input table: a CSV (.csv[.gz]) or Parquet file or an "
            "object-store URI", cli="INPUT", airflow="source", required=True,
            type_hint="str | None", variants=("source_table", "source_spark_table"),
            conn_arg="source_conn_id",
            cli_note="table:SCHEMA.NAME on --conn URL, or spark:NAME in the Spark catalog",
            airflow_note="exactly one of source, source_table (with source_conn_id) and "
            "source_spark_table",
        ),
        Field(
            "qi", "columns", "a quasi-identifier column", cli="--qi", airflow="qis",
            required=True, metavar="COL", dest="qis", unique=True, type_hint="list[str]",
        ),
        shared.sensitive(),
        Field(
            "method", "choice", "bucketize (Anatomy: exact QIs + a bucket id), lattice "
            "(full-domain generalization over hierarchies) or mondrian (multidimensional "
            "partitioning)", required=True, choices=METHODS, type_hint="str",
            airflow_default="lattice",
            airflow_note="AnonymizeLatticeOperator: lattice (its default) or mondrian; "
            "BucketizeOperator has no method argument (it is bucketize)",
        ),
        Field(
            "criterion", "criteria", "a criterion every release must pass, NAME or "
            "NAME:PARAM=VALUE,... e.g. k-anonymity:k=5 or ck-safety:c=0.7,k=3 (all must pass)",
            cli="--criterion", airflow="criteria", default=(), airflow_required=True,
            metavar="NAME[:PARAM=VALUE,...]", dest="criteria", type_hint="list[dict | str]",
            cli_note="a single NAME may take its parameters as flags (--k 5); at least one "
            "criterion here or in --criteria-file",
            airflow_note="each {'name': 'ck-safety', 'c': 0.7, 'k': 3} or "
            "'ck-safety:c=0.7,k=3'; templated numbers become numbers",
        ),
        Field(
            "criteria_file", "text", "a YAML or JSON list of criteria: [{name: ck-safety, "
            "parameters: {c: 0.7, k: 3}}]", airflow=None, metavar="FILE",
        ),
        Field(
            "hierarchy", "files", "the ARX hierarchy file (';'-separated, no header) of a QI",
            cli="--hierarchy", airflow="hierarchies", metavar="COL=FILE", dest="hierarchy",
            type_hint="Mapping[str, str] | None",
        ),
        Field(
            "interval", "intervals", "a numeric hierarchy for a QI, built from the data: "
            "intervals of the given increasing widths, then *", cli="--interval",
            airflow="intervals", metavar="COL=W1,W2,...", dest="interval", templated=False,
            type_hint="Mapping[str, Sequence[int]] | None",
            airflow_note="{column: [width, ...]}, whole numbers > 0 (not the text '5,10')",
        ),
        Field(
            "mask", "masks", "a mask hierarchy for a QI, built from the data: mask the last "
            "1, 2, ... characters (at most DEPTH)", cli="--mask", airflow="masks",
            metavar="COL[=DEPTH]", dest="mask", templated=False,
            type_hint="Mapping[str, int | None] | None",
            airflow_note="{column: depth or None}",
        ),
        _option("utility", "choice", "the metric that picks the published node among the "
                "minimal ones (default: loss)", choices=METRICS),
        _option("suppression", "number", "the fraction of records that may be suppressed "
                "(removed) to pass (default: 0)", cli="--suppression", metavar="FRACTION",
                low=0, high=1, open_high=True),
        _option("max_lattice_size", "whole", "refuse lattices larger than this (default: "
                "1000000)", metavar="NODES", low=1, high=MAX_NODES),
        _option("disclosure", "choice", "naive (publish the first node that passes, the "
                "default) or safe (the first node whose disclosure set passes, against an "
                "adversary who knows the search; small tables only, see "
                "docs/algorithm-aware.md)", choices=DISCLOSURE_MODES),
        _option("disclosure_limit", "whole", "with --disclosure safe, the largest block "
                "enumerated; larger blocks are declined (default: 200000)", metavar="WORLDS",
                low=1, high=MAX_NODES),
        _option("categorical_split", "choice", "split a categorical QI along its hierarchy "
                "(hierarchy: published as the values' lowest common ancestor) or into two "
                "halves of the values present (halving, as anonypy: published as the set "
                "{a|b|c}); auto (the default) makes both and publishes the one with more "
                "classes, the hierarchy's on a tie (docs/anonymizers.md)",
                choices=CATEGORICAL_SPLITS),
        _option("bucket_column", "column", "the name of the bucket id column (default: "
                "bucket)", metavar="COL"),
        Field(
            "method_options", "options", "the method's options: lattice utility, "
            "suppression_limit (in [0, 1)), max_lattice_size and disclosure_limit (1 to "
            "10,000,000), disclosure (naive or safe); mondrian categorical_split (auto, "
            "hierarchy or halving); bucketize bucket_column (the command line's flags of the "
            "same names)", cli=None, templated=False, type_hint="Mapping[str, Any] | None",
        ),
        Field(
            "seed", "whole", "the seed of the published row order and of the permutations "
            "within buckets", default=0, low=0, high=2**32 - 1, metavar="N",
            type_hint="int | str",
        ),
        Field(
            "out_release", "ref", "the release to write: a CSV (.csv[.gz]) or Parquet file, by its "
            "name, or an object-store URI; its manifest goes beside it "
            "(RELEASE.manifest.json) unless a manifest is given", cli="--out",
            airflow="release", required=True, metavar="RELEASE", type_hint="str | None",
            variants=("release_table", "release_spark_table"), conn_arg="release_conn_id",
            variant_help=(
                "a table (`schema.name`) created in the database of `source_table`, on "
                "`source_conn_id`; needs `manifest`",
                "a table of the Spark catalog (`db.name`) written by Spark; needs `manifest`",
            ),
            table_conn_arg="source_conn_id",
            cli_note="table:NAME on --conn when INPUT is a table there (written in the "
            "database), or spark:NAME (a Spark table written by Spark, from a spark:NAME or "
            "Parquet INPUT; needs --manifest)",
            airflow_note="exactly one of release, release_table (in the database of "
            "source_table, needs manifest) and release_spark_table (written by Spark, needs "
            "manifest)",
        ),
        Field(
            "manifest", "text", "where the manifest (JSON) is written (default: "
            "RELEASE.manifest.json; required for a table release)", metavar="FILE",
            type_hint="str | None", airflow_note="through release_conn_id",
        ),
        Field("qit", "text", "bucketize: also write the QI table (QIT)", airflow=None,
              metavar="FILE"),
        Field("st", "text", "bucketize: also write the sensitive table (ST)", airflow=None,
              metavar="FILE"),
        Field(
            "replace", "flag", "write over a release, manifest, QIT or ST that exists already "
            "(without it an existing one is bad input and nothing is written; a Spark table "
            "is never written over)", default=False, type_hint="bool",
        ),
        Field(
            "backend", "choice", "where the anonymization runs: auto (a table in its "
            "database, a spark:NAME release by Spark, a file with DuckDB from 4 x 10^7 Parquet "
            "cells, else in process), arrow (in process), duckdb (out of core: counts and the "
            "release written by DuckDB), sql (a table in its database), spark (a Spark table "
            "release, counted and written by Spark) (docs/backends.md)", default="auto",
            choices=ANONYMIZE_BACKENDS, type_hint="str",
        ),
        shared.benign(
            "a sensitive value whose disclosure is not a breach (e.g. 'none'): the search and "
            "the manifest's results judge the criteria with it, as check --benign re-checks "
            "the release"
        ),
        Field(
            "population", "ref", "lattice, mondrian: a population table containing the input "
            "(a file or URI), generalized as the input is, for k-map without "
            "sampling_fraction / population_size and delta-presence", metavar="REF",
            conn_arg="source_conn_id", type_hint="str | None",
            cli_note="or table:NAME on --conn", airflow_note="through source_conn_id",
        ),
        Field(
            "missing_as", "text", "publish blank sensitive cells as this value (default: a "
            "blank sensitive cell is bad input)", metavar="VALUE", type_hint="str | None",
        ),
    )  # fmt: skip
    cli_groups = ("criterion-flags", "input", "output")

    # ------------------------------------------------------------------ the rules
    def rules(self, known: Known) -> None:
        method = known.get("method")
        if method is not None:
            for key, (_, applies) in OPTIONS.items():
                if known.get(key) is not None and method != applies:
                    raise InputError(f"{opt(key)} applies to {opt('method')} {applies} only")
            if known.get("method_options") is not None:
                check_option_keys(known["method_options"], method)
            if (known.get("qit") or known.get("st")) and method != "bucketize":
                raise InputError(
                    f"{opt('qit')} and {opt('st')} apply to {opt('method')} bucketize only"
                )
        self._columns(known)
        self._population(known)
        self._places(known)

    @staticmethod
    def _columns(known: Known) -> None:
        """A built or given hierarchy names a QI, one kind of hierarchy per column."""
        built = {k: known.get(k) or {} for k in ("hierarchy", "interval", "mask")}
        qis = known.get("qi")
        for what, given in built.items():
            if not isinstance(given, Mapping):
                continue
            for col in given:
                if isinstance(qis, list | tuple) and col not in qis:
                    raise InputError(
                        f"{opt(what)} is given for column {col!r}, which is not a "
                        f"quasi-identifier ({opt('qi')}: {', '.join(map(str, qis))})"
                    )
                others = [w for w, g in built.items() if w != what and col in g]
                if others:
                    raise InputError(f"column {col!r} has both {opt(what)} and {opt(others[0])}")

    @staticmethod
    def _population(known: Known) -> None:
        """Criteria that need a population table have it; a method that cannot use one
        does not get it."""
        if not known.has("criterion", "population", "method") or not known["criterion"]:
            return
        from airflow_privacy.core.anonymize import check_population_method
        from airflow_privacy.core.anonymize.criteria import CriteriaSet
        from airflow_privacy.gate.criteria import parse_criteria

        parsed = CriteriaSet.parse(parse_criteria(known["criterion"], "criterion"))
        check_population_method(known["method"], parsed, known["population"] is not None)

    @staticmethod
    def _places(known: Known) -> None:
        """Where a table input is anonymized and a table release written."""
        source, out = known.get("input"), known.get("out_release")
        table = out is not None and (out.is_table or out.is_spark)
        if out is not None and table and known.has("manifest") and known["manifest"] is None:
            kind = "Spark" if out.is_spark else "SQL"
            raise InputError(
                f"the release {out.describe()} ({opt('out_release')}) is a {kind} table: give "
                f"{opt('manifest')}, the file its manifest is written to"
            )
        if source is None or out is None:
            return
        if source.is_spark and not out.is_spark:
            raise InputError(
                f"a Spark table input ({opt('input')}) is anonymized by Spark into a Spark "
                f"table: give {opt('out_release')} as one (a file release of it: export the "
                "table to Parquet)"
            )
        if out.is_table and not source.is_table:
            raise InputError(
                f"the release table ({opt('out_release')}) is written in the database of the "
                f"input: give a table there as {opt('input')} (a file input is written to a file)"
            )

    # ----------------------------------------------------------- request and run
    def request(self, values: Mapping[str, Any]) -> AnonymizeRequest:
        from airflow_privacy.gate.anonymize import AnonymizeRequest, criteria_file
        from airflow_privacy.gate.refs import ReleaseRef

        criteria = list(values.get("criterion") or [])
        also_read: list[str] = []
        if values.get("criteria_file") is not None:
            criteria.extend(criteria_file(values["criteria_file"]))
            also_read.append(values["criteria_file"])
        if not criteria:
            raise InputError(
                f"at least one criterion is required ({opt('criterion')} NAME[:PARAM=VALUE,...])"
            )
        options = dict(values.get("method_options") or {})
        for key, (name, _) in OPTIONS.items():
            if values.get(key) is not None:
                options[name] = values[key]
        conn = values.get("release_conn_id")

        def path(key: str, with_conn: bool = False) -> ReleaseRef | None:
            given = values.get(key)
            return (
                None if given is None else ReleaseRef(path=given, conn=conn if with_conn else None)
            )

        return AnonymizeRequest(
            source=values["input"],
            release=values["out_release"],
            qis=list(values["qi"]),
            sensitive=values["sensitive"],
            method=values["method"],
            criteria=criteria,
            hierarchies=dict(values.get("hierarchy") or {}),
            intervals=dict(values.get("interval") or {}),
            masks=dict(values.get("mask") or {}),
            seed=values.get("seed", 0) if values.get("seed") is not None else 0,
            options=options,
            manifest=path("manifest", with_conn=True),
            qit=path("qit"),
            st=path("st"),
            name=values.get("name") or self.name,
            missing_as=values.get("missing_as"),
            fmt=values.get("input_format"),
            delimiter=values.get("delimiter"),
            benign=tuple(values.get("benign") or ()),
            population=values.get("population"),
            also_read=also_read,
            backend=values.get("backend") or "auto",
            replace=bool(values.get("replace")),
        )

    def values_of(self, req: AnonymizeRequest) -> Known:
        """The request's values by field key, for the rules."""
        return Known({
            "input": req.source, "out_release": req.release, "qi": list(req.qis),
            "sensitive": req.sensitive, "method": req.method, "criterion": req.criteria,
            "hierarchy": req.hierarchies, "interval": req.intervals, "mask": req.masks,
            "method_options": req.options, "population": req.population,
            "manifest": req.manifest, "qit": req.qit, "st": req.st, "backend": req.backend,
        })  # fmt: skip

    def run(self, req: AnonymizeRequest, ctx: GateContext) -> Envelope:
        """The rules on the request (whatever built it), then the service."""
        from airflow_privacy.gate.anonymize import run_anonymize

        self.check(self.values_of(req))
        return run_anonymize(req, ctx)


def check_option_keys(options: Any, method: str) -> None:
    """Every key of ``method_options`` is an option of ``method`` (the values are checked
    as the command line's flags of the same names are)."""
    from airflow_privacy.gate.anonymize import METHOD_OPTIONS

    if not isinstance(options, Mapping):
        raise InputError(f"{opt('method_options')} must be a mapping")
    allowed = METHOD_OPTIONS.get(method, ())
    for key in options:
        if key in allowed:
            continue
        others = [m for m, keys in METHOD_OPTIONS.items() if key in keys]
        where = (
            f"applies to method {others[0]} only"
            if others
            else f"is not an option (options: {', '.join(allowed) or 'none'})"
        )
        raise InputError(f"{opt('method_options')}: {key!r} {where} (method {method})")


ANONYMIZE = AnonymizeStep()
