"""Writing releases: one atomic writer for every step (gzip included), nothing left behind
by a failure or by ``kill -9``, every output readable by the project's own reader; an
output's name must say what is written; a failure while putting outputs in place says which
were written; only this host's dead writers' old temporary files are swept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from airflow_privacy.core.io import read_release
from airflow_privacy.errors import InputError, speaking
from airflow_privacy.gate import tables as gate_tables
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.tables import (
    STALE_AGE,
    check_writable,
    host_tag,
    sweep_stale,
    temp_name,
    write_outputs,
)

ROOT = Path(__file__).resolve().parents[2]


def table(n: int = 50) -> pa.Table:
    return pa.table({"g": [str(i % 7) for i in range(n)], "s": [f"v{i % 3}" for i in range(n)]})


@pytest.mark.parametrize("name", ["r.csv", "r.csv.gz", "r.parquet", "r.tsv"])
def test_every_format_round_trips_through_the_reader(tmp_path: Path, name: str) -> None:
    t = table()
    write_outputs({ReleaseRef(path=str(tmp_path / name)): t}, GateContext())
    back = read_release(tmp_path / name)
    assert back.column("g").to_pylist() == t.column("g").to_pylist()
    if name.endswith(".gz"):  # really gzip, not plain text under a .gz name
        assert (tmp_path / name).read_bytes()[:2] == b"\x1f\x8b"
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left


def test_a_failure_changes_nothing_and_leaves_nothing(tmp_path: Path) -> None:
    old = tmp_path / "r.parquet"
    old.write_bytes(b"old")
    outputs = {
        ReleaseRef(path=str(old)): table(),
        ReleaseRef(path=str(tmp_path / "m.json")): {"bad": object()},  # cannot serialize
    }
    with pytest.raises(TypeError):
        write_outputs(outputs, GateContext())
    assert old.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.parquet"]


def test_outputs_are_checked_before_anything_is_written(tmp_path: Path) -> None:
    good = ReleaseRef(path=str(tmp_path / "ok.parquet"))
    for bad, message in (
        (ReleaseRef(path=str(tmp_path / "nope" / "r.csv")), "does not exist"),
        (ReleaseRef(path=str(tmp_path)), "is a folder"),
        (ReleaseRef(path=str(tmp_path / "r.xlsx")), "cannot tell the format"),
    ):
        with pytest.raises(InputError, match=message):
            write_outputs({good: table(), bad: table()}, GateContext())
        assert not (tmp_path / "ok.parquet").exists()


WRITER = """
import os, sys, time
import pyarrow as pa
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate import tables

real = tables._serialize
def slow(content, name, sink):
    real(content, name, sink)
    sys.stdout.write(f"written {os.getpid()}\\n"); sys.stdout.flush()
    time.sleep(30)  # killed here, with the temporary file written
tables._serialize = slow
t = pa.table({"g": [str(i) for i in range(20000)]})
for _ in range(int(sys.argv[2])):  # one writer at a time, forked from this warmed process
    pid = os.fork()
    if pid == 0:
        tables.write_outputs({ReleaseRef(path=sys.argv[1]): t}, GateContext())
        os._exit(0)
    os.waitpid(pid, 0)
"""


def test_kill_9_while_writing_leaves_no_temporary_files(tmp_path: Path) -> None:
    """50 writers killed with SIGKILL in the middle of writing: no ``.tmp`` left (unnamed
    temporary files vanish with their process), and the old file is intact. The writers are
    forked one at a time from one process that imported the writing code once."""
    target = tmp_path / "release.csv.gz"
    write_outputs({ReleaseRef(path=str(target)): table()}, GateContext())
    before = target.read_bytes()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), "50"], stdout=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None
    for _ in range(50):
        word, pid = proc.stdout.readline().split()
        assert word == b"written"
        os.kill(int(pid), signal.SIGKILL)
    assert proc.wait(timeout=120) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release.csv.gz"]
    assert target.read_bytes() == before


def _dead_pid() -> int:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(dead.stdout.strip())


def _age(path: Path, seconds: float) -> None:
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_stale_named_temporaries_of_dead_writers_are_swept(tmp_path: Path) -> None:
    """Only this host's, of a process that is gone, older than STALE_AGE."""
    host, dead = host_tag(), _dead_pid()
    stale = tmp_path / f".r.parquet.{host}.{dead}.0123abcd.tmp"
    young = tmp_path / f".r.csv.{host}.{dead}.0123abcd.tmp"  # dead, but just written
    mine = tmp_path / f".r.parquet.{host}.{os.getpid()}.0123abcd.tmp"  # alive
    other = tmp_path / f".r.parquet.otherhost-0123abcd.{dead}.0123abcd.tmp"  # NFS neighbour
    legacy = tmp_path / f".r.parquet.{dead}.0123abcd.tmp"  # no host: whose is unknown
    for p in (stale, young, mine, other, legacy):
        p.write_bytes(b"half")
    for p in (stale, mine, other, legacy):
        _age(p, STALE_AGE + 60)
    assert sweep_stale(tmp_path) == 1
    assert not stale.exists()
    assert young.exists() and mine.exists() and other.exists() and legacy.exists()
    assert sweep_stale(tmp_path, min_age=0) == 1  # the young one, once old enough
    assert not young.exists()


def test_a_named_temporary_file_carries_host_and_process(tmp_path: Path) -> None:
    name = temp_name(tmp_path / "r.parquet").name
    assert name.startswith(f".r.parquet.{host_tag()}.{os.getpid()}.") and name.endswith(".tmp")
    assert gate_tables._STALE.match(name)
    long = "x" * gate_tables._NAME_MAX
    assert len(temp_name(tmp_path / long).name.encode()) <= 255


def test_a_writer_without_o_tmpfile_sweeps_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where O_TMPFILE is missing the named temporary file is renamed into place."""
    monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    old = tmp_path / f".r.csv.{host_tag()}.{_dead_pid()}.0123abcd.tmp"
    old.write_bytes(b"half")
    _age(old, STALE_AGE + 60)
    write_outputs({ReleaseRef(path=str(tmp_path / "r.csv")): table()}, GateContext())
    assert [p.name for p in tmp_path.iterdir()] == ["r.csv"]


@pytest.mark.parametrize(
    ("name", "kind", "message"),
    [
        ("r.html", "table", "is a table: name it .csv, .csv.gz or .parquet, not .html"),
        ("ind.json", "table", "is a table: name it .csv"),
        ("r.xlsx", "table", "cannot tell the format to write"),
        ("r.parquet.gz", "table", "Parquet compresses inside the file"),
        ("m.csv", "json", "is written as JSON: its name must end in .json"),
        ("r.txt", "html", "is written as HTML: its name must end in .html or .htm"),
    ],
)
def test_an_output_name_must_say_what_is_written(
    tmp_path: Path, name: str, kind: gate_tables.Kind, message: str
) -> None:
    with pytest.raises(InputError, match=message.replace(".", r"\.")):
        check_writable(ReleaseRef(path=str(tmp_path / name)), "the output", kind=kind)
    with pytest.raises(InputError, match="must end in"):  # a URI's name too
        check_writable(ReleaseRef(path="s3://bucket/r.csv"), "the output", kind="json")
    for ok, k in (("r.csv.gz", "table"), ("m.json", "json"), ("r.HTM", "html"), ("x.svg", "file")):
        check_writable(ReleaseRef(path=str(tmp_path / ok)), "the output", kind=k)  # type: ignore[arg-type]


def test_check_writable_names_the_option_in_each_front_end(tmp_path: Path) -> None:
    ref = ReleaseRef(path=str(tmp_path / "nodir" / "ind.csv"))
    with pytest.raises(InputError) as caught:
        check_writable(ref, "the individuals file", option="individuals")
    assert "of the individuals file (--individuals) does not exist" in str(caught.value)
    with speaking("airflow"):
        assert "of the individuals file (individuals) does not exist" in str(caught.value)
    with pytest.raises(InputError, match=r"^folder .* of the posterior table does not exist$"):
        check_writable(ReleaseRef(path=str(tmp_path / "nodir" / "p.csv")), "the posterior table")


def test_write_outputs_refuses_content_its_name_does_not_say(tmp_path: Path) -> None:
    """A manifest (JSON) under a .csv name is refused before anything is written."""
    outputs = {
        ReleaseRef(path=str(tmp_path / "r.csv")): table(),
        ReleaseRef(path=str(tmp_path / "m.csv")): {"method": "bucketize"},
    }
    with pytest.raises(InputError, match="is written as JSON"):
        write_outputs(outputs, GateContext())
    assert list(tmp_path.iterdir()) == []


class _Store:
    """Connections to an object store that refuses some uploads."""

    def __init__(self, refuse: set[str]) -> None:
        self.refuse = refuse
        self.objects: dict[str, bytes] = {}

    def write_bytes(self, uri: str, conn: str | None, data: bytes) -> None:
        if uri in self.refuse:
            raise OSError(13, "access denied")
        self.objects[uri] = data


def test_a_failed_upload_says_what_was_written_and_renames_nothing(tmp_path: Path) -> None:
    """Uploads go first: one refused leaves every local file as it was, and the message
    names the outputs written (the earlier upload) and those not."""
    old = tmp_path / "r.csv"
    old.write_text("old")
    store = _Store(refuse={"s3://b/two.csv"})
    ctx = GateContext(connections=store)  # type: ignore[arg-type]
    outputs = {
        ReleaseRef(path=str(old)): table(),
        ReleaseRef(path="s3://b/one.csv"): table(),
        ReleaseRef(path="s3://b/two.csv"): table(),
    }
    with pytest.raises(InputError) as caught:
        write_outputs(outputs, ctx)
    msg = str(caught.value)
    assert msg.startswith("cannot write 's3://b/two.csv': access denied; written: 's3://b/one.csv'")
    assert (
        f"not written (the old file, if any, is unchanged): {str(old)!r}, 's3://b/two.csv'" in msg
    )
    assert "nothing was written" not in msg
    assert old.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["r.csv"]
    assert list(store.objects) == ["s3://b/one.csv"]


def test_a_failed_rename_says_which_outputs_are_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    real = os.replace

    def replace(src: Any, dst: Any) -> None:
        if Path(dst) == b:
            raise OSError(28, "disk full")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(InputError) as caught:
        write_outputs({ReleaseRef(path=str(a)): table(), ReleaseRef(path=str(b)): table()},
                      GateContext())  # fmt: skip
    msg = str(caught.value)
    assert f"cannot write {str(b)!r}: disk full; written: {str(a)!r}; not written" in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]  # no temporary file left


def test_an_object_is_streamed_to_a_local_file_not_held_in_memory(tmp_path: Path) -> None:
    """``download`` copies an object 1 MiB at a time (pyarrow's file systems on the command
    line): the copy equals the object, and a missing object is bad input naming it."""
    import os

    from airflow_privacy.errors import InputError
    from airflow_privacy.gate.context import LocalConnections

    src = tmp_path / "big.bin"
    data = os.urandom(3 * (1 << 20) + 17)
    src.write_bytes(data)
    target = tmp_path / "copy.bin"
    LocalConnections().download(src.as_uri(), None, str(target))
    assert target.read_bytes() == data
    with pytest.raises(InputError, match="does not exist"):
        LocalConnections().download((tmp_path / "nope.bin").as_uri(), None, str(target))


def test_an_input_whose_name_is_too_long_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file name over 255 bytes (the extended fuzz): the reference is not a folder and the
    command says the file cannot be read (exit 2), where looking at it raised (exit 3)."""
    import io

    from airflow_privacy.cli import main
    from airflow_privacy.gate.refs import ReleaseRef

    long = str(tmp_path / ("x" * 300 + ".csv"))
    assert ReleaseRef(path=long).is_folder is False
    for argv in (
        ["report", long, "--sensitive", "s", "--group", "g", "--out", str(tmp_path / "r.html")],
        ["anonymize", long, "--qi", "g", "--sensitive", "s", "--method", "bucketize",
         "--criterion", "k-anonymity:k=2", "--out", str(tmp_path / "a.csv")],
    ):  # fmt: skip
        assert main([*argv, "--quiet"], out=io.StringIO()) == 2, capsys.readouterr().err
        assert "internal error" not in capsys.readouterr().err
