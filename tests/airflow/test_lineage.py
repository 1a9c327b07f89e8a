"""OpenLineage facets of the provider's tasks (:mod:`airflow_privacy.providers.airflow.
lineage`): built from a task's envelope; emitted by Airflow's OpenLineage listener during
real DAG runs (the sample DAG through ``dag.test``, the OpenLineage provider's file
transport): the gate's COMPLETE event carries one assertion per criterion its attempt's
checks passed, the masked QIs, and the verdict with the ledger's ids; a blocked gate's FAIL
event says it failed; no value of the data is in any event; nothing of OpenLineage is
imported when its provider is not installed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from airflow_privacy.providers.airflow.lineage import RUN_FACET, dataset_name, operator_lineage
from tests.airflow.release_runs import (  # noqa: F401  (the module's fixture)
    ROOT,
    SAMPLE_DAGS,
    SMALL,
    airflow_home,
    drive,
    envelope,
    green,
    officer,
)


def to_json(lineage: Any) -> dict[str, Any]:
    from openlineage.client.serde import Serde

    return {
        "inputs": [json.loads(Serde.to_json(x)) for x in lineage.inputs],
        "outputs": [json.loads(Serde.to_json(x)) for x in lineage.outputs],
        "run": {k: json.loads(Serde.to_json(v)) for k, v in lineage.run_facets.items()},
    }


CHECK = {
    "step": "check", "name": "ck", "outcome": "passed", "safe": True, "summary": "ok",
    "release": {"ref": "/data/rel.csv", "group_columns": ["age", "zip"], "sensitive": "dx"},
    "attempt": {"uuid": "u-1", "dataset": "survey", "version": "3", "release_id": 7,
                "release_uuid": "r-1"},
    "results": [
        {"criterion": "k-anonymity", "safe": True, "parameters": {"k": 5}, "label": "k=5"},
        {"criterion": "l-diversity", "safe": False, "parameters": {"l": 3}},
    ],
}  # fmt: skip


def test_a_checks_assertions_and_run_facet() -> None:
    got = to_json(operator_lineage(CHECK))
    (source,) = got["inputs"]
    assert (source["namespace"], source["name"]) == ("file", "/data/rel.csv")
    facet = source["inputFacets"]["dataQualityAssertions"]
    found = {(a["assertion"], a["success"], a.get("expected")) for a in facet["assertions"]}
    assert found == {("k-anonymity", True, "k=5"), ("l-diversity", False, "l=3")}
    assert all("actual" not in a or a["actual"] is None for a in facet["assertions"])
    run = got["run"][RUN_FACET]
    assert run["step"] == "check" and run["safe"] is True and run["attempt"] == "u-1"
    assert run["dataset"] == "survey" and run["release_id"] == 7
    assert got["outputs"] == []  # a check writes nothing


def test_the_gates_output_has_masked_qis() -> None:
    gate = {
        **CHECK, "step": "publish", "outcome": "published", "results": [],
        "details": {"destination": "s3://user:secret@bucket/pub/rel.csv", "policy_version": 2,
                    "criteria": ["k-anonymity:k=5", "composition"], "dp": None},
    }  # fmt: skip
    got = to_json(operator_lineage(gate))
    (out,) = got["outputs"]
    assert (out["namespace"], out["name"]) == ("s3://bucket", "pub/rel.csv")  # no password
    fields = out["facets"]["columnLineage"]["fields"]
    assert fields["age"]["transformationType"] == "MASKED"
    assert fields["age"]["inputFields"][0]["transformations"][0]["masking"] is True
    assert fields["dx"]["transformationType"] == "IDENTITY"
    names = {a["assertion"] for a in got["inputs"][0]["inputFacets"]["dataQualityAssertions"]
             ["assertions"]}  # fmt: skip
    assert names == {"k-anonymity", "composition", "privacy:publish"}
    assert got["run"][RUN_FACET]["policy_version"] == 2
    assert "secret" not in json.dumps(got)


def test_dataset_names() -> None:
    assert dataset_name("table:public.people") == ("sql", "public.people")
    assert dataset_name("spark:db.t") == ("spark", "db.t")
    assert dataset_name("gs://b/x/y.parquet") == ("gs://b", "x/y.parquet")
    assert dataset_name("file:///srv/a.csv") == ("file", "/srv/a.csv")
    assert dataset_name("rel.csv")[1].endswith("/rel.csv")
    assert dataset_name("C:\\data\\x.csv")[0] == "file"  # a drive letter is not a scheme


def test_without_the_provider_nothing_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "airflow.providers.openlineage.extractors", None)
    assert operator_lineage(CHECK) is None
    assert operator_lineage(None) is None


def test_the_provider_imports_nothing_of_openlineage() -> None:
    # Airflow's providers manager reads every provider's metadata (its get_provider_info):
    # what importing the provider's operators adds beyond that
    code = (
        "import sys\n"
        "from airflow.sdk import BaseOperator\n"
        "before = {m for m in sys.modules if 'openlineage' in m}\n"
        "from airflow_privacy.providers.airflow.operators import publish, check, anonymize\n"
        "from airflow_privacy.providers.airflow.operators import dp_release\n"
        "import airflow_privacy.providers.airflow.lineage\n"
        "bad = sorted({m for m in sys.modules if 'openlineage' in m} - before)\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def events(path: Path, complete: Any = None) -> list[dict[str, Any]]:
    """The events the transport wrote, once every line is whole and ``complete(events)``
    holds: the listener sends from its own processes, after the task ended, so the file may
    still be growing when the run returns (a half-written line was read once in CI)."""
    import time

    deadline = time.monotonic() + 120
    while True:
        try:
            found = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
            if complete is None or complete(found):
                return found
        except (OSError, ValueError):
            pass
        assert time.monotonic() < deadline, "the OpenLineage events did not all arrive"
        time.sleep(0.5)


def test_a_dag_run_emits_the_gates_lineage(airflow_home: Path, tmp_path: Path) -> None:  # noqa: F811
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    assert officer(url, []) == 0
    log = tmp_path / "lineage.jsonl"
    transport = json.dumps({"type": "file", "log_file_path": str(log), "append": True})
    env = {"AIRFLOW__OPENLINEAGE__TRANSPORT": transport,
           "AIRFLOW__OPENLINEAGE__NAMESPACE": "privacy-tests"}  # fmt: skip
    runs, _text = drive(airflow_home, SAMPLE_DAGS, "privacy_release", tmp_path / "out", url,
                       [{**SMALL, "first_release": True},
                        {**SMALL, "first_record": 1000, "check_k": 12}], env)  # fmt: skip
    published, blocked = runs
    assert green(published) and not green(blocked)

    def arrived(found: list[dict[str, Any]]) -> bool:
        """The gate's and the check's end events of both runs (each task's events are sent
        by their own process, in no fixed order)."""

        def ended(task: str) -> int:
            return sum(1 for e in found if e["job"]["name"].endswith(f".{task}")
                       and e["eventType"] in ("COMPLETE", "FAIL"))  # fmt: skip

        return ended("publish") >= 2 and ended("check_safety") >= 2

    sent = events(log, arrived)
    gate = [e for e in sent if e["job"]["name"].endswith(".publish")]
    complete = [e for e in gate if e["eventType"] == "COMPLETE"]
    failed = [e for e in gate if e["eventType"] == "FAIL"]
    assert len(complete) == 1 and len(failed) == 1, [e["eventType"] for e in gate]
    (done,) = complete
    facet = done["run"]["facets"][RUN_FACET]
    pub = envelope(published, "publish")
    assert facet["outcome"] == "published" and facet["safe"] is True
    assert facet["attempt"] == pub["attempt"]["uuid"]
    assert facet["release_id"] == pub["attempt"]["release_id"]
    (source,) = done["inputs"]
    assertions = source["inputFacets"]["dataQualityAssertions"]["assertions"]
    passed = {str(c).partition(":")[0] for c in pub["details"]["criteria"]}
    assert passed and {a["assertion"] for a in assertions} == passed | {"privacy:publish"}
    assert all(a["success"] for a in assertions)
    (target,) = done["outputs"]
    assert target["name"] == pub["outputs"]["published"]
    lineage = target["facets"]["columnLineage"]["fields"]
    qis = pub["release"]["group_columns"]
    assert qis and all(lineage[q]["transformationType"] == "MASKED" for q in qis)
    blocked_facet = failed[0]["run"]["facets"][RUN_FACET]
    assert blocked_facet["outcome"] == "blocked" and blocked_facet["safe"] is False
    assert failed[0]["outputs"] == []  # nothing published, no output
    # a check's own event asserts its criteria on the release it read
    checks = [e for e in sent if e["job"]["name"].endswith(".check_safety")
              and e["eventType"] in ("COMPLETE", "FAIL")]  # fmt: skip
    assert checks and all(
        e["inputs"][0]["inputFacets"]["dataQualityAssertions"]["assertions"] for e in checks
    )
    # nothing of the data: no sensitive value of the bundled data appears in any event
    dumped = json.dumps(sent)
    for value in ("Exec-managerial", "Prof-specialty", "Craft-repair"):
        assert value not in dumped
