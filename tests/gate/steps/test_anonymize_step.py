"""The anonymize step, declared once (issue 22): the command line and both operators take
their arguments and rules from the declaration, in their own words; an output that exists is
written over only when asked (issue 27)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from airflow_privacy.cli import main
from airflow_privacy.errors import InputError
from airflow_privacy.gate.anonymize import AnonymizeRequest
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.anonymize import ANONYMIZE, OPTIONS


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    pacsv.write_csv(
        pa.table({"g": [str(i % 4) for i in range(40)], "s": [str(i % 5) for i in range(40)]}),
        path,
    )
    return path


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("key", sorted(OPTIONS))
def test_a_method_option_of_another_method_is_refused_in_each_front_ends_words(
    key: str, table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from airflow_privacy.providers.airflow.operators.anonymize import (
        AnonymizeLatticeOperator,
        BucketizeOperator,
    )

    option, applies = OPTIONS[key]
    other = "mondrian" if applies != "mondrian" else "lattice"
    f = ANONYMIZE.field(key)
    value = (
        f.choices[-1] if f.kind == "choice" else {"number": "0.1", "whole": "5"}.get(f.kind, "b")
    )
    out = tmp_path / "r.csv"
    code, err = _cli(["anonymize", str(table), "--qi", "g", "--sensitive", "s", "--method",
                      other, "--criterion", "k-anonymity:k=2", "--out", str(out), str(f.flag),
                      value], capsys)  # fmt: skip
    assert code == 2 and f"{f.flag} applies to --method {applies} only" in err
    assert not out.exists()
    args = {"task_id": "a", "source": str(table), "release": str(out), "qis": ["g"],
            "sensitive": "s", "criteria": ["k-anonymity:k=2"],
            "method_options": {option: value}}  # fmt: skip
    with pytest.raises(InputError) as info:
        if other == "bucketize":
            BucketizeOperator(**args)
        else:
            AnonymizeLatticeOperator(method=other, **args)
    assert f"method_options: {option!r} applies to method {applies} only" in str(info.value)
    assert "--" not in str(info.value)


def test_an_existing_output_is_written_over_only_with_replace(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, manifest = tmp_path / "r.csv", tmp_path / "r.csv.manifest.json"
    argv = ["anonymize", str(table), "--qi", "g", "--sensitive", "s", "--method", "bucketize",
            "--criterion", "k-anonymity:k=2", "--out", str(out), "--quiet"]  # fmt: skip
    assert _cli(argv, capsys)[0] == 0
    release, written = out.read_bytes(), manifest.read_bytes()
    code, err = _cli([*argv, "--seed", "7"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"the release (--out) {out} exists already: give --replace" in err
    assert out.read_bytes() == release and manifest.read_bytes() == written
    out.unlink()  # the manifest alone is in the way
    code, err = _cli([*argv, "--seed", "7"], capsys)
    assert code == 2 and f"the manifest (--out) {manifest} exists already" in err
    assert not out.exists() and manifest.read_bytes() == written
    assert _cli([*argv, "--seed", "7", "--replace"], capsys)[0] == 0
    assert out.exists() and manifest.read_bytes() != written


def test_the_python_api_runs_the_same_rules(table: Path, tmp_path: Path) -> None:
    """A request built without a front end is checked by the declaration's rules too."""
    req = AnonymizeRequest(
        source=ReleaseRef(path=str(table)), release=ReleaseRef(path=str(tmp_path / "r.csv")),
        qis=["g"], sensitive="s", method="lattice", criteria=["k-anonymity:k=2"],
        qit=ReleaseRef(path=str(tmp_path / "q.csv")),
    )  # fmt: skip
    with pytest.raises(InputError, match=r"--qit and --st apply to --method bucketize only"):
        ANONYMIZE.run(req, GateContext())
    assert not (tmp_path / "r.csv").exists()
    with pytest.raises(InputError, match=r"--interval is given for column 'x', which is not"):
        ANONYMIZE.run(
            AnonymizeRequest(
                source=req.source, release=req.release, qis=["g"], sensitive="s",
                method="lattice", criteria=["k-anonymity:k=2"], intervals={"x": [5]},
            ),
            GateContext(),
        )  # fmt: skip


def test_every_anonymize_option_on_the_command_line_is_declared() -> None:
    """The command's parser has exactly the declared flags and the shared groups' options:
    nothing is added by hand beside the declaration."""
    import argparse

    from airflow_privacy.cli import build_parser
    from airflow_privacy.cli.common import add_criterion_flags

    root = build_parser()
    sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices["anonymize"]
    flags = {s for a in parser._actions for s in a.option_strings} - {"-h", "--help"}
    declared = {s for f in ANONYMIZE.fields if f.flag and not f.positional
                for s in (f.flag, *f.aliases)}  # fmt: skip
    shared = {"--input-format", "--delimiter", "--conn", "--format", "--quiet"}
    alone = argparse.ArgumentParser()
    add_criterion_flags(alone)
    shared |= {s for a in alone._actions for s in a.option_strings}
    shared |= {s for a in parser._actions for s in a.option_strings if s in declared}
    assert flags - shared - declared == set()
    assert declared <= flags
