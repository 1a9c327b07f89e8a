"""Release model and readers: counts are right whatever the source."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from airflow_privacy.core.io import column_names, read_release, sniff_delimiter
from airflow_privacy.core.model import Bucketization, ReleaseSpec
from airflow_privacy.errors import InputError

rows_strategy = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c"]), st.integers(0, 3), st.sampled_from(["x", "y", "z", "w"])
    ),
    min_size=1,
    max_size=60,
)


def as_dict(b: Bucketization) -> dict[tuple[tuple[str, ...], str], int]:
    return {
        (key, value): int(b.counts[g, v])
        for g, key in enumerate(b.groups)
        for v, value in enumerate(b.values)
        if b.counts[g, v]
    }


@settings(max_examples=60, deadline=None)
@given(rows_strategy)
def test_counts_match_a_plain_counter(rows: list[tuple[str, int, str]]) -> None:
    frame = pd.DataFrame(rows, columns=["g1", "g2", "s"])
    spec = ReleaseSpec(sensitive="s", group_columns=("g1", "g2"))
    b = Bucketization.from_frame(frame, spec)
    expected = Counter(((g1, str(g2)), s) for g1, g2, s in rows)
    assert as_dict(b) == dict(expected)
    assert b.n_records == len(rows)
    assert b.sizes.sum() == len(rows)
    # the same statistics pushed down as GROUP BY rows
    counted = [(g1, g2, s, n) for ((g1, g2), s), n in expected.items()]
    pushed = Bucketization.from_counts(counted, ("g1", "g2"), "s")
    assert as_dict(pushed) == dict(expected)


def test_sorted_counts_and_value_order() -> None:
    b = Bucketization.from_group_counts([[1, 3, 2], [0, 0, 4]], values=["p", "q", "r"])
    assert b.sorted_counts().tolist() == [[3, 2, 1], [4, 0, 0]]
    assert [b.values[i] for i in b.value_order()[0]] == ["q", "r", "p"]
    assert b.group_label(1) == "group=1"


def test_csv_delimiters_and_gzip(tmp_path: Path) -> None:
    for sep, name in ((";", "semi.csv"), ("\t", "tab.tsv"), (",", "comma.csv.gz")):
        path = tmp_path / name
        text = sep.join(["age", "sex", "disease"]) + "\n" + sep.join(["20-29", "M", "flu"]) + "\n"
        if name.endswith(".gz"):
            with gzip.open(path, "wt", encoding="utf-8") as fh:
                fh.write(text)
        else:
            path.write_text(text, encoding="utf-8")
        assert sniff_delimiter(path) == sep
        assert column_names(path) == ["age", "sex", "disease"]
        table = read_release(path, ["sex", "disease"])
        assert table.column_names == ["sex", "disease"]
        assert table.column("disease").to_pylist() == ["flu"]


def test_csv_numbers_stay_labels(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("zip,s\n01234,a\n1234,b\n", encoding="utf-8")
    b = Bucketization.from_arrow(read_release(path), ReleaseSpec("s", ("zip",)))
    assert sorted(k[0] for k in b.groups) == ["01234", "1234"]  # not both 1234


def test_parquet_numeric_columns(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"bucket": [1, 1, 2], "s": [10, 20, 10]}), path)
    b = Bucketization.from_arrow(read_release(path), ReleaseSpec("s", ("bucket",)))
    assert b.groups == (("1",), ("2",))
    assert set(b.values) == {"10", "20"}


def test_errors_name_the_problem(tmp_path: Path) -> None:
    frame = pd.DataFrame({"g": ["a"], "s": ["x"]})
    with pytest.raises(InputError, match="group column 'h' does not exist"):
        Bucketization.from_frame(frame, ReleaseSpec("s", ("h",)))
    with pytest.raises(InputError, match="sensitive column 't' does not exist"):
        Bucketization.from_frame(frame, ReleaseSpec("t", ("g",)))
    with pytest.raises(InputError, match="empty"):
        Bucketization.from_frame(frame.iloc[0:0], ReleaseSpec("s", ("g",)))
    with pytest.raises(InputError, match="both the sensitive column and a group column"):
        ReleaseSpec("s", ("s",))
    with pytest.raises(InputError, match="given more than once"):
        ReleaseSpec("s", ("g", "g"))
    with pytest.raises(InputError, match="at least one group column"):
        ReleaseSpec("s", ())
    with pytest.raises(InputError, match="count row 0: count -1"):
        Bucketization.from_counts([("a", "x", -1)], ("g",), "s")
    with pytest.raises(InputError, match="has no records"):
        Bucketization.from_group_counts([[0, 0]])
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match="cannot read"):
        read_release(bad)


def test_counts_are_read_only() -> None:
    b = Bucketization.from_group_counts(np.array([[1, 2]]))
    with pytest.raises(ValueError):
        b.counts[0, 0] = 5


@pytest.mark.parametrize("direct", [True, False])
@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-3, 3), st.sampled_from(["a", "b"]), st.sampled_from(["x", "y", "z"])
        ),
        min_size=1,
        max_size=80,
    )
)
def test_counting_paths_agree_on_typed_columns(
    direct: bool, rows: list[tuple[int, str, str]]
) -> None:
    """Integer, dictionary and string columns, histogram or hashing: the same counts."""
    import airflow_privacy.core.counting as counting

    table = pa.table(
        {
            "num": pa.array([r[0] for r in rows], pa.int16()),
            "cat": pa.array([r[1] for r in rows]).dictionary_encode(),
            "s": pa.array([r[2] for r in rows]),
        }
    )
    saved = counting._DIRECT_CELLS
    counting._DIRECT_CELLS = saved if direct else 0
    try:
        b = Bucketization.from_arrow(table, ReleaseSpec("s", ("num", "cat")))
    finally:
        counting._DIRECT_CELLS = saved
    expected = Counter(((str(n), c), s) for n, c, s in rows)
    assert as_dict(b) == dict(expected)


def test_messages_list_odd_column_names_on_one_line(tmp_path: Path) -> None:
    """A header holding control characters (a binary file read as CSV) is listed escaped, so
    the message stays one line; a header holding a line break (a quote left open, which
    would swallow the rows after it) is refused, in one line that shows none of it."""
    path = tmp_path / "odd.csv"
    path.write_text('a,s\x01,"c\x1b[31m"\n1,2,3\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        Bucketization.from_arrow(read_release(path), ReleaseSpec("s", ("g",)))
    message = str(info.value)
    assert "\x01" not in message and "\x1b" not in message
    assert message == "group column 'g' does not exist (columns: a, 's\\x01', 'c\\x1b[31m')"
    with pytest.raises(InputError, match=r"column 'x' does not exist in odd\.csv") as info:
        read_release(path, ["x"])
    assert "\x01" not in str(info.value) and "\n" not in str(info.value)
    broken = tmp_path / "broken.csv"
    broken.write_text('"a\nb",s\x01,c\n1,2,3\n', encoding="utf-8")
    for columns in (None, ["x"]):
        with pytest.raises(InputError) as info:
            read_release(broken, columns)
        assert str(info.value) == (
            "the header of broken.csv has a line break in column 1 (a quote left open?); "
            "column names are one line each"
        )


def test_header_with_padded_names_reads_the_named_columns(tmp_path: Path) -> None:
    path = tmp_path / "padded.csv"
    path.write_text("age, sex ,disease\n20-29, M ,flu\n", encoding="utf-8")
    table = read_release(path, ["sex", "disease"])
    assert table.column_names == ["sex", "disease"]
    assert table.column("sex").to_pylist() == [" M "]  # cells are kept as they are
