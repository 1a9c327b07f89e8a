# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine:
# they create the virtualenv at .venv (and pyCANON's own at .venv-pycanon) when missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PYCANON_VENV := .venv-pycanon

.PHONY: demo cli-demo test lint typecheck docs check bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# the provider: the package with Airflow and Great Expectations (what the main job needs)
$(VENV)/.airflow-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[airflow,gx]'
	touch $@

# everything: Airflow, Great Expectations, psycopg, pytest, hypothesis, ruff, mypy
$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.airflow-installed

.venv-anonypy/.installed: benchmarks/anonypy_env.sh
	bash benchmarks/anonypy_env.sh
	touch $@

$(PYCANON_VENV)/.installed: benchmarks/pycanon_env.sh
	bash benchmarks/pycanon_env.sh
	touch $@

## The main job: the sample release DAG end to end on the bundled data (SQLite), twice: a
## first release that publishes, then an overlapping one the composition audit blocks.
demo: $(VENV)/.airflow-installed
	$(BIN)/python -m airflow_privacy.providers.airflow.release_demo --home build/airflow

## The CLI tour: sample releases of the bundled data, checked with airflow-privacy check.
cli-demo: $(VENV)/.airflow-installed
	$(BIN)/airflow-privacy demo --out build/demo

## The test suite (unit, property, CLI, pyCANON cross-check). One worker more than the
## machine has cores: the live-Airflow and DAG modules spend much of their time waiting on
## Airflow's scheduler, and the extra worker computes meanwhile (docs/layout.md).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: $(VENV)/.dev-installed $(PYCANON_VENV)/.installed
	AIRFLOW_PRIVACY_PYCANON=1 $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing on purpose"; exit 1; fi; \
	exit $$rc

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.dev-installed
	$(BIN)/mypy

## The documentation site (MkDocs, strict: a broken link or anchor fails), in build/site;
## the generated reference tables are checked against the steps' declarations first.
docs: $(VENV)/.dev-installed
	$(BIN)/python -m airflow_privacy.reference_docs --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

check: lint typecheck docs test

bench: $(VENV)/.dev-installed $(PYCANON_VENV)/.installed .venv-anonypy/.installed
	$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf build .pytest_cache .mypy_cache .ruff_cache .hypothesis
