"""The closed word sets of airflow_privacy.vocabulary equal the engines' and the ledger's own
constants (the vocabulary imports nothing, so both front ends can build their checks from
it without loading an engine)."""

from __future__ import annotations

from airflow_privacy import vocabulary


def test_the_word_sets_equal_the_engines_constants() -> None:
    from airflow_privacy.core.algorithm_aware.intervals import METHODS as INTERVALS
    from airflow_privacy.core.algorithm_aware.lattice_mode import DISCLOSURE_MODES
    from airflow_privacy.core.anonymize import METHODS, METRICS
    from airflow_privacy.core.anonymize.dimensions import CATEGORICAL_SPLITS
    from airflow_privacy.core.backends import BACKENDS
    from airflow_privacy.core.composition.release import KINDS
    from airflow_privacy.core.dp.noise import MECHANISMS as DP_MECHANISMS
    from airflow_privacy.gate.pushdown import ANONYMIZE_BACKENDS
    from airflow_privacy.ledger.models import DP_KIND, RELEASE_STATUSES, STATUSES

    assert vocabulary.LEDGER_STATUSES == STATUSES
    assert vocabulary.RELEASE_STATUSES == RELEASE_STATUSES
    assert vocabulary.METHODS == METHODS
    assert vocabulary.METRICS == METRICS
    assert vocabulary.INTERVAL_METHODS == INTERVALS
    assert vocabulary.CATEGORICAL_SPLITS == CATEGORICAL_SPLITS
    assert vocabulary.DISCLOSURE_MODES == DISCLOSURE_MODES
    assert vocabulary.BACKENDS == BACKENDS
    assert vocabulary.ANONYMIZE_BACKENDS == ANONYMIZE_BACKENDS
    assert vocabulary.RELEASE_KINDS == KINDS
    assert vocabulary.DP_KIND == DP_KIND
    assert vocabulary.DP_MECHANISMS == DP_MECHANISMS


def test_the_vocabulary_imports_nothing() -> None:
    import ast
    from pathlib import Path

    tree = ast.parse(Path(vocabulary.__file__).read_text(encoding="utf-8"))
    imports = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert [getattr(n, "module", None) for n in imports] == ["__future__"]
