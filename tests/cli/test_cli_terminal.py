"""Text for a terminal: control characters from the ledger (a reason, a steward's note) are
shown escaped, never obeyed; a password in a ledger URL never reaches a message."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from airflow_privacy.cli import main
from airflow_privacy.ledger import ReleaseLedger
from tests.ledger_worker import make_release


def test_ledger_show_escapes_terminal_sequences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'l.db'}"
    with ReleaseLedger(url) as db:
        attempt = db.open_attempt("d", make_release(1, 3), required=["c"], first_release=True)
        db.block(attempt.uuid, ["evil \x1b[2J\x1b]0;pwned\x07 reason"], by="x\x1b[31m")
    out = io.StringIO()
    assert main(["ledger", "show", "1", "--ledger", url], out) == 0
    text = out.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[2J" in text


def test_a_password_in_the_ledger_url_never_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for url in (
        "postgresql+psycopg://steward:s3cret@127.0.0.1:1/ledger",
        "postgresql+psycopg://steward@127.0.0.1:1/ledger?password=s3cret",
    ):
        code = main(["ledger", "list", "--ledger", url], io.StringIO())
        err = capsys.readouterr().err
        assert code == 4, err  # unavailable: retry later, not bad input
        assert "s3cret" not in err and err.count("\n") == 1
