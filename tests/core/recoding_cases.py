"""The recoding advice's test cases: hierarchies, a small table and its records. Shared by the
advice's tests and the check step's advice tests."""

from __future__ import annotations

import random

import pyarrow as pa

from airflow_privacy.core.hierarchy import Hierarchy

AGE = Hierarchy.from_rows("age", [
    [str(a), f"{a // 5 * 5}-{a // 5 * 5 + 4}", f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"]
    for a in range(20, 60)
])  # fmt: skip


ZIP = Hierarchy.from_rows("zip", [
    [z, z[:3] + "*", z[:2] + "**", "*"] for z in ("1301", "1302", "1311", "1312", "1401",
                                                 "1402", "1411", "1412")
])  # fmt: skip


SEX = Hierarchy.from_rows("sex", [["M", "*"], ["F", "*"]])


HIER = {"age": AGE, "zip": ZIP, "sex": SEX}


def records(rng: random.Random, n: int) -> list[dict[str, str]]:
    return [{"age": str(rng.randrange(20, 60)), "zip": rng.choice(ZIP.values),
             "sex": rng.choice("MF"), "disease": rng.choice(["flu", "cold", "hiv", "tb"])}
            for _ in range(n)]  # fmt: skip


# ----------------------------------------------------------------- the composition audit
def advice_table(rows: list[dict[str, str]], levels: dict[str, int]) -> pa.Table:
    return pa.table({
        c: [HIER[c].generalize_value(r[c], levels[c]) for r in rows] for c in ("age", "zip", "sex")
    } | {"disease": [r["disease"] for r in rows]})  # fmt: skip
