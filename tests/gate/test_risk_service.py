"""The risk step's service (airflow_privacy.gate.steps.risk): every number of the envelope against
an independent computation from the definitions on small tables (exact fractions, brute-force
special uniques), the population sources, the per-record file, bad input, and the gate: a
recorded risk analysis gives no verdict and never lets an attempt publish."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

import pyarrow.csv as pacsv
import pytest

from airflow_privacy.core.risk import population_uniqueness
from airflow_privacy.errors import InputError
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import STEPS, Envelope
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.steps.risk import DEFAULT_THRESHOLD, RiskRequest, run_risk
from tests.conftest_pg import pg_server, pg_url  # noqa: F401  (fixtures)

TOL = 1e-9
QIS = ["age", "sex", "zip"]
ROWS: list[tuple[str, ...]] = [
    ("30", "M", "100"), ("30", "M", "100"), ("30", "F", "100"), ("40", "F", "200"),
    ("40", "F", "200"), ("40", "F", "200"), ("50", "M", "300"), ("30", "F", "200"),
    ("40", "M", "100"), ("40", "M", "100"),
]  # fmt: skip
POPULATION: list[tuple[str, ...]] = [
    *ROWS,
    ("30", "M", "100"), ("30", "F", "100"), ("30", "F", "100"), ("50", "M", "300"),
    ("40", "F", "200"), ("30", "F", "200"), ("30", "F", "200"), ("30", "F", "200"),
    ("60", "F", "400"),
]  # fmt: skip


def write(path: Path, rows: list[tuple[str, ...]], extra: bool = True) -> Path:
    head = [*QIS, "disease"] if extra else QIS
    lines = [",".join(head)] + [",".join([*r, "flu"] if extra else r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return write(tmp_path / "release.csv", ROWS)


def run(release: Path, **kw: Any) -> Envelope:
    return run_risk(RiskRequest(release=ReleaseRef(path=str(release)), qis=QIS, **kw),
                    GateContext())  # fmt: skip


def measures(env: Envelope) -> dict[str, Any]:
    return {m["measure"]: m for m in env.details["measures"]}


# ------------------------------------------------------------ independent definitions
def expected_reid(
    sample: list[tuple[str, ...]], pop: dict[tuple[str, ...], Fraction] | None, tau: Fraction
) -> dict[str, Fraction]:
    f = Counter(sample)
    n, j = len(sample), len(f)
    big = {k: (pop[k] if pop is not None else Fraction(v)) for k, v in f.items()}
    out = {
        "prosecutor_highest_risk": Fraction(1, min(f.values())),
        "prosecutor_records_at_risk": Fraction(
            sum(v for v in f.values() if Fraction(1, v) > tau), n
        ),
        "prosecutor_success_rate": Fraction(j, n),
        "journalist_highest_risk": 1 / min(big.values()),
        "journalist_records_at_risk": Fraction(sum(v for k, v in f.items() if 1 / big[k] > tau), n),
        "marketer_success_rate": sum((Fraction(v) / big[k] for k, v in f.items()), Fraction(0)) / n,
    }
    rc1 = Fraction(j) / sum(big.values())
    out["journalist_success_rate"] = max(rc1, out["marketer_success_rate"])
    return out


def check_reid(env: Envelope, want: dict[str, Fraction]) -> None:
    got = measures(env)
    for key, value in want.items():
        assert abs(got[key]["value"] - float(value)) <= TOL, key


def brute_msus(rows: list[tuple[str, ...]], k_max: int) -> dict[int, list[tuple[int, ...]]]:
    """Every record's minimal sample uniques, by enumeration of the definition."""
    m = len(rows[0])
    out: dict[int, list[tuple[int, ...]]] = {}
    for i, r in enumerate(rows):
        unique: set[tuple[int, ...]] = set()
        for size in range(1, k_max + 1):
            for s in combinations(range(m), size):
                key = tuple(r[a] for a in s)
                if sum(1 for o in rows if tuple(o[a] for a in s) == key) == 1:
                    unique.add(s)
        minimal = [s for s in unique
                   if not any(set(t) < set(s) for t in unique)]  # fmt: skip
        if minimal:
            out[i] = minimal
    return out


# ------------------------------------------------------------------------- tests
def test_risk_is_a_step_and_an_estimate_without_verdict(release: Path) -> None:
    assert "risk" in STEPS
    env = run(release)
    assert env.step == "risk" and env.outcome == "estimated" and env.safe is None
    assert env.results[0]["safe"] is None and env.reasons == []
    assert Envelope.from_dict(env.to_dict()).safe is None
    assert (
        env.release is not None
        and env.release.records == 10
        and env.release.groups == len(Counter(ROWS))
    )
    assert env.details["threshold"] == DEFAULT_THRESHOLD == 0.2


@pytest.mark.parametrize("tau", [0.2, 0.5, 1 / 3, 0.34, 1.0])
def test_without_population_the_release_is_its_own(release: Path, tau: float) -> None:
    env = run(release, threshold=tau)
    want = expected_reid(ROWS, None, Fraction(repr(tau)))
    check_reid(env, want)
    assert env.details["population"]["kind"] == "none"
    assert measures(env)["population_uniqueness"]["value"] is None


def test_population_table(release: Path, tmp_path: Path) -> None:
    pop = write(tmp_path / "population.csv", POPULATION)
    env = run(release, population=ReleaseRef(path=str(pop)), threshold=0.3)
    big = {k: Fraction(v) for k, v in Counter(POPULATION).items()}
    check_reid(env, expected_reid(ROWS, big, Fraction(3, 10)))
    pi = Fraction(len(ROWS), len(POPULATION))
    assert env.details["population"]["sampling_fraction"] == pytest.approx(float(pi), abs=TOL)
    pu = population_uniqueness(list(Counter(ROWS).values()), float(pi))
    got = measures(env)
    assert got["sample_uniques"]["value"] == sum(1 for v in Counter(ROWS).values() if v == 1)
    assert got["population_uniqueness"]["value"] == pytest.approx(pu.dankar_fraction, abs=TOL)
    assert env.details["population_uniqueness"]["dankar_model"] == pu.dankar_model


@pytest.mark.parametrize("pi", [0.5, 0.3, 0.1, 1.0])
def test_sampling_fraction_estimates_population_sizes(release: Path, pi: float) -> None:
    env = run(release, sampling_fraction=pi)
    frac = Fraction(repr(pi))
    big = {k: Fraction(math.floor(Fraction(v) / frac)) for k, v in Counter(ROWS).items()}
    check_reid(env, expected_reid(ROWS, big, Fraction(1, 5)))
    text = measures(env)["journalist_highest_risk"]["explanation"]
    assert "estimate" in text  # the sentence says the population sizes are an estimate
    assert env.details["population"]["estimated"] is True


def test_population_size_gives_the_sampling_fraction(release: Path) -> None:
    env = run(release, population_size=40)
    frac = Fraction(10, 40)
    big = {k: Fraction(math.floor(Fraction(v) / frac)) for k, v in Counter(ROWS).items()}
    check_reid(env, expected_reid(ROWS, big, Fraction(1, 5)))
    assert env.details["population"]["sampling_fraction"] == 0.25
    assert env.details["population_uniqueness"]["sampling_fraction"] == 0.25


def test_class_size_histogram(release: Path) -> None:
    env = run(release, threshold=0.4)
    sizes = Counter(Counter(ROWS).values())
    hist = env.details["class_sizes"]
    assert [h["size"] for h in hist] == sorted(sizes)
    for h in hist:
        assert h["groups"] == sizes[h["size"]] and h["records"] == h["size"] * h["groups"]
        assert h["prosecutor_risk"] == pytest.approx(1 / h["size"], abs=TOL)
        assert h["at_risk"] is (Fraction(1, h["size"]) > Fraction(2, 5))


@pytest.mark.parametrize("k_max", [1, 2, 3])
def test_suda_against_brute_force(release: Path, tmp_path: Path, k_max: int) -> None:
    out = tmp_path / "scores.csv"
    env = run(release, suda_max_size=k_max, records=ReleaseRef(path=str(out)))
    msus = brute_msus(ROWS, k_max)
    s = env.details["suda"]
    assert s["records_with_msu"] == len(msus)
    m = len(QIS)
    score = {i: sum((Fraction(math.factorial(m - len(x))) for x in v), Fraction(0))
             for i, v in msus.items()}  # fmt: skip
    total = sum(score.values(), Fraction(0))
    for a, name in enumerate(QIS):
        share = sum((Fraction(math.factorial(m - len(x))) for v in msus.values() for x in v
                     if a in x), Fraction(0))  # fmt: skip
        want = float(100 * share / total) if total else 0.0
        assert abs(s["attribute_contributions"][name] - want) <= TOL
    assert s["score_max"] == float(max(score.values()))
    # the per-record file: row numbers from 1, the scores of the definition
    table = pacsv.read_csv(out)
    rows = table.column("row").to_pylist()
    assert rows == [i + 1 for i in sorted(msus)]
    for r, v in zip(rows, table.column("suda_score").to_pylist(), strict=True):
        assert abs(v - float(score[r - 1])) <= TOL
    assert env.outputs["records"] == str(out)
    # which attribute drives the risk, in words
    lead = max(QIS, key=lambda q: (s["attribute_contributions"][q], -QIS.index(q)))
    assert measures(env)["suda_driving_attribute"]["value"] == lead
    assert "drives the risk" in measures(env)["suda_driving_attribute"]["explanation"]


def test_suda_scores_never_enter_the_envelope(release: Path) -> None:
    env = run(release)
    text = str(env.to_dict())
    assert "'records': [" not in text and "dis_score'" not in text
    assert "msus" not in text
    env_off = run(release, suda=False)
    assert env_off.details["suda"] is None
    assert not any(k.startswith("suda") for k in measures(env_off))


def test_every_number_has_one_sentence(release: Path) -> None:
    env = run(release, sampling_fraction=0.2)
    for m in env.details["measures"]:
        text = m["explanation"]
        assert text and text.endswith(".") and "\x00" not in text, m["measure"]
    high = measures(env)["prosecutor_highest_risk"]["explanation"]
    assert "smallest group has 1 record" in high and "1/1" in high
    env2 = run(write(release.parent / "two.csv", [r for r in ROWS if Counter(ROWS)[r] >= 2]))
    assert "probability 1/2" in measures(env2)["prosecutor_highest_risk"]["explanation"]


@pytest.mark.parametrize(
    ("kw", "flag"),
    [
        ({"threshold": 0.0}, "--threshold"),
        ({"threshold": 1.5}, "--threshold"),
        ({"sampling_fraction": 0.0}, "--sampling-fraction"),
        ({"sampling_fraction": 1.01}, "--sampling-fraction"),
        ({"population_size": 5}, "--population-size"),
        ({"population_size": 0}, "--population-size"),
        ({"population_size": 40, "sampling_fraction": 0.5}, "--population-size"),
        ({"suda_max_size": 4}, "--suda-max-size"),
        ({"dis_fraction": 2.0}, "--dis-fraction"),
        ({"qis": ["age", "nope"]}, "--qi"),
        ({"qis": "age"}, "--qi"),
        ({"qis": ["age", "age"]}, "--qi"),
    ],
)
def test_bad_input_names_the_parameter(release: Path, kw: dict[str, Any], flag: str) -> None:
    args: dict[str, Any] = {"qis": QIS, **kw}
    with pytest.raises(InputError) as err:
        run_risk(RiskRequest(release=ReleaseRef(path=str(release)), **args), GateContext())
    assert flag in str(err.value)


def test_population_must_contain_the_release(release: Path, tmp_path: Path) -> None:
    small = write(tmp_path / "small.csv", ROWS[:5])
    with pytest.raises(InputError, match=r"--population.*fewer"):
        run(release, population=ReleaseRef(path=str(small)))
    other = write(tmp_path / "other.csv", [("30", "M", "100")] * 30)
    with pytest.raises(InputError, match="--population does not contain the release"):
        run(release, population=ReleaseRef(path=str(other)))


def test_records_file_checked_before_any_work(release: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--records"):
        run(release, records=ReleaseRef(path=str(tmp_path / "scores.json")))
    with pytest.raises(InputError, match="--records"):
        run(release, records=ReleaseRef(path=str(tmp_path / "s.csv")), suda=False)
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_table_is_counted_in_its_database(
    release: Path, tmp_path: Path, kind: str, request: pytest.FixtureRequest
) -> None:
    """A release and a population that are SQL tables: only the class sizes leave the
    database (GROUP BY), and every number equals the file's."""
    import sqlalchemy as sa

    if kind == "postgresql":
        url = request.getfixturevalue("pg_url")
    else:
        url = f"sqlite:///{tmp_path / 'w.db'}"
    engine = sa.create_engine(url)
    md = sa.MetaData()
    tables = {
        name: sa.Table(name, md, *[sa.Column(c, sa.Text) for c in [*QIS, "disease"]])
        for name in ("rel", "pop")
    }
    with engine.begin() as conn:
        md.create_all(conn)
        for name, rows in (("rel", ROWS), ("pop", POPULATION)):
            conn.execute(
                tables[name].insert(),
                [dict(zip([*QIS, "disease"], [*r, "flu"], strict=True)) for r in rows],
            )
    engine.dispose()
    pop_file = write(tmp_path / "pop.csv", POPULATION)
    from_file = run(release, population=ReleaseRef(path=str(pop_file)))
    from_db = run_risk(
        RiskRequest(release=ReleaseRef(sql_table="rel", conn=url), qis=QIS,
                    population=ReleaseRef(sql_table="pop", conn=url)),
        GateContext(),
    )  # fmt: skip
    assert from_db.details["measures"] == from_file.details["measures"]
    assert from_db.details["suda"] == from_file.details["suda"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_big_file_is_counted_by_duckdb_with_the_same_numbers(
    release: Path, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file big enough for ``auto`` to pick DuckDB: only the class sizes come back, and
    every number (SUDA2 from the classes too) equals the in-process reader's; a population
    file the same."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import airflow_privacy.core.backends as backends

    rows = [*ROWS, ("-0.0", "F", "100"), ("0.0", "F", "100"), ("", "M", "300")]
    src = write(tmp_path / "r.csv", rows)
    pop = write(tmp_path / "p.csv", [*POPULATION, *rows[-3:]])
    if fmt == "parquet":
        for path in (src, pop):
            t = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(
                column_types={"age": pa.float64()}))  # fmt: skip
            pq.write_table(t, path.with_suffix(".parquet"))
        src, pop = src.with_suffix(".parquet"), pop.with_suffix(".parquet")
    lines: list[str] = []

    def measured() -> Envelope:
        return run_risk(
            RiskRequest(release=ReleaseRef(path=str(src)), qis=QIS,
                        population=ReleaseRef(path=str(pop))),
            GateContext(progress=lines.append),
        )  # fmt: skip

    small = measured()
    assert not any("DuckDB" in x for x in lines)
    monkeypatch.setattr(backends, "DUCKDB_MIN_BYTES", {"csv": 1, "csv.gz": 1, "parquet": 1})
    monkeypatch.setattr(backends, "DUCKDB_MIN_CELLS", 1)
    big = measured()
    assert any("(DuckDB)" in x for x in lines)
    assert big.details["measures"] == small.details["measures"]
    assert big.details["suda"] == small.details["suda"]
