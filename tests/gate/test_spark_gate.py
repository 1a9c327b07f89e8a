"""Backend ``spark`` of the check and anonymize steps (``airflow_privacy.gate.pushdown``),
in local mode with the session of tests/core/backends/test_backends_spark.py.

* check: a Parquet file counted by Arrow, DuckDB and Spark gives equal envelopes apart
  from ``details.backend``; a Spark table (``spark:NAME``) is counted by Spark, and its
  per-group counts equal a plain dictionary count of its rows (``n_b(s)`` by definition,
  Martin et al. 2007, section 2.1);
* anonymize: a Parquet file or a Spark table anonymized into a Spark table gives the
  in-process decision (the same manifest details, groups and counts) and Spark writes
  exactly the records that decision publishes; a re-check that fails drops the table
  (fails closed);
* bad input (exit 2, nothing written): a file release with ``--backend spark``, a Spark
  source with a file release, a Spark table with an attempt or in a step that reads files,
  a Spark release without ``--manifest``, an existing table.
"""

from __future__ import annotations

import io
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.cli import main
from airflow_privacy.errors import InputError
from airflow_privacy.gate import spark_tables
from airflow_privacy.gate.anonymize import AnonymizeRequest, run_anonymize
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.check import CheckRequest, run_check

CRITERIA = ["k-anonymity:k=2", "distinct-l-diversity:l=2", "ck-safety:c=0.7,k=1",
            "t-closeness:t=0.3"]  # fmt: skip
_names = itertools.count()


@pytest.fixture
def spark_local(spark: Any) -> Any:
    """The session's local SparkSession (tests/conftest.py), by this module's name."""
    return spark


def table_name() -> str:
    return f"gate_t{next(_names)}"


def rows_table(n: int = 40) -> pa.Table:
    ages = [20 + (i * 7) % 40 for i in range(n)]
    zips = [f"1300{i % 4}" for i in range(n)]
    diseases = ["flu", "hiv", "cold", "flu", "cancer"]
    return pa.table({"age": ages, "zip": zips, "disease": [diseases[i % 5] for i in range(n)]})


def check_env(ref: ReleaseRef, backend: str, groups: list[str], criteria: list[str]) -> Any:
    env = run_check(
        CheckRequest(release=ref, sensitive="disease", group_columns=groups, criteria=criteria,
                     backend=backend),
        GateContext(),
    ).to_dict()  # fmt: skip
    env.pop("created_at")
    return env


def by_definition(table: pa.Table, groups: list[str], sensitive: str) -> dict[Any, int]:
    """``n_b(s)`` from the rows: a dictionary count of (group labels..., value)."""
    cols = [table.column(c).to_pylist() for c in [*groups, sensitive]]
    return dict(Counter(tuple(str(v) for v in row) for row in zip(*cols, strict=True)))


def env_cells(ref: ReleaseRef, groups: list[str]) -> dict[Any, int]:
    """The per-group counts Spark gives a reference, as (labels..., value) -> count."""
    from airflow_privacy.core.model import ReleaseSpec

    b = spark_tables.spark_count(ref, ReleaseSpec("disease", tuple(groups)), GateContext())
    return {(*g, v): int(b.counts[i, j]) for i, g in enumerate(b.groups)
            for j, v in enumerate(b.values) if b.counts[i, j]}  # fmt: skip


# ---------------------------------------------------------------------------- check
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a", "b", "01", "1"]), st.sampled_from(["x", "é", "y z"]),
                  st.sampled_from(["Flu", "flu", "01", "1", "HIV"])),
        min_size=2, max_size=40,
    ),
)  # fmt: skip
def test_check_parity_arrow_duckdb_spark(
    spark_local: Any, tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, str, str]]
) -> None:
    path = tmp_path_factory.mktemp("parity") / "r.parquet"
    data = pa.table({k: [r[i] for r in rows] for i, k in enumerate(["g", "h", "disease"])})
    pq.write_table(data, path)
    ref = ReleaseRef(path=str(path))
    envs = {b: check_env(ref, b, ["g", "h"], CRITERIA) for b in ("arrow", "duckdb", "spark")}
    for backend, env in envs.items():
        assert env["details"].pop("backend") == backend
    assert envs["arrow"] == envs["duckdb"] == envs["spark"]
    assert env_cells(ref, ["g", "h"]) == by_definition(data, ["g", "h"], "disease")


def test_check_spark_table(spark_local: Any, tmp_path: Path) -> None:
    data = rows_table()
    name = table_name()
    spark_local.createDataFrame(data).write.saveAsTable(name)
    path = tmp_path / "r.parquet"
    pq.write_table(data, path)
    on_table = check_env(ReleaseRef.parse(f"spark:{name}"), "auto", ["age", "zip"], CRITERIA)
    on_file = check_env(ReleaseRef(path=str(path)), "arrow", ["age", "zip"], CRITERIA)
    assert on_table["details"].pop("backend") == "spark"
    assert on_file["details"].pop("backend") == "arrow"
    assert on_table["release"].pop("ref") == f"spark:{name}"
    on_file["release"].pop("ref")
    assert on_table == on_file
    folder = tmp_path / "dataset"  # a Parquet dataset folder, counted by Spark
    folder.mkdir()
    pq.write_table(data.slice(0, 15), folder / "part-0.parquet")
    pq.write_table(data.slice(15), folder / "part-1.parquet")
    on_folder = check_env(ReleaseRef(path=str(folder)), "spark", ["age", "zip"], CRITERIA)
    assert on_folder["details"].pop("backend") == "spark"
    on_folder["release"].pop("ref")
    assert on_folder == on_file
    assert env_cells(ReleaseRef(spark_table=name), ["age", "zip"]) == by_definition(
        data, ["age", "zip"], "disease"
    )
    # the command line: spark:NAME, exit 1 (unsafe: 40 records in 40 distinct groups)
    out = io.StringIO()
    code = main(["check", f"spark:{name}", "--sensitive", "disease", "--group", "age",
                 "--group", "zip", "--criterion", "k-anonymity:k=2", "--format", "json"],
                out)  # fmt: skip
    env = json.loads(out.getvalue())
    assert (code, env["safe"], env["details"]["backend"]) == (1, False, "spark")
    with pytest.raises(InputError, match="--backend duckdb does not apply to spark:"):
        check_env(ReleaseRef(spark_table=name), "duckdb", ["age"], CRITERIA)
    with pytest.raises(InputError, match="does not exist in the Spark catalog"):
        check_env(ReleaseRef(spark_table="no_such_table"), "auto", ["age"], CRITERIA)


def test_check_spark_refuses(spark_local: Any, tmp_path: Path) -> None:
    csv = tmp_path / "r.csv"
    csv.write_text("age,disease\n1,flu\n", encoding="utf-8")
    with pytest.raises(InputError, match="--backend spark reads Parquet files and folders"):
        check_env(ReleaseRef(path=str(csv)), "spark", ["age"], CRITERIA)
    with pytest.raises(InputError, match="the ledger gates files and SQL tables"):
        run_check(
            CheckRequest(release=ReleaseRef(spark_table="t"), sensitive="disease",
                         group_columns=["age"], criteria=CRITERIA, attempt="x"),
            GateContext(),
        )  # fmt: skip


# ---------------------------------------------------------------------------- anonymize
def anonymize(source: ReleaseRef, release: ReleaseRef, tmp_path: Path, method: str,
              backend: str = "auto", **kw: Any) -> Any:  # fmt: skip
    manifest = ReleaseRef(path=str(tmp_path / f"{release.name}.manifest.json"))
    criteria = kw.pop("criteria", ["k-anonymity:k=3", "distinct-l-diversity:l=2"])
    return run_anonymize(
        AnonymizeRequest(source=source, release=release, qis=["age", "zip"],
                         sensitive="disease", method=method, criteria=criteria,
                         intervals={"age": [5, 10, 20]}, masks={"zip": None},
                         manifest=manifest, backend=backend, **kw),
        GateContext(),
    ).to_dict()  # fmt: skip


def comparable(env: dict[str, Any]) -> dict[str, Any]:
    env = dict(env)
    for key in ("created_at", "outputs", "summary"):
        env.pop(key, None)
    env["release"] = {k: v for k, v in env["release"].items() if k != "ref"}
    env["details"] = {k: v for k, v in env["details"].items() if k != "backend"}
    search = env["details"]["method_details"].get("search")
    if search is not None:  # the clock, not the search
        env["details"]["method_details"]["search"] = {
            k: v for k, v in search.items() if k != "elapsed_seconds"
        }
    return env


@pytest.mark.parametrize("method", ["lattice", "mondrian"])
def test_anonymize_into_a_spark_table(spark_local: Any, tmp_path: Path, method: str) -> None:
    data = rows_table(60)
    path = tmp_path / "in.parquet"
    pq.write_table(data, path)
    in_table = table_name()
    spark_local.createDataFrame(data).write.saveAsTable(in_table)
    local = anonymize(ReleaseRef(path=str(path)), ReleaseRef(path=str(tmp_path / "r.parquet")),
                      tmp_path, method, "arrow")  # fmt: skip
    written = pq.read_table(tmp_path / "r.parquet")
    cols = local["release"]["group_columns"]
    expected = by_definition(written, cols, "disease")
    folder = tmp_path / "dataset"  # a Parquet dataset folder of two part files
    folder.mkdir()
    pq.write_table(data.slice(0, 25), folder / "part-0.parquet")
    pq.write_table(data.slice(25), folder / "part-1.parquet")
    sources = [ReleaseRef(path=str(path)), ReleaseRef(spark_table=in_table),
               ReleaseRef(path=str(folder))]  # fmt: skip
    for source in sources:
        out = table_name()
        env = anonymize(source, ReleaseRef.parse(f"spark:{out}"), tmp_path, method)
        assert env["details"]["backend"] == "spark"
        assert env["release"]["ref"] == f"spark:{out}"
        assert comparable(env) == comparable(local)
        # what Spark wrote, read back by definition, is the in-process release
        released = spark_local.table(out).toArrow()
        assert sorted(released.column_names) == sorted([*cols, "disease"])
        assert by_definition(released, cols, "disease") == expected
        manifest = json.loads((tmp_path / f"{out}.manifest.json").read_text(encoding="utf-8"))
        assert manifest["method"] == method
        check = check_env(ReleaseRef(spark_table=out), "auto", cols, ["k-anonymity:k=3"])
        assert check["safe"] is True and check["details"]["backend"] == "spark"


def test_a_failed_recheck_drops_the_table(
    spark_local: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "in.parquet"
    pq.write_table(rows_table(), path)
    out = table_name()
    real = spark_tables.spark_count

    def one_record_lost(*args: Any, **kw: Any) -> Any:
        b = real(*args, **kw)
        counts = b.counts.copy()
        counts[counts > 0] -= 1
        counts[0, counts[0].argmax()] += 1  # not all gone: a group kept, with fewer records
        return type(b)(b.group_columns, b.sensitive, b.groups, b.values, counts)

    monkeypatch.setattr(spark_tables, "spark_count", one_record_lost)
    with pytest.raises(RuntimeError, match="does not have the counts the anonymizer decided"):
        anonymize(ReleaseRef(path=str(path)), ReleaseRef(spark_table=out), tmp_path, "mondrian")
    assert not spark_local.catalog.tableExists(out)
    assert not (tmp_path / f"{out}.manifest.json").exists()


def test_anonymize_refuses(spark_local: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.parquet"
    pq.write_table(rows_table(), path)
    src = ReleaseRef(path=str(path))
    with pytest.raises(InputError, match="--backend spark writes the release as a Spark table"):
        anonymize(src, ReleaseRef(path=str(tmp_path / "r.parquet")), tmp_path, "mondrian",
                  "spark")  # fmt: skip
    name = table_name()
    spark_local.createDataFrame(rows_table()).write.saveAsTable(name)
    with pytest.raises(InputError, match="is a Spark table: its release is written by Spark"):
        anonymize(ReleaseRef(spark_table=name), ReleaseRef(path=str(tmp_path / "r.parquet")),
                  tmp_path, "mondrian")  # fmt: skip
    with pytest.raises(InputError, match="--backend duckdb does not apply to the release"):
        anonymize(src, ReleaseRef(spark_table="fresh"), tmp_path, "mondrian", "duckdb")
    with pytest.raises(InputError, match="--method bucketize is not written by Spark yet"):
        run_anonymize(
            AnonymizeRequest(source=src, release=ReleaseRef(spark_table="fresh"), qis=["age"],
                             sensitive="disease", method="bucketize",
                             criteria=["distinct-l-diversity:l=2"],
                             manifest=ReleaseRef(path=str(tmp_path / "m.json"))),
            GateContext(),
        )  # fmt: skip
    assert not spark_local.catalog.tableExists("fresh")
    with pytest.raises(InputError, match="is a Spark table: give --manifest"):
        run_anonymize(
            AnonymizeRequest(source=src, release=ReleaseRef(spark_table="fresh"), qis=["age"],
                             sensitive="disease", method="mondrian",
                             criteria=["k-anonymity:k=2"]),
            GateContext(),
        )  # fmt: skip
    with pytest.raises(InputError, match=r"the release \(--out\) spark:\w+ already exists"):
        anonymize(src, ReleaseRef(spark_table=name), tmp_path, "mondrian")
    assert spark_local.table(name).count() == 40  # untouched
    with pytest.raises(InputError, match="only the check and anonymize steps read"):
        ReleaseRef(spark_table=name).local  # noqa: B018  (the other steps' way in)
    with pytest.raises(InputError, match="a Spark table name is letters"):
        ReleaseRef.parse("spark:a;drop table x")


@pytest.mark.parametrize(
    "argv",
    [
        ["risk", "spark:db.t", "--qi", "a"],
        ["maxent", "spark:db.t", "--sensitive", "s", "--bucket", "b"],
        ["attempt", "spark:db.t", "--dataset", "d", "--require", "check", "--ledger", "LEDGER"],
    ],
)
def test_other_steps_refuse_a_spark_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """Without a Spark session: the steps that read files or SQL tables say so (exit 2),
    and the ledger is not created."""
    ledger = tmp_path / "ledger.db"
    argv = [f"sqlite:///{ledger}" if a == "LEDGER" else a for a in argv]
    code = main(argv, io.StringIO())
    err = capsys.readouterr().err
    assert code == 2
    assert "spark:db.t is a Spark table, which only the check and anonymize steps read" in err
    assert not ledger.exists()


def test_operators_with_spark_tables(spark_local: Any, tmp_path: Path) -> None:
    """The operators' ``spark_table`` / ``source_spark_table`` / ``release_spark_table``
    reach the same service: the anonymize operator's Spark release, checked by the check
    operator, both recorded as backend spark."""
    pytest.importorskip("airflow")
    from airflow_privacy.providers.airflow.operators.anonymize import AnonymizeLatticeOperator
    from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
    from tests.gate.parity_support import FakeTI

    source = table_name()
    spark_local.createDataFrame(rows_table(60)).write.saveAsTable(source)
    out = table_name()
    anon = AnonymizeLatticeOperator(
        task_id="anonymize", source_spark_table=source, release_spark_table=out,
        manifest=str(tmp_path / "m.json"), qis=["age", "zip"], sensitive="disease",
        criteria=["k-anonymity:k=3"], method="mondrian",
    ).execute({"ti": FakeTI()})  # fmt: skip
    assert anon["details"]["backend"] == "spark" and anon["release"]["ref"] == f"spark:{out}"
    check = CheckSafetyOperator(
        task_id="check", spark_table=out, sensitive="disease",
        group_columns=anon["release"]["group_columns"], criteria=["k-anonymity:k=3"],
    ).execute({"ti": FakeTI()})  # fmt: skip
    assert check["safe"] is True and check["details"]["backend"] == "spark"
    assert check["release"]["records"] == anon["details"]["records_out"] == 60


def test_cli_anonymize_into_a_spark_table(spark_local: Any, tmp_path: Path) -> None:
    path = tmp_path / "in.parquet"
    pq.write_table(rows_table(), path)
    out, manifest = table_name(), tmp_path / "m.json"
    argv = ["anonymize", str(path), "--qi", "age", "--qi", "zip", "--sensitive", "disease",
            "--criterion", "k-anonymity:k=4", "--method", "mondrian", "--out", f"spark:{out}",
            "--manifest", str(manifest), "--format", "json"]  # fmt: skip
    stdout = io.StringIO()
    assert main(argv, stdout) == 0
    env = json.loads(stdout.getvalue())
    assert env["details"]["backend"] == "spark" and env["outputs"]["release"] == f"spark:{out}"
    assert spark_local.table(out).count() == env["details"]["records_out"] == 40
    assert json.loads(manifest.read_text(encoding="utf-8"))["method"] == "mondrian"
