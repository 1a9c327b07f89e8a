"""Bad input files end in one clear InputError (exit 2 on the command line), never in a
hang, an exhausted memory, an internal error or a silently misread column: non-regular
files, huge or invalid headers, byte-order marks, duplicate columns, nested Parquet
columns, corrupt files, blank sensitive cells."""

from __future__ import annotations

import gzip
import io
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_privacy.cli import main
from airflow_privacy.core.composition.files import read_population_file, read_release_file
from airflow_privacy.core.io import column_names, read_bucketization, read_release, sniff_delimiter
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError, speaking

SECRET = "HIV-positive"  # a sensitive value that must never appear in a message


@dataclass(frozen=True)
class BadFile:
    """A bad input file, the columns to ask for, and what its message must name."""

    path: Path
    columns: list[str] | None
    names: tuple[str, ...]
    fmt: str | None = None


def _big_header(path: Path, size: int = 30_000_000) -> None:
    with path.open("w", encoding="utf-8") as fh:
        chunk = "x" * 1_000_000
        for _ in range(size // len(chunk)):
            fh.write(chunk)
        fh.write(",s\n1,a\n")


def _gzip_truncated(path: Path) -> None:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as gz:
        gz.write(b"g,s\n" + b"".join(b"%d,v%d\n" % (i, i) for i in range(200_000)))
    data = buf.getvalue()
    path.write_bytes(data[: len(data) // 2])


def _parquet_truncated(path: Path) -> None:
    buf = io.BytesIO()
    pq.write_table(pa.table({"g": list(range(1000)), "s": ["x"] * 1000}), buf)
    data = buf.getvalue()
    path.write_bytes(data[: len(data) - 20])


def make_bad_files(folder: Path) -> dict[str, BadFile]:
    """Every kind of bad input file the readers must refuse (the test helper)."""
    out: dict[str, BadFile] = {}
    big = folder / "big_header.csv"
    _big_header(big)
    out["30 MB header"] = BadFile(big, None, ("big_header.csv", "1 MiB"))
    header = folder / "bad_header.csv"
    header.write_bytes(b"g,\xffs\n1,a\n")
    out["invalid UTF-8 header"] = BadFile(header, None, ("bad_header.csv", "UTF-8"))
    data = folder / "bad_data.csv"
    data.write_bytes(b"g,s\n1,a\n2,\xe9t\xe9\n")
    out["invalid UTF-8 data"] = BadFile(data, ["g", "s"], ("bad_data.csv", "'s'", "UTF-8"))
    dup = folder / "dup.csv"
    dup.write_bytes(b"\xef\xbb\xbfeducation,age, education\nBachelors,30,Masters\n")
    out["duplicate columns"] = BadFile(dup, ["age"], ("dup.csv", "'education'"))
    dup_pq = folder / "dup.parquet"
    pq.write_table(pa.table([pa.array(["a"]), pa.array(["b"])], names=["edu", "edu"]), dup_pq)
    out["duplicate Parquet columns"] = BadFile(dup_pq, None, ("dup.parquet", "'edu'"))
    nested = folder / "nested.parquet"
    pq.write_table(
        pa.table(
            {
                "g": ["a"],
                "tags": pa.array([["x", "y"]]),
                "big_tags": pa.array([["x"]], pa.large_list(pa.string())),
                "point": pa.array([{"x": 1}]),
                "attrs": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64())),
                "blob": pa.array([b"\x00\x01"]),
                "big_blob": pa.array([b"\x00"], pa.large_binary()),
                "fixed": pa.array([b"ab"], pa.binary(2)),
                "coded": pa.array([b"ab"]).dictionary_encode(),
            }
        ),
        nested,
    )
    for col in ("tags", "big_tags", "point", "attrs", "blob", "big_blob", "fixed", "coded"):
        out[f"Parquet column of type {col}"] = BadFile(nested, ["g", col], ("nested.parquet", col))
    trunc_pq = folder / "truncated.parquet"
    _parquet_truncated(trunc_pq)
    out["truncated Parquet"] = BadFile(trunc_pq, None, ("truncated.parquet",))
    trunc_gz = folder / "truncated.csv.gz"
    _gzip_truncated(trunc_gz)
    out["truncated gzip"] = BadFile(trunc_gz, None, ("truncated.csv.gz",))
    not_gz = folder / "not_gzip.csv.gz"
    not_gz.write_bytes(b"g,s\n1,a\n")
    out["not gzip"] = BadFile(not_gz, None, ("not_gzip.csv.gz",))
    ragged = folder / "ragged.csv"
    ragged.write_text(f"g,x,s\n1,2,a\n3,{SECRET}\n", encoding="utf-8")
    out["ragged CSV"] = BadFile(ragged, None, ("ragged.csv", "Expected 3 columns, got 2"))
    unterminated = folder / "unterminated.csv"
    unterminated.write_text(f'g,s\n1,a\n2,"{SECRET}\n', encoding="utf-8")
    out["unterminated quote"] = BadFile(unterminated, None, ("unterminated.csv", "'s'"))
    out["a device"] = BadFile(Path("/dev/zero"), None, ("/dev/zero", "not a regular file"), "csv")
    return out


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, BadFile]:
    return make_bad_files(tmp_path_factory.mktemp("bad"))


def one_input_error(fn: Callable[[], Any], *names: str) -> str:
    """``fn()`` raises exactly an InputError whose message is one line naming ``names``."""
    with pytest.raises(InputError) as info:
        fn()
    message = str(info.value)
    assert "\n" not in message and "\r" not in message, message
    assert SECRET not in message, message
    for name in names:
        assert name in message, (name, message)
    return message


CASES = [
    "30 MB header",
    "invalid UTF-8 header",
    "invalid UTF-8 data",
    "duplicate columns",
    "duplicate Parquet columns",
    *(
        f"Parquet column of type {c}"
        for c in ("tags", "big_tags", "point", "attrs", "blob", "big_blob", "fixed", "coded")
    ),
    "truncated Parquet",
    "truncated gzip",
    "not gzip",
    "ragged CSV",
    "unterminated quote",
    "a device",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_file_is_one_input_error(case: str, bad_files: dict[str, BadFile]) -> None:
    bad = bad_files[case]
    one_input_error(lambda: read_release(bad.path, bad.columns, bad.fmt), *bad.names)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", ["30 MB header", "invalid UTF-8 header", "duplicate columns"])
def test_header_readers_refuse_bad_headers(case: str, bad_files: dict[str, BadFile]) -> None:
    bad = bad_files[case]
    one_input_error(lambda: column_names(bad.path), *bad.names)
    if case == "30 MB header":
        one_input_error(lambda: sniff_delimiter(bad.path), *bad.names)


@pytest.mark.parametrize("case", CASES)
def test_bad_file_exits_2_on_the_command_line(
    case: str, bad_files: dict[str, BadFile], capsys: pytest.CaptureFixture[str]
) -> None:
    bad = bad_files[case]
    sensitive, group = "s", "g"
    if case == "duplicate columns":
        sensitive, group = "age", "education"
    elif case.startswith("Parquet column"):
        sensitive = (bad.columns or [])[-1]
    argv = ["check", str(bad.path), "--sensitive", sensitive, "--group", group,
            "--criterion", "k-anonymity", "--k", "1", "--quiet"]  # fmt: skip
    if bad.fmt:
        argv += ["--input-format", bad.fmt]
    code = main(argv, io.StringIO())
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("airflow-privacy: error: "), err
    assert SECRET not in err


def test_header_is_read_with_a_bound(tmp_path: Path) -> None:
    """A 30 MB header line is refused after reading 1 MiB of it: the reading process grows
    by far less than the line (measured in a child process, against a small file)."""
    big = tmp_path / "big.csv"
    _big_header(big)
    small = tmp_path / "small.csv"
    small.write_text("g,s\n1,a\n", encoding="utf-8")
    code = textwrap.dedent(
        """
        import resource, sys
        import pyarrow, pyarrow.csv
        from airflow_privacy.core.io import read_release
        from airflow_privacy.errors import InputError
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            read_release(sys.argv[1])
        except InputError:
            pass
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
        """
    )

    def growth(path: Path) -> int:
        proc = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 0, proc.stderr
        return int(proc.stdout.strip())  # KiB on Linux

    assert growth(big) - growth(small) < 12_000


@pytest.fixture
def fifo() -> Iterator[Path]:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    folder = Path(tempfile.mkdtemp())
    path = folder / "release.csv"
    os.mkfifo(path)
    try:
        yield path
    finally:
        path.unlink()
        folder.rmdir()


def _within(seconds: float, fn: Callable[[], Any], unblock: Path) -> BaseException | None:
    """Run ``fn`` in a thread; fail (after unblocking a reader stuck on the FIFO) if it
    does not finish in time. Returns what it raised."""
    raised: list[BaseException] = []

    def target() -> None:
        try:
            fn()
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        fd = os.open(unblock, os.O_WRONLY | os.O_NONBLOCK)  # a writer lets the open return
        os.close(fd)
        worker.join(5)
        pytest.fail(f"reading the FIFO {unblock} hung for {seconds} s")
    return raised[0] if raised else None


@pytest.mark.parametrize(
    "reader",
    [
        lambda p: read_release(p),
        lambda p: column_names(p),
        lambda p: sniff_delimiter(p),
        lambda p: read_bucketization(p, ReleaseSpec("s", ("g",))),
        lambda p: read_release_file(p, qis=["g"], sensitive="s"),
        lambda p: read_population_file(p, ["g"]),
    ],
    ids=[
        "read_release",
        "column_names",
        "sniff_delimiter",
        "read_bucketization",
        "read_release_file",
        "read_population_file",
    ],
)
def test_fifo_is_refused_without_hanging(fifo: Path, reader: Callable[[Path], Any]) -> None:
    exc = _within(10, lambda: reader(fifo), fifo)
    assert isinstance(exc, InputError), exc
    message = str(exc)
    assert "FIFO" in message and "release.csv" in message and "\n" not in message


def test_fifo_exits_2_on_the_command_line(fifo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", str(fifo), "--sensitive", "s", "--group", "g",
            "--criterion", "k-anonymity", "--k", "1", "--quiet"]  # fmt: skip
    codes: list[int] = []
    exc = _within(10, lambda: codes.append(main(argv, io.StringIO())), fifo)
    assert exc is None and codes == [2]
    assert "FIFO" in capsys.readouterr().err


@pytest.mark.parametrize("what", ["knowledge", "criteria", "hierarchy"])
def test_a_text_input_swapped_for_a_fifo_is_named_as_what_it_is(
    fifo: Path, what: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check after opening (a file swapped for a FIFO once it was looked at) names the
    input by its role, never "release" for a knowledge or criteria file."""
    from airflow_privacy.core import io as core_io

    monkeypatch.setattr(core_io, "_existing_file", lambda path, what="release": Path(path))
    exc = _within(10, lambda: core_io.read_text(fifo, what), fifo)
    assert isinstance(exc, InputError), exc
    assert str(exc).startswith(f"{what} path {str(fifo)!r} is a FIFO (named pipe)")
    assert "release" not in str(exc).replace("release.csv", "")


def test_socket_is_refused() -> None:
    folder = Path(tempfile.mkdtemp())
    path = folder / "s.csv"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        one_input_error(lambda: read_release(path), "s.csv", "socket")
    finally:
        sock.close()
        path.unlink()
        folder.rmdir()


# ------------------------------------------------------------------ byte-order marks
@pytest.mark.parametrize("name", ["bom.csv", "bom.csv.gz", "bom.tsv"])
def test_byte_order_mark_is_stripped(tmp_path: Path, name: str) -> None:
    sep = "\t" if name.endswith(".tsv") else ","
    text = f"\ufeffage{sep}sex{sep}disease\n20-29{sep}M{sep}flu\n30-39{sep}F{sep}cold\n"
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    assert column_names(path) == ["age", "sex", "disease"]
    assert sniff_delimiter(path) == sep
    assert read_release(path).column_names == ["age", "sex", "disease"]
    assert read_release(path, ["age"]).column("age").to_pylist() == ["20-29", "30-39"]
    b = read_bucketization(path, ReleaseSpec("disease", ("age",)))
    assert b.groups == (("20-29",), ("30-39",))


def test_header_names_are_stripped_and_quoted_names_may_hold_delimiters(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('age ,"sex, as given", s\n20-29,M,flu\n', encoding="utf-8")
    assert column_names(path) == ["age", "sex, as given", "s"]
    table = read_release(path, ["sex, as given", "age"])
    assert table.column_names == ["sex, as given", "age"]
    assert table.to_pylist() == [{"sex, as given": "M", "age": "20-29"}]


def test_duplicate_group_column_is_not_silently_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`check --group education` on a CSV with two `education` columns used the first."""
    path = tmp_path / "two.csv"
    path.write_text("education,s,education \nBachelors,flu,Masters\n", encoding="utf-8")
    argv = ["check", str(path), "--sensitive", "s", "--group", "education",
            "--criterion", "k-anonymity", "--k", "1", "--quiet"]  # fmt: skip
    assert main(argv, io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "'education'" in err and "two.csv" in err and "more than once" in err


def test_numeric_parquet_columns_still_count_as_labels(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(
        pa.table(
            {
                "bucket": pa.array([1, 1, 2], pa.int32()),
                "ratio": [0.5, 0.5, 1.5],
                "s": pa.array(["a", "b", "a"]).dictionary_encode(),
            }
        ),
        path,
    )
    table = read_release(path, ["bucket", "ratio", "s"])
    assert table.schema.field("bucket").type == pa.int32()
    b = read_bucketization(path, ReleaseSpec("s", ("bucket", "ratio")))
    assert b.groups == (("1", "0.5"), ("2", "1.5"))


# ---------------------------------------------------------------- blank sensitive cells
@pytest.fixture
def blank_csv(tmp_path: Path) -> Path:
    path = tmp_path / "adult.csv"
    rows = ["age,occupation"] + [f"{20 + i % 3},Sales" for i in range(15)]
    rows[7] = "20,"  # data row 7: empty
    rows[12] = "21,   "  # whitespace only
    rows[14] = '22,""'  # quoted empty
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_blank_sensitive_cells_are_refused_naming_column_file_count_and_row(
    blank_csv: Path,
) -> None:
    spec = ReleaseSpec("occupation", ("age",))
    message = one_input_error(lambda: read_bucketization(blank_csv, spec))
    assert message == (
        "column 'occupation' of adult.csv has 3 blank cells (the first in data row 7); "
        "fill them, or pass --missing-as VALUE to publish them as VALUE"
    )
    with speaking("airflow"), pytest.raises(InputError, match="pass missing_as VALUE"):
        read_bucketization(blank_csv, spec)


def test_missing_as_publishes_blank_cells_as_that_value(blank_csv: Path) -> None:
    spec = ReleaseSpec("occupation", ("age",))
    b = read_bucketization(blank_csv, spec, missing_as="Unknown")
    assert set(b.values) == {"Sales", "Unknown"}
    assert int(b.counts[:, b.values.index("Unknown")].sum()) == 3
    table = read_release(blank_csv, ["age"], sensitive="occupation", missing_as=" Unknown ")
    assert table.column_names == ["age", "occupation"]
    assert sorted(set(table.column("occupation").to_pylist())) == [" Unknown ", "Sales"]
    for bad in ("", "   "):
        with pytest.raises(InputError, match="--missing-as must not be blank"):
            read_bucketization(blank_csv, spec, missing_as=bad)


def test_group_column_blanks_are_not_touched(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("g,s\n,a\n x ,b\n", encoding="utf-8")
    table = read_release(path, sensitive="s")
    assert table.column("g").to_pylist() == ["", " x "]


def test_blank_sensitive_in_parquet_nulls_and_dictionaries(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(
        pa.table({"g": ["a", "b", "c", "d"],
                  "s": pa.array(["x", None, " ", "y"]).dictionary_encode(),
                  "n": pa.array([1, 2, None, 4], pa.int64())}),
        path,
    )  # fmt: skip
    one_input_error(
        lambda: read_bucketization(path, ReleaseSpec("s", ("g",))),
        "'s'", "r.parquet", "2 blank cells", "data row 2",
    )  # fmt: skip
    b = read_bucketization(path, ReleaseSpec("s", ("g",)), missing_as="?")
    assert sorted(b.values) == ["?", "x", "y"]
    one_input_error(
        lambda: read_bucketization(path, ReleaseSpec("n", ("g",))), "1 blank cell (in data row 3)"
    )
    b = read_bucketization(path, ReleaseSpec("n", ("g",)), missing_as="unknown")
    assert sorted(b.values) == ["1", "2", "4", "unknown"]


def test_composition_readers_check_the_sensitive_column(tmp_path: Path) -> None:
    path = tmp_path / "rel.csv"
    path.write_text("age,s\n20-29,flu\n20-29,\n30-39,cold\n", encoding="utf-8")
    one_input_error(
        lambda: read_release_file(path, qis=["age"], sensitive="s"), "'s'", "rel.csv", "row 2"
    )
    rf = read_release_file(path, qis=["age"], sensitive="s", missing_as="Unknown")
    assert set(rf.release.values) == {"flu", "cold", "Unknown"}
    people = tmp_path / "people.csv"
    people.write_text("age,s\n25,flu\n35, \n", encoding="utf-8")
    assert read_population_file(people, ["age"]).n == 2  # no sensitive column read
    one_input_error(lambda: read_population_file(people, ["age"], sensitive="s"), "'s'", "row 2")
    pop = read_population_file(people, ["age"], sensitive="s", missing_as="Unknown")
    assert pop.sensitive == ("flu", "Unknown")


def test_from_counts_refuses_or_replaces_blank_sensitive_values() -> None:
    rows = [("a", "x", 3), ("a", None, 2), ("b", "  ", 1), ("b", "", 0), ("b", "y", 4)]
    message = one_input_error(lambda: Bucketization.from_counts(rows, ("g",), "s"))
    assert message == (
        "column 's' of the count rows has 3 blank cells (the first in count row 1); "
        "fill them, or pass --missing-as VALUE to publish them as VALUE"
    )
    b = Bucketization.from_counts(rows, ("g",), "s", missing_as="Unknown")
    assert b.to_dict()["values"] == ["x", "Unknown", "y"]
    assert b.counts.tolist() == [[3, 2, 0], [0, 1, 4]]
    one_input_error(
        lambda: Bucketization.from_counts(rows[:2], ("g",), "s", source="table t"), "table t"
    )
    with pytest.raises(InputError, match="missing group value"):
        Bucketization.from_counts([(None, "x", 1)], ("g",), "s")


def test_manifest_must_be_a_regular_small_file(tmp_path: Path, fifo: Path) -> None:
    path = tmp_path / "rel.csv"
    path.write_text("age,s\n20-29,flu\n", encoding="utf-8")
    exc = _within(10, lambda: read_release_file(path, manifest=fifo), fifo)
    assert isinstance(exc, InputError) and "not a regular file" in str(exc)


@pytest.mark.parametrize("delimiter", [";;", '"', "\n"])
def test_a_bad_delimiter_is_one_input_error(tmp_path: Path, delimiter: str) -> None:
    path = tmp_path / "r.csv"
    path.write_text("g;s\n1;a\n", encoding="utf-8")
    one_input_error(lambda: read_release(path, delimiter=delimiter), "--delimiter")


def test_python_and_arrow_agree_on_whitespace() -> None:
    """A dictionary of a few values is checked for blank values in Python (``str.strip``),
    a larger one by Arrow's ``utf8_trim_whitespace``: both must strip exactly the same code
    points, or one reader would call a cell blank that the other publishes."""
    import pyarrow.compute as pc

    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    trimmed = pc.utf8_length(pc.utf8_trim_whitespace(pa.array(chars))).to_pylist()
    arrow = {ch for ch, n in zip(chars, trimmed, strict=True) if n == 0}
    assert arrow == {ch for ch in chars if ch.isspace()}
    assert len(arrow) == 29


@pytest.mark.parametrize("few", [True, False])
def test_dictionary_values_are_blank_alike_in_python_and_in_arrow(
    few: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_has_blank`` gives the same answer on both of its paths (Python for a few values,
    Arrow's kernel past ``_FEW_VALUES``), for blank and non-blank values."""
    import airflow_privacy.core.io as core_io

    monkeypatch.setattr(core_io, "_FEW_VALUES", 4096 if few else 0)
    cases = {
        ("a", "b"): False,
        ("a", ""): True,
        ("a", " \t\u3000"): True,
        ("a", "\u200b"): False,  # zero-width space: not whitespace for either
        ("x\u2028", "y"): False,
        ("\x1c",): True,
    }
    for values, blank in cases.items():
        assert core_io._has_blank(pa.array(list(values), pa.string())) is blank, values
        assert core_io._has_blank(pa.array(list(values), pa.large_string())) is blank, values
    assert core_io._has_blank(pa.array(["a", None], pa.string())) is True
    # (the readers refuse text that is not UTF-8 before they look for blanks; here both
    # paths leave it to Arrow, which raises)
    with pytest.raises(pa.ArrowInvalid):
        core_io._has_blank(pa.array([b"\xff", b" "], pa.binary()).view(pa.string()))
