"""Keyed identifier hashes computed in the database equal the in-process HMAC-SHA256 of the
stripped identifiers (the definition, RFC 2104), on SQLite and PostgreSQL; the identifier
column never comes back; identifiers the databases cannot strip as Python does, and missing
ones, are refused. The audit and the attempt read a population table that way."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_privacy.core.backends.keyed_hash import OTHER_SPACE, pads
from airflow_privacy.errors import InputError
from airflow_privacy.gate.attempts import member_hashes
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.members import table_population
from airflow_privacy.gate.refs import ReleaseRef
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)
from tests.gate.conftest import KEY, Workspace


def reference(values: list[str], key: bytes) -> list[str]:
    """HMAC-SHA256 from its definition: H((K0^opad) || H((K0^ipad) || m))."""
    k0 = (hashlib.sha256(key).digest() if len(key) > 64 else key).ljust(64, b"\0")
    ipad = bytes(b ^ 0x36 for b in k0)
    opad = bytes(b ^ 0x5C for b in k0)
    out = []
    for v in values:
        m = v.strip().encode("utf-8")
        out.append(hashlib.sha256(opad + hashlib.sha256(ipad + m).digest()).hexdigest())
    return out


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, ws: Workspace) -> Iterator[str]:
    if request.param == "postgresql":
        yield request.getfixturevalue("pg_url")
    else:
        yield f"sqlite:///{ws.root / 'people.db'}"


def load(url: str, ids: list[str | None], ages: list[str] | None = None) -> None:
    engine = sa.create_engine(url)
    md = sa.MetaData()
    t = sa.Table("people", md, sa.Column("pid", sa.Text), sa.Column("age", sa.Text))
    with engine.begin() as conn:
        md.drop_all(conn)
        md.create_all(conn)
        if ids:
            conn.execute(
                t.insert(),
                [{"pid": v, "age": (ages or ["30"] * len(ids))[i]} for i, v in enumerate(ids)],
            )
    engine.dispose()


def test_pads_are_rfc_2104() -> None:
    for key in (b"k", b"x" * 64, b"y" * 65, KEY.encode()):
        ipad, opad = pads(key)
        msg = b"person-1"
        inner = hashlib.sha256(ipad + msg).digest()
        assert hashlib.sha256(opad + inner).hexdigest() == hmac.new(key, msg, "sha256").hexdigest()


def test_other_space_is_what_strip_removes_beyond_ascii() -> None:
    every = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert set(OTHER_SPACE) == every - set(" \t\n\r\x0b\x0c")


IDS = st.lists(
    st.text(
        alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
        min_size=0, max_size=12,
    ).filter(lambda s: s.strip() == s.strip(" \t\n\r\x0b\x0c")),  # the others are refused
    min_size=1, max_size=20,
)  # fmt: skip


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ids=IDS)
def test_hashes_computed_in_the_database_equal_the_definition(db: str, ids: list[str]) -> None:
    # identifiers with ASCII whitespace around them, unicode inside, quotes
    ids = [f" \t{v}\n" if i % 3 == 0 else v for i, v in enumerate(ids)]
    load(db, list(ids))
    ref = ReleaseRef(sql_table="people", conn=db)
    pop = table_population(ref, ["age"], "pid", KEY.encode(), GateContext())
    assert sorted(pop.id_hashes or ()) == sorted(reference(ids, KEY.encode()))
    assert pop.n == len(ids) and set(pop.columns) == {"age"}


def test_the_attempt_stores_hashes_of_a_population_table(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AIRFLOW_PRIVACY_LEDGER_KEY", KEY)
    ids = ["a-1", "b-2", " c-3 "]
    load(db, list(ids))
    got = member_hashes(ReleaseRef(sql_table="people", conn=db), "pid",
                        "AIRFLOW_PRIVACY_LEDGER_KEY", GateContext())  # fmt: skip
    assert sorted(got or []) == sorted(reference(ids, KEY.encode()))


@pytest.mark.parametrize("bad", ["\u00a0x", "x\u3000", "\x1cx", " \u00a0x", "x\u2003\t\n"])
def test_identifiers_with_other_whitespace_are_refused(db: str, bad: str) -> None:
    load(db, ["ok", bad])
    with pytest.raises(InputError, match=r"1 identifier\(s\) of column 'pid'.*non-ASCII"):
        table_population(ReleaseRef(sql_table="people", conn=db), ["age"], "pid",
                         KEY.encode(), GateContext())  # fmt: skip


def test_missing_identifiers_are_refused(db: str) -> None:
    load(db, ["ok", None])
    with pytest.raises(InputError, match=r"column 'pid' of table:people has 1 missing value"):
        table_population(ReleaseRef(sql_table="people", conn=db), ["age"], "pid",
                         KEY.encode(), GateContext())  # fmt: skip
