"""The report envelope: one typed shape, strict about verdicts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.errors import InputError
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts


def envelope(**over: Any) -> Envelope:
    base: dict[str, Any] = {
        "step": "check",
        "name": "check_safety",
        "outcome": "failed",
        "safe": False,
        "summary": "ck-safety (c=0.7, k=3): UNSAFE",
        "reasons": ["ck-safety: too sure"],
        "release": ReleaseFacts(
            ref="r.csv", records=10, groups=2, sensitive="s", group_columns=["g"]
        ),
        "results": [{"criterion": "ck-safety", "safe": False, "value": float("inf")}],
    }
    base.update(over)
    return Envelope(**base)


def test_round_trip_through_strict_json() -> None:
    env = envelope()
    text = json.dumps(env.to_dict(), allow_nan=False)  # no NaN / Infinity
    back = Envelope.from_dict(json.loads(text))
    assert back.to_dict() == env.to_dict()
    assert back.results[0]["value"] == "inf"
    assert back.tool_version and back.created_at


@pytest.mark.parametrize("verdict", ["false", "False", 0, 1, "true", [], {}])
def test_a_verdict_is_a_boolean_or_null(verdict: Any) -> None:
    data = envelope().to_dict()
    data["safe"] = verdict
    with pytest.raises(InputError, match="safe must be true, false or null"):
        Envelope.from_dict(data, "x.json")
    data = envelope().to_dict()
    data["results"][0]["safe"] = verdict
    with pytest.raises(InputError, match="must be true, false or null"):
        Envelope.from_dict(data, "x.json")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"step": "bogus"}, "unknown step"),
        ({"outcome": "great"}, "unknown outcome"),
        ({"schema": 99}, "schema 99"),
        ({"results": "x"}, "results must be a list"),
        ({"details": []}, "details must be an object"),
    ],
)
def test_anything_but_an_envelope_is_refused(change: dict[str, Any], message: str) -> None:
    data = envelope().to_dict()
    data.update(change)
    with pytest.raises(InputError, match=message):
        Envelope.from_dict(data, "x.json")


def test_missing_fields_and_non_objects() -> None:
    with pytest.raises(InputError, match="not a report envelope"):
        Envelope.from_dict([1, 2], "x.json")
    data = envelope().to_dict()
    del data["safe"]
    with pytest.raises(InputError, match="missing safe"):
        Envelope.from_dict(data, "x.json")


def test_running_out_of_memory_is_one_line_naming_the_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A MemoryError while a step measures (Arrow's ``ArrowMemoryError`` is one) is bad input
    naming the step and the streaming backend, exit 2, in each front end's words; never an
    internal error."""
    import pyarrow as pa

    from airflow_privacy.cli import main
    from airflow_privacy.gate.steps.check import CHECK
    from airflow_privacy.providers.airflow.operators.check import CheckSafetyOperator
    from tests.gate.parity_support import FakeTI

    release = tmp_path / "r.csv"
    release.write_text("g,s\na,x\na,y\n")

    def exhausted(*args: object, **kwargs: object) -> object:
        raise pa.ArrowMemoryError("malloc of size 85824 failed")

    monkeypatch.setattr(type(CHECK), "measure", exhausted)
    argv = ["check", str(release), "--group", "g", "--sensitive", "s",
            "--criterion", "k-anonymity:k=2"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the check step ran out of memory (ArrowMemoryError)" in err
    assert "--backend duckdb" in err and "internal error" not in err
    assert len(err.strip().splitlines()) == 1
    op = CheckSafetyOperator(task_id="check", release=str(release), sensitive="s",
                             group_columns=["g"], criteria=["k-anonymity:k=2"])  # fmt: skip
    with pytest.raises(Exception, match="ran out of memory") as info:
        op.execute({"ti": FakeTI()})
    assert "backend" in str(info.value) and "--backend" not in str(info.value)
