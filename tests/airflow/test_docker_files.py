"""The docker/ files are consistent with the package (Docker itself cannot run here)."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"


def test_image_tag_matches_the_pinned_airflow() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    match = re.search(r"ARG AIRFLOW_IMAGE=apache/airflow:(\d+\.\d+\.\d+)-python(\d+\.\d+)", text)
    assert match, "the Dockerfile names an apache/airflow base image with a version"
    image_version, python = match.groups()
    assert image_version == version("apache-airflow"), "image and tested Airflow differ"
    pyproject = (ROOT / "pyproject.toml").read_text()
    low, high = re.search(r'"apache-airflow>=([\d.]+),<([\d.]+)"', pyproject).groups()  # type: ignore[union-attr]
    as_tuple = tuple(int(x) for x in image_version.split("."))
    assert (
        tuple(int(x) for x in low.split(".")) <= as_tuple < tuple(int(x) for x in high.split("."))
    )
    assert python == "3.11"
    assert '"apache-airflow==${AIRFLOW_VERSION}"' in text, "Airflow stays pinned in the image"


def test_files_the_dockerfile_copies_exist() -> None:
    text = (DOCKER / "Dockerfile").read_text()
    assert "plugins/" not in text  # the plugin comes from the entry point, registered once
    for line in text.splitlines():
        if line.startswith("COPY"):
            sources = [p for p in line.split()[1:-1] if not p.startswith("--")]
            for src in sources:
                assert (ROOT / src).exists(), f"Dockerfile copies {src}, which does not exist"


def test_compose_parses_and_references_existing_paths() -> None:
    compose = yaml.safe_load((DOCKER / "docker-compose.yaml").read_text())
    services = compose["services"]
    for name in ("postgres", "airflow-init", "airflow-apiserver", "airflow-scheduler",
                 "airflow-dag-processor", "airflow-triggerer"):  # fmt: skip
        assert name in services, name
    common = services["airflow-scheduler"]
    assert (DOCKER / common["build"]["context"] / common["build"]["dockerfile"]).exists()
    env = common["environment"]
    assert env["AIRFLOW__CORE__EXECUTOR"] == "LocalExecutor"
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"].startswith("postgresql")
    mounts = services["postgres"]["volumes"]
    init = next(m for m in mounts if "init-ledger-db.sql" in m).split(":")[0]
    assert (DOCKER / init).exists()
    assert "CREATE DATABASE privacy_ledger" in (DOCKER / init).read_text()
    import json

    ledger = json.loads(env["AIRFLOW_CONN_PRIVACY_LEDGER_DEFAULT"])
    assert ledger["conn_type"] == "privacyledger"  # RFC 3986: no "_"
    assert ledger["schema"] == "privacy_ledger"
