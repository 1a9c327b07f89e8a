"""Bundled sample data: UCI Adult (CC BY 4.0) with ARX hierarchies (Apache-2.0).

See ``airflow_privacy/data/adult/README.md`` for attribution.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from airflow_privacy.core.hierarchy import Hierarchy, generalize_table

if TYPE_CHECKING:
    import pyarrow as pa

ADULT_COLUMNS = (
    "sex", "age", "race", "marital-status", "education", "native-country",
    "workclass", "occupation", "salary-class",
)  # fmt: skip
ADULT_QIS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass")


def _adult_dir() -> Path:
    return Path(str(resources.files("airflow_privacy") / "data" / "adult"))


def adult_path() -> Path:
    """Path of the bundled ``adult.csv.gz`` (``;``-separated, 30,162 records)."""
    return _adult_dir() / "adult.csv.gz"


def adult_hierarchy_path(column: str) -> Path:
    return _adult_dir() / f"adult_hierarchy_{column}.csv"


def adult_hierarchies() -> dict[str, Hierarchy]:
    """ARX hierarchies of every Adult column, by column name."""
    return {c: Hierarchy.from_arx_csv(adult_hierarchy_path(c), c) for c in ADULT_COLUMNS}


def load_adult() -> pa.Table:
    """The bundled Adult table, every column as strings."""
    from airflow_privacy.core.io import read_release

    return read_release(adult_path(), fmt="csv", delimiter=";")


def adult_release(levels: dict[str, int], keep: tuple[str, ...] = ("occupation",)) -> pa.Table:
    """Adult generalized at the given hierarchy levels (full-domain generalization).

    QI columns not named in ``levels`` are suppressed (top level, ``*``); ``keep`` columns
    are left as they are (the sensitive one). Martin et al.'s Figure 5 release is
    ``adult_release({"age": 3})`` (Age in 20-year intervals, other QIs suppressed).
    """
    table = load_adult()
    hier = adult_hierarchies()
    full = {c: hier[c].height - 1 for c in ADULT_COLUMNS if c not in keep}
    full.update(levels)
    return generalize_table(table, hier, full)
