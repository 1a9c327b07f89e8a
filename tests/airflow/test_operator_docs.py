"""The operator documentation keeps up with the operators.

For every operator class of the provider (``OPERATOR_MODULES``), every parameter of its
``__init__`` (its own and the ones it inherits from the bases in ``operators/base.py``;
not ``**kwargs`` nor
Airflow's ``BaseOperator`` arguments) is documented on its page ``docs/operators/<snake
name>.md`` (as `` `name` ``) and in its class docstring (``:param name:`` or ````name````);
every page of ``docs/operators`` is linked from its index; and the Python example of every
page builds its DAG.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
from airflow.sdk import BaseOperator

from airflow_privacy.providers.airflow import OPERATOR_MODULES, record_check
from airflow_privacy.providers.airflow.operators.base import CheckOperator, PrivacyOperator

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "operators"


def operator_classes() -> list[type[BaseOperator]]:
    """The public operators the provider lists (defined in the modules it names)."""
    found: list[type[BaseOperator]] = []
    for name in OPERATOR_MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, BaseOperator)
                and value.__module__ == name
                and not attr.startswith("_")
            ):
                found.append(value)
    return found


OPERATORS = operator_classes()


def init_parameters(cls: type[BaseOperator]) -> list[str]:
    """Every keyword of ``cls.__init__``, walking up to (not into) ``BaseOperator``: a class
    that forwards ``**kwargs`` inherits its base's parameters."""
    names: list[str] = []
    for klass in cls.__mro__:
        if klass is BaseOperator or not issubclass(klass, BaseOperator):
            break
        if "__init__" not in vars(klass):
            continue
        for p in inspect.signature(vars(klass)["__init__"]).parameters.values():
            if p.name == "self" or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            if p.name not in names:
                names.append(p.name)
    own = set(inspect.signature(BaseOperator.__init__).parameters)
    return [n for n in names if n not in own]


def snake(name: str) -> str:
    # an acronym stays one word: DPReleaseOperator -> dp_release_operator
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def page(cls: type[Any]) -> Path:
    return DOCS / f"{snake(cls.__name__)}.md"


def in_page(text: str, name: str) -> bool:
    return f"`{name}`" in text


def in_docstring(doc: str, name: str) -> bool:
    return f":param {name}:" in doc or f"``{name}``" in doc


def test_the_provider_has_operators() -> None:
    names = {cls.__name__ for cls in OPERATORS}
    assert {
        "OpenAttemptOperator",
        "BucketizeOperator",
        "AnonymizeLatticeOperator",
        "CheckSafetyOperator",
        "MaxEntRiskOperator",
        "CompositionAuditOperator",
        "PublishReleaseOperator",
        "ReleaseReportOperator",
    } <= names
    from airflow_privacy.providers.airflow.operators.override import StewardOverrideOperator

    for cls in OPERATORS:
        # the steward's step is Airflow's human-in-the-loop operator, not a gate step
        assert issubclass(cls, PrivacyOperator) or cls is StewardOverrideOperator, cls.__name__
        assert init_parameters(cls), cls.__name__


@pytest.mark.parametrize("cls", OPERATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_on_the_operator_page(cls: type[BaseOperator]) -> None:
    path = page(cls)
    assert path.is_file(), f"{cls.__name__} has no page {path.relative_to(ROOT)}"
    text = path.read_text(encoding="utf-8")
    missing = [n for n in init_parameters(cls) if not in_page(text, n)]
    assert not missing, f"{path.relative_to(ROOT)} does not document {missing}"


@pytest.mark.parametrize("cls", OPERATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_in_the_class_docstring(cls: type[BaseOperator]) -> None:
    doc = inspect.getdoc(cls) or ""
    missing = [n for n in init_parameters(cls) if not in_docstring(doc, n)]
    assert not missing, f"the docstring of {cls.__name__} does not mention {missing}"


def test_the_common_page_documents_the_shared_arguments() -> None:
    text = (DOCS / "common.md").read_text(encoding="utf-8")
    for name in init_parameters(CheckOperator):
        assert in_page(text, name), name


def test_the_record_check_page_documents_its_parameters() -> None:
    text = (DOCS / "record_check.md").read_text(encoding="utf-8")
    for name in inspect.signature(record_check).parameters:
        assert in_page(text, name), name


def test_every_page_is_linked_from_the_index() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([^)#\s]+\.md)\)", index))
    pages = {p.name for p in DOCS.glob("*.md") if p.name != "index.md"}
    assert pages, "docs/operators has no pages"
    assert not pages - linked, f"not linked from docs/operators/index.md: {pages - linked}"
    assert not linked - pages, f"index.md links to missing pages: {linked - pages}"
    expected = {page(cls).name for cls in OPERATORS} | {"common.md", "record_check.md"}
    assert expected <= pages


EXAMPLES = sorted(p for p in DOCS.glob("*.md") if "```python" in p.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_the_page_examples_build_their_dags(path: Path) -> None:
    """Each page's example parses and builds its DAG: the arguments it shows are accepted
    (non-templated ones are checked when the DAG is parsed)."""
    from airflow.sdk import DAG

    blocks = re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    examples = [b for b in blocks if "with DAG(" in b]
    assert examples, f"{path.name} has no DAG example"
    for code in examples:
        scope: dict[str, Any] = {"__name__": f"docs_example_{path.stem}"}
        exec(compile(code, str(path), "exec"), scope)
        dags = [v for v in scope.values() if isinstance(v, DAG)]
        assert dags and all(d.task_dict for d in dags), path.name
