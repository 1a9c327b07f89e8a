"""Counting backends agree: the same release counted by the in-process Arrow path and by
DuckDB gives equal normalized bucketizations, equal ``check`` envelopes (apart from
``details.backend``) and the same bad-input errors (``airflow_privacy.core.backends``).

The expected counts of the generated tables are also computed independently, from the
rows, by a plain dictionary count (the definition of ``n_b(s)``, Martin et al. 2007,
section 2.1), so the parity is not two backends agreeing on the same mistake."""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import airflow_privacy.core.backends as backends_module
from airflow_privacy.cli import main
from airflow_privacy.core.backends import (
    DUCKDB_MIN_BYTES,
    check_backend,
    choose,
    count_release,
    duck,
    parquet_cells,
)
from airflow_privacy.core.backends.duck_source import quote_identifier
from airflow_privacy.core.io import read_release
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.check import CheckRequest, run_check
from tests.core.bucketization_cells import cells, same

ADULT = Path(__file__).resolve().parents[3] / "airflow_privacy" / "data" / "adult" / "adult.csv.gz"
TOKENS = ["a", "b", "01", "1", "1.0", " ", '"', ",", ";", "\t", "|", "é", "日本", "\u00a0",
          "x y", "'", "NULL", "*"]  # fmt: skip
CRITERIA = ["k-anonymity:k=2", "distinct-l-diversity:l=2", "ck-safety:c=0.7,k=1",
            "t-closeness:t=0.3"]  # fmt: skip

cell = st.lists(st.sampled_from(TOKENS), max_size=3).map("".join)
sensitive_cell = st.one_of(cell, st.none())


def outcome(path: Path, spec: ReleaseSpec, backend: str, **kw: Any) -> Any:
    """The normalized bucketization, or the message of the bad input."""
    try:
        b, name = count_release(path, spec, requested=backend, **kw)
    except InputError as exc:
        return ("error", str(exc))
    assert name == backend
    return b


def expected(rows: list[tuple[Any, ...]], missing_as: str | None) -> dict[tuple[Any, ...], int]:
    """``n_b(s)`` counted from the rows by definition (blank cells as the readers define
    them: None, or text that is empty after stripping whitespace)."""
    out: Counter[tuple[Any, ...]] = Counter()
    for *g, s in rows:
        if s is None or not str(s).strip():
            s = missing_as
        out[(*[str(v) for v in g], str(s))] += 1
    return dict(out)


def write_csv(path: Path, names: list[str], rows: list[tuple[Any, ...]], sep: str) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep, lineterminator="\n")
    w.writerow(names)
    for r in rows:
        w.writerow(["" if v is None else v for v in r])
    path.write_text(buf.getvalue(), encoding="utf-8")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(cell, cell, sensitive_cell), min_size=1, max_size=40),
    groups=st.sampled_from([1, 2]),
    sep=st.sampled_from([",", ";", "\t", "|"]),
    missing_as=st.sampled_from([None, "?", "1"]),
)
def test_csv_parity(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, str, str | None]],
    groups: int,
    sep: str,
    missing_as: str | None,
) -> None:
    path = tmp_path_factory.mktemp("csv") / "r.csv"
    names = ["g0", "g1", "s"]
    write_csv(path, names, rows, sep)
    spec = ReleaseSpec("s", tuple(names[:groups]))
    arrow = outcome(path, spec, "arrow", missing_as=missing_as)
    duck = outcome(path, spec, "duckdb", missing_as=missing_as)
    same(arrow, duck)
    # CSV cells are text; an empty cell is the empty text (a blank sensitive cell)
    cut = [(*r[:groups], r[2]) for r in rows]
    blanks = [r for r in cut if r[-1] is None or not r[-1].strip()]
    if blanks and missing_as is None:
        assert isinstance(arrow, tuple) and "blank cell" in arrow[1]
        first = next(i for i, r in enumerate(cut) if r[-1] is None or not r[-1].strip())
        assert f"data row {first + 1})" in arrow[1]
    else:
        want = expected([tuple("" if v is None else v for v in r[:-1]) + r[-1:] for r in cut],
                        missing_as)  # fmt: skip
        assert cells(duck) == want


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(st.one_of(cell, st.none()), st.integers(-3, 3), sensitive_cell),
        min_size=1,
        max_size=40,
    ),
    missing_as=st.sampled_from([None, "?", "01"]),
    wide=st.booleans(),
)
def test_parquet_parity(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str | None, int, str | None]],
    missing_as: str | None,
    wide: bool,
) -> None:
    path = tmp_path_factory.mktemp("pq") / "r.parquet"
    scale = 10**12 if wide else 1  # a wide range: hashed, not offset, by the Arrow path
    table = pa.table(
        {
            'g 0"': pa.array([r[0] for r in rows], pa.string()),
            "n": pa.array([r[1] * scale for r in rows], pa.int64()),
            "s": pa.array([r[2] for r in rows], pa.string()),
        }
    )
    pq.write_table(table, path)
    spec = ReleaseSpec("s", ('g 0"', "n"))
    arrow = outcome(path, spec, "arrow", missing_as=missing_as)
    duck = outcome(path, spec, "duckdb", missing_as=missing_as)
    same(arrow, duck)
    if not isinstance(duck, tuple):
        assert cells(duck) == expected([(g, n * scale, s) for g, n, s in rows], missing_as)
    else:
        assert "blank cell" in duck[1] or "missing value" in duck[1]


def test_numeric_sensitive_parquet(tmp_path: Path) -> None:
    """Numbers stay numbers until they are labels; nulls published as ``missing_as``."""
    path = tmp_path / "r.parquet"
    pq.write_table(
        pa.table({"g": [1, 1, 2, 2, 2], "s": pa.array([1.5, None, 2.0, 1.5, None])}), path
    )
    spec = ReleaseSpec("s", ("g",))
    for missing_as in (None, "unknown"):
        same(outcome(path, spec, "arrow", missing_as=missing_as),
             outcome(path, spec, "duckdb", missing_as=missing_as))  # fmt: skip


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_many_groups(tmp_path: Path, fmt: str) -> None:
    rng = random.Random(7)
    rows = [(f"{rng.randrange(3000):04d}", str(rng.randrange(40)), rng.choice("ABCDE"))
            for _ in range(20_000)]  # fmt: skip
    path = tmp_path / f"r.{fmt}"
    if fmt == "csv":
        write_csv(path, ["a", "b", "s"], rows, ",")
    else:
        pq.write_table(pa.table({k: [r[i] for r in rows] for i, k in enumerate("abs")}), path)
    spec = ReleaseSpec("s", ("a", "b"))
    duck = outcome(path, spec, "duckdb")
    same(outcome(path, spec, "arrow"), duck)
    assert duck.n_groups > 10_000
    assert cells(duck) == expected(rows, None)


@pytest.mark.parametrize(
    "groups", [["age", "sex", "race"], ["education", "marital-status"], ["native-country"]]
)
def test_adult_bucketizations(groups: list[str]) -> None:
    spec = ReleaseSpec("occupation", tuple(groups))
    same(outcome(ADULT, spec, "arrow"), outcome(ADULT, spec, "duckdb"))


def check_env(path: Path, backend: str, groups: list[str], sensitive: str, **kw: Any) -> Any:
    req = CheckRequest(
        release=ReleaseRef(path=str(path)), sensitive=sensitive, group_columns=groups,
        criteria=CRITERIA, backend=backend, **kw,
    )  # fmt: skip
    env = run_check(req, GateContext()).to_dict()
    assert env["details"].pop("backend") == backend
    env.pop("created_at")  # the clock, not the count
    return env


def test_adult_envelopes() -> None:
    groups = ["age", "sex", "race"]
    arrow = check_env(ADULT, "arrow", groups, "occupation")
    assert arrow == check_env(ADULT, "duckdb", groups, "occupation")
    assert arrow["safe"] is False  # witnesses and reasons compared, not only a verdict


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "01", "1"]),
            st.sampled_from(["x", '"y,"', "é"]),
            st.sampled_from(["Flu", "flu", "01", "1", "HIV"]),
        ),
        min_size=2,
        max_size=60,
    ),
    fmt=st.sampled_from(["csv", "parquet"]),
)
def test_envelope_parity(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, str, str]], fmt: str
) -> None:
    path = tmp_path_factory.mktemp("env") / f"r.{fmt}"
    if fmt == "csv":
        write_csv(path, ["g", "h", "s"], rows, ",")
    else:
        pq.write_table(pa.table({k: [r[i] for r in rows] for i, k in enumerate("ghs")}), path)
    arrow = check_env(path, "arrow", ["g", "h"], "s")
    assert arrow == check_env(path, "duckdb", ["g", "h"], "s")


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


BAD: list[tuple[str, list[str], str]] = [
    ("a,b,s\n1,2,x\n", ["--group", "zz"], "group column 'zz' does not exist"),
    ("a,b,s\n1,2,x\n", ["--sensitive", "zz"], "sensitive column 'zz' does not exist"),
    ("a,a,s\n1,2,x\n", [], "column 'a' appears more than once"),
    ("a,b,s\n1,2, \n1,2,x\n", [], "has 1 blank cell (in data row 1)"),
    ("a,b,s\n1,2,\n1,2,x\n", ["--missing-as", " "], "--missing-as must not be blank"),
    ("a,b,s\n", [], "the release is empty (0 records)"),
    ("a,b,s\n1,2,x\n", ["--delimiter", "ab"], "--delimiter must be one character"),
    ("a,b,s\n1,2,x\n", ["--group", "a", "--group", "a"], "group column 'a' is given more"),
]


@pytest.mark.parametrize(("text", "extra", "message"), BAD)
def test_bad_input_parity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, extra: list[str], message: str
) -> None:
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    base = ["check", str(path), "--criterion", "k-anonymity:k=1"]
    if "--sensitive" not in extra:
        base += ["--sensitive", "s"]
    if "--group" not in extra:
        base += ["--group", "a"]
    seen = []
    for backend in ("arrow", "duckdb"):
        code, _, err = cli([*base, *extra, "--backend", backend], capsys)
        assert code == 2, err
        assert message in err
        seen.append([line for line in err.splitlines() if "error:" in line])
    assert seen[0] == seen[1]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a,b,s\n1,2,x\n1,2,SECRET-VALUE,extra\n", "Expected 3 columns, got 4"),
        (b"a,b,s\n1,2,x\n1,2,\xffSECRET\n", "is not valid UTF-8 (column 's')"),
    ],
)
def test_malformed_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, message: str
) -> None:
    """Exit 2 from both with the same message, naming the file (and the column), quoting no
    cell; past :data:`ARROW_REASON_BYTES` DuckDB's reason, in our words."""
    path = tmp_path / "r.csv"
    path.write_bytes(data)
    argv = ["check", str(path), "--sensitive", "s", "--group", "a",
            "--criterion", "k-anonymity:k=1", "--backend"]  # fmt: skip
    seen = []
    for backend in ("arrow", "duckdb"):
        code, _, err = cli([*argv, backend], capsys)
        assert code == 2
        assert message in err and "SECRET" not in err
        seen.append([line for line in err.splitlines() if "error:" in line])
    assert seen[0] == seen[1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(duck, "ARROW_REASON_BYTES", 0)
        code, _, err = cli([*argv, "duckdb"], capsys)
    assert code == 2 and f"cannot read {str(path)!r} as csv" in err and "SECRET" not in err


def test_glob_characters_in_path(tmp_path: Path) -> None:
    """DuckDB never reads a user's path as a pattern: a file named like a glob is that file."""
    folder = tmp_path / "x[1]*?"
    folder.mkdir()
    path = folder / "r*.parquet"
    pq.write_table(pa.table({"g": ["a", "b"], "s": ["x", "y"]}), path)
    (folder / "r2.parquet").write_bytes(path.read_bytes())
    b = outcome(path, ReleaseSpec("s", ("g",)), "duckdb")
    assert b.n_records == 2


def test_quote_identifier() -> None:
    assert quote_identifier('a "b"') == '"a ""b"""'
    with pytest.raises(InputError):
        quote_identifier("a\x00b")


def test_choice(tmp_path: Path) -> None:
    for name, limit in (("r.csv", 64 << 20), ("r.csv.gz", 4 << 20)):
        path = tmp_path / name
        with path.open("wb") as fh:
            fh.truncate(limit - 1)
        assert choose("auto", path) == "arrow"
        assert choose("duckdb", path) == "duckdb"
        with path.open("ab") as fh:
            fh.truncate(limit)
        assert DUCKDB_MIN_BYTES[name[2:]] == limit
        assert choose("auto", path) == "duckdb"
        assert choose("arrow", path) == "arrow"
    odd = tmp_path / "r.data"
    odd.write_bytes(b"x" * 100)
    assert choose("auto", odd) == "arrow"  # the Arrow reader says it cannot tell the format
    assert choose("auto", odd, "parquet") == "arrow"  # not Parquet: its reader says so
    with pytest.raises(InputError, match="--backend must be one of auto, arrow, duckdb, spark"):
        check_backend("sql")
    assert choose("spark", path) == "spark"  # asked for only: auto never picks it


def test_choice_parquet_by_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parquet: rows x columns counted, from the footer, against DUCKDB_MIN_CELLS; the
    bytes do not matter (a big file of few cells stays in process)."""
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"a": list(range(100)), "b": ["x"] * 100, "s": ["v"] * 100}), path)
    assert parquet_cells(path) == 300
    assert parquet_cells(path, ["a", "s"]) == 200
    monkeypatch.setattr(backends_module, "DUCKDB_MIN_CELLS", 201)
    assert choose("auto", path) == "duckdb"
    assert choose("auto", path, columns=["a", "s"]) == "arrow"
    assert choose("auto", path, columns=["a", "b", "s"]) == "duckdb"
    assert choose("arrow", path) == "arrow"
    monkeypatch.undo()
    big = tmp_path / "big.parquet"  # 8 MiB of bytes, few cells: Arrow
    rng = random.Random(1)
    noise = [rng.randbytes(4096).hex() for _ in range(1024)]
    pq.write_table(pa.table({"s": noise}), big, compression="none")
    assert big.stat().st_size > 4 << 20
    assert choose("auto", big) == "arrow"


def test_cli_backend_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r.csv"
    path.write_text("g,s\na,x\na,y\n", encoding="utf-8")
    for backend, want in (("auto", "arrow"), ("duckdb", "duckdb"), ("arrow", "arrow")):
        code, out, _ = cli(["check", str(path), "--sensitive", "s", "--group", "g",
                            "--criterion", "k-anonymity:k=2", "--backend", backend,
                            "--format", "json"], capsys)  # fmt: skip
        assert code == 0
        assert json.loads(out)["details"]["backend"] == want
    monkeypatch.setitem(DUCKDB_MIN_BYTES, "csv", 10)  # auto past the threshold: DuckDB
    code, out, _ = cli(["check", str(path), "--sensitive", "s", "--group", "g",
                        "--criterion", "k-anonymity:k=2", "--format", "json"], capsys)  # fmt: skip
    assert code == 0 and json.loads(out)["details"]["backend"] == "duckdb"
    bad = ["check", str(path), "--sensitive", "s", "--group", "g",
           "--criterion", "k-anonymity:k=2", "--backend", "spark"]  # fmt: skip
    code, _, err = cli(bad, capsys)
    assert code == 2 and "--backend spark reads Parquet files and folders" in err


def test_entity_and_table_refuse_a_backend(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("g,s,p\na,x,1\n", encoding="utf-8")
    req = CheckRequest(release=ReleaseRef(path=str(path)), sensitive="s", group_columns=["g"],
                       criteria=["k-anonymity:k=1"], entity="p", backend="duckdb")  # fmt: skip
    with pytest.raises(InputError, match="--backend duckdb does not apply with --entity"):
        run_check(req, GateContext())


@pytest.mark.parametrize(
    "text",
    [
        "\ng,s\na,x\nb,z\n",  # a blank line before the header
        "g,s\na,x\n\nb,z\n",  # a blank line between records
        "\r\n\r\ng,s\r\na,x\r\n\r\nb,z\r\n",  # CRLF
        'g,s\na,"x\ny"\nb,z\n',  # a line break inside a quoted value
        "\ufeffg,s\na,x\nb,z",  # a byte-order mark, no final line break
        "g,s\n a ,x \nb,\u00a0z\n",  # spaces kept as they are
    ],
)
def test_csv_layouts(tmp_path: Path, text: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    spec = ReleaseSpec("s", ("g",))
    duck = outcome(path, spec, "duckdb")
    same(outcome(path, spec, "arrow"), duck)
    assert duck.n_records == 2


def typed_columns() -> dict[str, pa.Array]:
    import datetime as dt
    import decimal

    return {
        "date": pa.array([dt.date(2020, 1, 1), dt.date(2021, 5, 2), None]),
        "ts_ms": pa.array(
            [dt.datetime(2020, 1, 1, 1, 2, 3), dt.datetime(2020, 1, 1), None], pa.timestamp("ms")
        ),
        "ts_ns": pa.array([1, 2, None], pa.timestamp("ns")),
        "ts_tz": pa.array(
            [dt.datetime(2020, 1, 1, 1, 2, 3), dt.datetime(2020, 1, 1), None],
            pa.timestamp("us", tz="Europe/Paris"),
        ),
        "bool": pa.array([True, False, None]),
        "f64": pa.array([1.0, 0.1, None]),
        "f32": pa.array([1.0, 0.1, None], pa.float32()),
        "f_nan": pa.array([float("nan"), -0.0, None]),
        "f_zero": pa.array([0.0, -0.0, None]),
        "dec": pa.array(
            [decimal.Decimal("1.50"), decimal.Decimal("2.00"), None], pa.decimal128(5, 2)
        ),
        "i8": pa.array([-1, 5, None], pa.int8()),
        "u64": pa.array([2**63 + 5, 1, None], pa.uint64()),
        "dict": pa.array(["a", "b", None]).dictionary_encode(),
        "lstr": pa.array(["x", " ", None], pa.large_string()),
        "time": pa.array([dt.time(1, 2, 3), dt.time(4, 5, 6), None]),
    }


@pytest.mark.parametrize("name", list(typed_columns()))
def test_parquet_types(tmp_path: Path, name: str) -> None:
    """Labels of typed Parquet columns (dates, time zones, decimals, floats, ...) are the
    same text from both backends, as group and as sensitive column (nulls: refused, or
    published as ``missing_as``)."""
    path = tmp_path / "r.parquet"
    col = typed_columns()[name]
    pq.write_table(pa.table({name: col, "s": ["p", "q", "q"], "g": ["a", "a", "b"]}), path)
    for spec, missing_as in ((ReleaseSpec("s", (name,)), None),
                             (ReleaseSpec(name, ("g",)), None),
                             (ReleaseSpec(name, ("g",)), "unknown")):  # fmt: skip
        arrow = outcome(path, spec, "arrow", missing_as=missing_as)
        same(arrow, outcome(path, spec, "duckdb", missing_as=missing_as))
    two = pa.table({name: col.slice(0, 2), "s": ["p", "q"]})
    pq.write_table(two, path)
    b = outcome(path, ReleaseSpec("s", (name,)), "duckdb")
    assert b.n_groups == 2


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(cell, st.integers(0, 3), sensitive_cell), min_size=1, max_size=60),
    group_size=st.integers(1, 7),
    dictionary_limit=st.sampled_from([1, 1 << 20]),
    missing_as=st.sampled_from([None, "?"]),
    unify_limit=st.sampled_from([0, 2, 1 << 16]),
)
def test_dictionary_reading_unchanged(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[str, int, str | None]],
    group_size: int,
    dictionary_limit: int,
    missing_as: str | None,
    unify_limit: int,
) -> None:
    """The Arrow path reads Parquet text columns as dictionaries (``read_dictionary``):
    the bucketization, in its own order, equals the one counted from the decoded strings,
    with several row groups of different dictionaries (and plain-encoded pages once the
    dictionary page is full: ``dictionary_limit`` 1 byte), row groups re-coded onto one
    dictionary as they are read, or left with their own past ``unify_limit`` values."""
    import airflow_privacy.core.io as core_io
    from airflow_privacy.core.io import read_bucketization

    path = tmp_path_factory.mktemp("rg") / "r.parquet"
    table = pa.table(
        {
            "g": pa.array([r[0] for r in rows], pa.string()),
            "n": pa.array([r[1] for r in rows], pa.int64()),
            "s": pa.array([r[2] for r in rows], pa.string()),
        }
    )
    pq.write_table(
        table, path, row_group_size=group_size, dictionary_pagesize_limit=dictionary_limit
    )
    spec = ReleaseSpec("s", ("g", "n"))
    try:
        decoded = read_release(path, ["g", "n", "s"], sensitive="s", missing_as=missing_as)
        want = Bucketization.from_arrow(decoded, spec)
    except InputError as exc:
        with pytest.raises(InputError) as got:
            read_bucketization(path, spec, missing_as=missing_as)
        assert str(got.value) == str(exc)
        return
    saved = core_io.UNIFY_LIMIT
    core_io.UNIFY_LIMIT = unify_limit
    try:
        got_b = read_bucketization(path, spec, missing_as=missing_as)
    finally:
        core_io.UNIFY_LIMIT = saved
    assert got_b.groups == want.groups and got_b.values == want.values
    assert got_b.counts.tolist() == want.counts.tolist()
    assert cells(got_b) == expected(rows, missing_as)


@pytest.mark.parametrize("kind", [pa.float64(), pa.float32()])
def test_every_nan_is_one_value_on_both_backends(tmp_path: Path, kind: pa.DataType) -> None:
    """NaN with and without its sign bit (and another payload) is one value, labelled
    ``nan``, on Arrow and on DuckDB, as a group and as the sensitive column: 3-anonymity of
    4 NaN records and 3 ones is the same verdict on both (it was UNSAFE on Arrow, which
    kept the bit patterns apart, and SAFE on DuckDB)."""
    import numpy as np

    nan = np.float64("nan")
    values = np.array([nan, np.copysign(nan, -1.0), nan, -abs(nan), 1.0, 1.0, 1.0])
    payload = np.array([0x7FF8000000000001], dtype=np.uint64).view(np.float64)[0]
    values[2] = payload  # a NaN with another payload
    assert np.signbit(values[1]) and np.isnan(values[:4]).all()
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"b": pa.array(values, pa.float64()).cast(kind),
                             "s": ["x", "y", "x", "y", "x", "y", "x"]}), path)  # fmt: skip
    for spec in (ReleaseSpec("s", ("b",)), ReleaseSpec("b", ("s",))):
        arrow = outcome(path, spec, "arrow")
        same(arrow, outcome(path, spec, "duckdb"))
    groups = outcome(path, ReleaseSpec("s", ("b",)), "arrow")
    assert sorted(g[0] for g in groups.groups) == ["1.0", "nan"]
    assert sorted(groups.counts.sum(axis=1).tolist()) == [3, 4]


@pytest.mark.parametrize(
    "text",
    [
        'g,s\n"a\\"b",x\n"a\\"b",y\nc,x\nc,y\n',  # a backslash before a quote (not an escape)
        "g,s,\na,x,\na,y,\nb,x,\nb,y,\n",  # a trailing delimiter: an empty unnamed column
        "g,s\r\na,x\na,y\r\nb,x\nb,y\n",  # line ends of both kinds
        'g,s\na,x\na,y\nb,x\nb,"y\n',  # a quote open at the end of the file
    ],
    ids=["backslash-quote", "trailing-delimiter", "mixed-line-ends", "open-quote-at-eof"],
)
def test_csv_dialects_read_alike(tmp_path: Path, text: str) -> None:
    """Four CSV dialect cases one backend accepted and the other refused: now one reading
    rule, the Arrow reader's (DuckDB counts what Arrow reads when it cannot parse a file
    itself), so the same counts or the same message from both."""
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8", newline="")
    spec = ReleaseSpec("s", ("g",))
    same(outcome(path, spec, "arrow"), outcome(path, spec, "duckdb"))


# ------------------------------------------------------------------ decompression bombs
def _gzip_rows(path: Path, rows: int) -> Path:
    import gzip

    block = b"30,M\n" * 1_000_000
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(b"age,sex\n")
        for _ in range(rows // 1_000_000):
            fh.write(block)
    return path


def test_auto_sees_a_gzip_bomb_for_what_it_is(tmp_path: Path) -> None:
    """A gzip CSV that is small on disk but large once decompressed is counted by DuckDB
    (streaming), not read whole by Arrow; a small one stays with Arrow; a file that is not
    gzip reaches nothing (its reader names the error)."""
    from airflow_privacy.core.backends import DUCKDB_MIN_BYTES, choose, gzip_reaches

    bomb = _gzip_rows(tmp_path / "bomb.csv.gz", 20_000_000)  # 100 MB in about 150 KB
    assert bomb.stat().st_size < DUCKDB_MIN_BYTES["csv.gz"]
    assert gzip_reaches(bomb, DUCKDB_MIN_BYTES["csv"]) and choose("auto", bomb) == "duckdb"
    small = _gzip_rows(tmp_path / "small.csv.gz", 1_000_000)
    assert not gzip_reaches(small, DUCKDB_MIN_BYTES["csv"]) and choose("auto", small) == "arrow"
    fake = tmp_path / "fake.csv.gz"
    fake.write_bytes(b"not gzip at all" * 10_000)
    assert not gzip_reaches(fake, 1) and choose("auto", fake) == "arrow"


def test_a_gzip_bomb_is_checked_in_bounded_memory(tmp_path: Path) -> None:
    """10^8 records in 0.7 MB took 3.06 GB in check when Arrow read it whole (about 30 bytes
    a record; 4 x 10^7 took 1.25 GB): 6 x 10^7 records counted by DuckDB stay under 1 GiB
    (220-260 MB alone), and under a 1 GiB data limit, where Arrow's whole reading fails
    (exit 2). The command's own peak memory is asserted (its VmHWM), not its time;
    ``ru_maxrss``, measured before, also counted the pages of the test worker it was forked
    from, probably the 751 MB seen once in CI."""
    from tests.peak_memory import run_limited, run_measured

    bomb = _gzip_rows(tmp_path / "bomb.csv.gz", 60_000_000)
    out, err, peak, code = run_measured(
        ["check", str(bomb), "--group", "age", "--sensitive", "sex", "--criterion",
         "k-anonymity:k=2", "--format", "json", "--quiet"],
    )  # fmt: skip
    assert code == "0", err[-2000:]
    assert '"safe": true' in out
    assert peak < 1024 * 1024, f"{peak / 1024:.0f} MiB"
    # the limit is real: read whole by Arrow, the same file does not fit in it (refused in
    # one line when Python sees the memory run out; Arrow's C++ may also abort on its own)
    whole = run_limited(
        ["check", str(bomb), "--group", "age", "--sensitive", "sex", "--criterion",
         "k-anonymity:k=2", "--backend", "arrow", "--quiet"],
    )  # fmt: skip
    assert whole.returncode != 0, whole.stdout[-500:]
    assert "Traceback" not in whole.stderr and "internal error" not in whole.stderr
