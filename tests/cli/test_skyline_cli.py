"""The skyline on the command line: ``check --criterion skyline --point l,k,m,c`` and
``skyline --c C``; exit codes, JSON contract, text tables, plots, bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest

from airflow_privacy.cli import main
from airflow_privacy.core.criteria.registry import validate
from airflow_privacy.errors import InputError

# The slides' example: group 1 {AIDS, Flu, Flu, AIDS}, group 2 {Flu, Cancer, Cancer, AIDS}
SLIDES = [
    ("1", "Ann", "AIDS"), ("1", "Bob", "Flu"), ("1", "Cary", "Flu"), ("1", "Dick", "AIDS"),
    ("2", "Ed", "Flu"), ("2", "Frank", "Cancer"), ("2", "Gary", "Cancer"), ("2", "Tom", "AIDS"),
]  # fmt: skip


@pytest.fixture
def slides_csv(tmp_path: Path) -> Path:
    path = tmp_path / "slides.csv"
    lines = ["group,name,disease"] + [",".join(row) for row in SLIDES]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    err = capsys.readouterr().err
    return code, out.getvalue(), err


def base(path: Path) -> list[str]:
    return [str(path), "--sensitive", "disease", "--group", "group", "--quiet"]


# --------------------------------------------------------------------------- check
def test_check_skyline_json_contract(slides_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", *base(slides_csv), "--criterion", "skyline", "--format", "json",
            "--point", "0,0,0,0.6", "--point", "1,1,0,0.99"]  # fmt: skip
    code, out, _ = run(argv, capsys)
    data = json.loads(out)
    assert code == 1 and data["safe"] is False and data["step"] == "check"
    (result,) = data["results"]
    assert result["criterion"] == "skyline" and result["safe"] is False
    assert result["parameters"]["points"] == [[0, 0, 0, 0.6], [1, 1, 0, 0.99]]
    points = result["details"]["points"]
    # no knowledge: 1/2 (Cancer in group 2, AIDS or Flu in group 1)
    assert points[0]["breach"] == pytest.approx(0.5) and points[0]["safe"] is True
    # "Tom does not have Cancer, Ed has Flu" -> Tom has AIDS: the slides' breach of 1
    assert points[1]["breach"] == 1.0 and points[1]["safe"] is False
    w = result["witness"]
    assert w["point"] == [1, 1, 0] and result["max_disclosure"] == 1.0
    # fewest pieces: in group 1, "does not have Flu" alone leaves AIDS
    # values by letter (the target's is value A), never by name (docs/design.md)
    assert w["target"]["group_label"] == "group=1" and w["target"]["value_ref"] == "value A"
    assert w["excluded"] == ["value B"] and w["known"] == [] and w["implications"] == []
    assert w["pieces"] == {"l": 1, "k": 0, "m": 0} and w["exact"] == "1/1"
    assert "the target does not have value B" in result["reason"]
    assert "group 'group=1' has value A with probability 1" in result["reason"]
    for value in ("AIDS", "Flu", "Cancer"):
        assert value not in out


def test_check_skyline_safe_and_text_table(
    slides_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", *base(slides_csv), "--criterion", "skyline", "--point", "0,0,1,0.8"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert out.splitlines()[0] == "skyline (1 point): SAFE"
    # one implication: 1 / (1 + R / n_s * H(3, 2, 1)) = 1 / (1 + 2/2 * 1/3) = 3/4
    code, out, _ = run([*argv[:-1], "0,0,1,0.75"], capsys)
    assert code == 1
    assert "     l    k    m      c    breach  verdict" in out
    assert "     0    0    1   0.75    0.7500  UNSAFE" in out
    assert "so does the target" in out


def test_breach_equal_to_c_is_unsafe(slides_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", *base(slides_csv), "--criterion", "skyline"]
    assert run([*argv, "--point", "0,0,0,0.5"], capsys)[0] == 1
    assert run([*argv, "--point", "0,0,0,0.5000001"], capsys)[0] == 0


BAD_POINTS = [
    (["--point", "1,2,3"], "skyline: point '1,2,3': expected four numbers l,k,m,c, got 3"),
    (
        ["--point", "1,2,x,0.9"],
        "skyline: point '1,2,x,0.9': m must be a whole number >= 0, got 'x'",
    ),
    (["--point=-1,0,0,0.9"], "skyline: point '-1,0,0,0.9': l must be a whole number >= 0"),
    (["--point", "0.5,0,0,0.9"], "skyline: point '0.5,0,0,0.9': l must be a whole number >= 0"),
    (["--point", "1,1,1,0"], "skyline: point '1,1,1,0': c must be in (0, 1], got 0"),
    (["--point", "1,1,1,1.5"], "skyline: point '1,1,1,1.5': c must be in (0, 1], got 1.5"),
    (["--point", "1,1,1,high"], "skyline: point '1,1,1,high': c must be a number in (0, 1]"),
    (["--point", "0,0,0,0.9", "--point", "0,-2,0,0.9"], "skyline: point '0,-2,0,0.9': k must be"),
    ([], "criterion skyline needs point"),
    (["--point", "0,0,0,0.9", "--c", "0.9"], "c does not apply to criterion skyline"),
]


@pytest.mark.parametrize(("extra", "message"), BAD_POINTS)
def test_malformed_points_exit_2(
    slides_csv: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, out, err = run(["check", *base(slides_csv), "--criterion", "skyline", *extra], capsys)
    assert code == 2 and out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1, err


def test_point_does_not_apply_to_other_criteria(
    slides_csv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", *base(slides_csv), "--criterion", "k-anonymity", "--k", "2",
            "--point", "0,0,0,0.9"]  # fmt: skip
    code, _, err = run(argv, capsys)
    assert code == 2 and "point does not apply to criterion k-anonymity" in err


def test_registry_validates_and_normalizes_points() -> None:
    got = validate("skyline", {"points": ["1,2,3,0.9", (0, 1, 0, 1), [2.0, 0, 1, 0.5]]})
    assert got["points"] == [(1, 2, 3, 0.9), (0, 1, 0, 1.0), (2, 0, 1, 0.5)]
    for bad, name in [
        (["1,2,3"], "'1,2,3'"),
        ([(1, 2, 3, 2)], "'1,2,3,2'"),
        ([(True, 0, 0, 0.5)], "'True,0,0,0.5'"),
        ([5], "5"),
        ([], "at least one point"),
    ]:
        with pytest.raises(InputError, match="point") as exc:
            validate("skyline", {"points": bad})
        assert name in str(exc.value)


# --------------------------------------------------------------------------- skyline
def test_skyline_json_contract(slides_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["skyline", *base(slides_csv), "--c", "0.8", "--max-l", "2", "--max-k", "2",
            "--max-m", "2", "--format", "json"]  # fmt: skip
    code, out, _ = run(argv, capsys)
    assert code == 0
    env = json.loads(out)
    assert env["step"] == "skyline" and env["safe"] is None  # an exploration: no verdict
    assert env["release"]["records"] == 8
    data = env["details"]
    assert data["c"] == 0.8
    assert data["bounds"] == {"l": 2, "k": 2, "m": 2}
    points = {tuple(p) for p in data["points"]}
    # by hand (docs/skyline.md): (0, 0, 1): 3/4 and (0, 1, 0): 2/3 in group 1 (AIDS);
    # "does not have Flu" alone leaves AIDS in group 1, so any l >= 1 is unsafe; one more
    # known person or implication leaves the target no other value
    assert points == {(0, 0, 1), (0, 1, 0)}
    breaches = {tuple(b["point"]): Fraction(b["exact"]) for b in data["breaches"]}
    assert breaches == {(0, 0, 1): Fraction(3, 4), (0, 1, 0): Fraction(2, 3)}
    assert data["beyond"]["breach"] == 1.0
    assert data["staircase"] == [[1, 0, -1], [-1, -1, -1], [-1, -1, -1]]


def test_skyline_text_table(slides_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["skyline", *base(slides_csv), "--c", "0.8", "--max-l", "2", "--max-k", "2",
            "--max-m", "2"]  # fmt: skip
    code, out, _ = run(argv, capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("privacy skyline of ") and lines[0].endswith("at c = 0.8")
    header = lines.index("     l    k    m    breach")
    assert lines[header + 1 : header + 3] == [
        "     0    0    1    0.7500",
        "     0    1    0    0.6667",
    ]
    assert "beyond it, at (" in out


def test_skyline_nothing_safe(slides_csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["skyline", *base(slides_csv), "--c", "0.5", "--format", "json"], capsys)
    data = json.loads(out)["details"]
    assert code == 0 and data["points"] == []
    assert data["beyond"]["point"] == [0, 0, 0] and data["beyond"]["breach"] == 0.5


def test_plots(slides_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["skyline", *base(slides_csv), "--c", "0.8", "--max-l", "2", "--max-k", "2",
            "--max-m", "2"]  # fmt: skip
    svg = tmp_path / "skyline.svg"
    assert run([*argv, "--plot", str(svg)], capsys)[0] == 0
    root = ET.fromstring(svg.read_text(encoding="utf-8"))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    assert len(root.findall(f"{ns}polyline")) == 1  # only l = 0 has safe points
    titles = {c.findtext(f"{ns}title") for c in root.findall(f"{ns}circle")}
    assert titles == {"(0, 0, 1)", "(0, 1, 0)"}
    png = tmp_path / "skyline.png"
    assert run([*argv, "--plot", str(png)], capsys)[0] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skyline.png", "skyline.svg",
                                                          "slides.csv"]  # fmt: skip


def test_a_failed_plot_write_leaves_nothing(
    slides_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The plot is written by the one writer of every output (gate.tables.write_outputs):
    an error names --plot and leaves no temporary file and the old plot as it was."""
    import os

    svg = tmp_path / "skyline.svg"
    svg.write_text("old", encoding="utf-8")

    def full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    code, out, err = run(["skyline", *base(slides_csv), "--c", "0.8", "--plot", str(svg)], capsys)
    assert code == 2 and out == ""
    assert err.strip() == (
        f"airflow-privacy: error: --plot: cannot write {str(svg)!r}: No space left on device; "
        "nothing was written"
    )
    assert svg.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skyline.svg", "slides.csv"]


def test_png_without_matplotlib(
    slides_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name)
    )
    png = tmp_path / "skyline.png"
    code, out, err = run(["skyline", *base(slides_csv), "--c", "0.8", "--plot", str(png)], capsys)
    assert code == 2 and out == "" and not png.exists()
    assert "PNG needs matplotlib" in err and "airflow-privacy[plot]" in err
    assert len(err.strip().splitlines()) == 1


BAD_SKYLINE = [
    (["--c", "0"], "--c must be in (0, 1], got 0"),
    (["--c", "1.5"], "--c must be in (0, 1], got 1.5"),
    (["--c", "abc"], "--c must be a number, got 'abc'"),
    (["--c", "0.9", "--max-k", "-1"], "--max-k must be a whole number in [0, 1000], got -1"),
    (["--c", "0.9", "--max-m", "1001"], "--max-m must be a whole number in [0, 1000], got 1001"),
    (["--c", "0.9", "--max-l", "2.5"], "--max-l must be a whole number, got '2.5'"),
    (["--c", "0.9", "--plot", "out.pdf"], "must end in .svg or .png"),
    (["--c", "0.9", "--plot", "no/such/folder/x.svg"], "does not exist"),
    ([], "the following arguments are required: --c"),
]


@pytest.mark.parametrize(("extra", "message"), BAD_SKYLINE)
def test_skyline_bad_input_exit_2(
    slides_csv: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    before = sorted(p.name for p in slides_csv.parent.iterdir())
    code, out, err = run(["skyline", *base(slides_csv), *extra], capsys)
    assert code == 2 and out == ""
    assert message in err
    assert len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in slides_csv.parent.iterdir()) == before


def test_console_script_end_to_end(slides_csv: Path) -> None:
    exe = Path(sys.executable).with_name("airflow-privacy")
    ok = subprocess.run(
        [str(exe), "skyline", *base(slides_csv), "--c", "0.8", "--max-l", "1", "--max-k", "1",
         "--max-m", "1", "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["details"]["points"] == [[0, 0, 1], [0, 1, 0]]
    bad = subprocess.run(
        [str(exe), "check", *base(slides_csv), "--criterion", "skyline", "--point", "1,1,1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "airflow-privacy: error: skyline: point '1,1,1': expected four numbers l,k,m,c, got 3"
    ]
