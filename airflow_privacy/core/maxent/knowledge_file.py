"""Reading background knowledge written by people: a YAML (or JSON) file.

The format (documented in docs/usage/maxent.md)::

    version: 1
    people:                                # pseudonyms for individuals (section 6)
      Alice: {sex: Female, degree: college}
    knowledge:
      - name: men rarely have breast cancer  # optional, used in messages
        given: {sex: Male}                   # Q_v: any subset of the QI columns ({} = all)
        value: Breast Cancer                 # or a list: P(s1 or s2 | Q_v)
        probability: 0                       # or [low, high]: vague knowledge
      - person: Alice
        value: [Breast Cancer, HIV]
        probability: 1
      - people: [Alice, Bob, Charlie]
        value: HIV
        count: 2                             # or [low, high]

Every error names the line of the offending entry: unknown keys, a probability outside
[0, 1], a ``given`` column that is not a QI column, and -- when the release is known -- a
value the release does not contain. Errors never quote a person's name, a person's QI
values or a sensitive value (they end up in logs and task output): a person is
``person #i`` (numbered by first mention in the statements, as results number them) or
"the person declared on line N", a value is its position in the statement's list.

The file is read at the node level, so an unquoted ``No`` or ``39`` is the string ``"No"``
/ ``"39"`` where a value is expected (YAML's implicit booleans and numbers never change a
value's meaning).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import yaml

from airflow_privacy.core.maxent.knowledge import (
    Bound,
    DistributionFact,
    Fact,
    IndividualFact,
    Knowledge,
    Person,
    Source,
)
from airflow_privacy.errors import InputError

KNOWLEDGE_LIMIT = 4 << 20  # bytes a knowledge file may take
_TOP_KEYS = ("version", "people", "knowledge")
_STATEMENT_KEYS = ("name", "given", "person", "people", "value", "probability", "count")


class Schema(Protocol):
    """What validation needs to know about the release (a :class:`BucketRelease` is one)."""

    @property
    def qi_columns(self) -> tuple[str, ...]: ...

    @property
    def sensitive(self) -> str: ...

    @property
    def values(self) -> tuple[str, ...]: ...

    @property
    def column_domains(self) -> dict[str, frozenset[str]]: ...


@dataclass(frozen=True)
class _Ctx:
    file: str
    schema: Schema | None
    mentioned: list[str] = field(default_factory=list)  # people, by first mention

    def pseudonym(self, name: str) -> str:
        """``person #i`` of :func:`~airflow_privacy.core.maxent.knowledge.pseudonyms`."""
        if name not in self.mentioned:
            self.mentioned.append(name)
        return f"person #{self.mentioned.index(name) + 1}"

    def fail(self, node: yaml.Node, message: str) -> InputError:
        return InputError(f"{self.file} line {node.start_mark.line + 1}: {message}")


def load_knowledge(path: str | Path, schema: Schema | None = None) -> Knowledge:
    """Read and validate a knowledge file (``.yaml``, ``.yml`` or ``.json``)."""
    from airflow_privacy.core.io import read_text

    p = Path(path)
    text = read_text(p, "knowledge", limit=KNOWLEDGE_LIMIT)
    return parse_knowledge(text, schema, file=p.name)


def parse_knowledge(text: str, schema: Schema | None = None, file: str = "knowledge") -> Knowledge:
    """Parse knowledge from YAML/JSON text; validate against ``schema`` when given."""
    from airflow_privacy.core.io import compose_yaml

    ctx = _Ctx(file, schema)
    root = compose_yaml(text, file)  # bounded: a YAML bomb or deep nesting is refused early
    if root is None:
        raise InputError(f"{file}: the knowledge file is empty")
    top = _mapping(ctx, root, "the knowledge file", _TOP_KEYS)
    if "version" in top:
        node = top["version"]
        if not isinstance(node, yaml.ScalarNode) or node.value.strip() != "1":
            raise ctx.fail(node, "version must be 1")
    people: dict[str, Person] = {}
    if "people" in top:
        people = _people(ctx, top["people"])
    if "knowledge" not in top:
        raise ctx.fail(root, "missing 'knowledge': a list of statements")
    seq = top["knowledge"]
    if not isinstance(seq, yaml.SequenceNode):
        raise ctx.fail(seq, "'knowledge' must be a list of statements")
    facts = tuple(_statement(ctx, node, i, people) for i, node in enumerate(seq.value))
    return Knowledge(facts, tuple(people.values()))


# ----------------------------------------------------------------- statements


def _statement(ctx: _Ctx, node: yaml.Node, index: int, people: Mapping[str, Person]) -> Fact:
    m = _mapping(ctx, node, f"statement {index + 1}", _STATEMENT_KEYS)
    line = node.start_mark.line + 1
    kinds = [k for k in ("given", "person", "people") if k in m]
    if len(kinds) != 1:
        raise ctx.fail(
            node,
            "a statement needs exactly one of 'given' (knowledge about the data), 'person' "
            "or 'people' (knowledge about individuals)"
            + (f"; it has {', '.join(kinds)}" if kinds else ""),
        )
    kind = kinds[0]
    name = _text(ctx, m["name"], "name") if "name" in m else None
    if "value" not in m:
        raise ctx.fail(node, "missing 'value': the sensitive value(s) the statement is about")
    values = _values(ctx, m["value"])
    if kind == "given":
        given = _given(ctx, m["given"])
        if "count" in m:
            raise ctx.fail(m["count"], "'count' is for 'people' statements; use 'probability'")
        bound = _bound(ctx, m, node, "probability", 1.0)
        fact_d = DistributionFact(given, values, bound, Source("", line, ctx.file))
        label = name or fact_d.describe()
        return DistributionFact(given, values, bound, Source(label, line, ctx.file))
    if kind == "person":
        who: tuple[str, ...] = (_person_ref(ctx, m["person"], people),)
        ctx.pseudonym(who[0])
        if "count" in m:
            raise ctx.fail(m["count"], "'count' is for 'people' statements; use 'probability'")
        bound = _bound(ctx, m, node, "probability", 1.0)
    else:
        seq = m["people"]
        if not isinstance(seq, yaml.SequenceNode) or not seq.value:
            raise ctx.fail(seq, "'people' must be a non-empty list of names from 'people:'")
        names = [_person_ref(ctx, n, people) for n in seq.value]
        for n in names:
            ctx.pseudonym(n)
        dupes = [i for i, n in enumerate(names) if n in names[:i]]
        if dupes:
            n = names[dupes[0]]
            raise ctx.fail(
                seq,
                f"{ctx.pseudonym(n)} is listed more than once (entries "
                f"{names.index(n) + 1} and {dupes[0] + 1} of 'people')",
            )
        who = tuple(names)
        if "probability" in m:
            raise ctx.fail(m["probability"], "'people' statements take 'count' (how many of them)")
        bound = _bound(ctx, m, node, "count", float(len(who)))
    fact_i = IndividualFact(who, values, bound, Source("", line, ctx.file))
    return IndividualFact(who, values, bound, Source(name or fact_i.describe(), line, ctx.file))


def _given(ctx: _Ctx, node: yaml.Node, person: bool = False) -> tuple[tuple[str, str], ...]:
    if not isinstance(node, yaml.MappingNode):
        raise ctx.fail(node, "'given' must be a mapping of QI column to value, e.g. {sex: Male}")
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key_node, val_node in node.value:
        col = _text(ctx, key_node, "a QI column name")
        if col in seen:
            raise ctx.fail(key_node, f"column {col!r} is given twice")
        seen.add(col)
        val = _text(ctx, val_node, f"the value of {col!r}")
        _check_qi(ctx, key_node, val_node, col, val, person)
        out.append((col, val))
    return tuple(out)


def _people(ctx: _Ctx, node: yaml.Node) -> dict[str, Person]:
    if not isinstance(node, yaml.MappingNode):
        raise ctx.fail(node, "'people' must map a pseudonym to the person's QI values")
    out: dict[str, Person] = {}
    for key_node, val_node in node.value:
        name = _text(ctx, key_node, "a person's name")
        if name in out:
            raise ctx.fail(key_node, f"this person is already declared on line {out[name].line}")
        qi = _given(ctx, val_node, person=True)
        if ctx.schema is not None:
            have = {c for c, _ in qi}
            missing = [c for c in ctx.schema.qi_columns if c not in have]
            if missing:
                raise ctx.fail(
                    val_node,
                    f"the person declared on line {key_node.start_mark.line + 1}: QI column "
                    f"{missing[0]!r} is missing (a person needs every QI column: "
                    f"{', '.join(ctx.schema.qi_columns)})",
                )
        out[name] = Person(name, qi, key_node.start_mark.line + 1)
    return out


def _person_ref(ctx: _Ctx, node: yaml.Node, people: Mapping[str, Person]) -> str:
    name = _text(ctx, node, "a person's name")
    if name not in people:
        declared = f"{len(people)} declared" if people else "none declared"
        raise ctx.fail(
            node,
            f"the person named here is not declared under 'people:' ({declared}; names are "
            "compared exactly, case and spaces included)",
        )
    return name


def _values(ctx: _Ctx, node: yaml.Node) -> tuple[str, ...]:
    nodes = node.value if isinstance(node, yaml.SequenceNode) else [node]
    if not nodes:
        raise ctx.fail(node, "'value' must name at least one sensitive value")
    out: list[str] = []
    for i, n in enumerate(nodes, start=1):
        val = _text(ctx, n, "a sensitive value")
        if val in out:
            raise ctx.fail(
                n,
                f"'value' lists the same sensitive value twice (items {out.index(val) + 1} "
                f"and {i})",
            )
        if ctx.schema is not None and val not in ctx.schema.values:
            raise ctx.fail(
                n,
                f"item {i} of 'value' is not a value of the sensitive column "
                f"{ctx.schema.sensitive!r} ({len(ctx.schema.values)} values; compared "
                "exactly, case and spaces included)",
            )
        out.append(val)
    return tuple(out)


def _bound(ctx: _Ctx, m: Mapping[str, yaml.Node], node: yaml.Node, key: str, top: float) -> Bound:
    if key not in m:
        raise ctx.fail(node, f"missing {key!r}: a number or a [low, high] interval")
    bnode = m[key]
    what = "a probability" if key == "probability" else f"a number of people (0 to {top:g})"
    if isinstance(bnode, yaml.SequenceNode):
        if len(bnode.value) != 2:
            raise ctx.fail(bnode, f"{key!r} as an interval must be [low, high]")
        low = _number(ctx, bnode.value[0], key)
        high = _number(ctx, bnode.value[1], key)
        for n, v in ((bnode.value[0], low), (bnode.value[1], high)):
            _in_range(ctx, n, key, v, top, what)
        if low > high:
            raise ctx.fail(bnode, f"{key!r} interval [{low:g}, {high:g}] has low > high")
        return Bound(low, high)
    value = _number(ctx, bnode, key)
    _in_range(ctx, bnode, key, value, top, what)
    return Bound(value, value)


def _in_range(ctx: _Ctx, node: yaml.Node, key: str, v: float, top: float, what: str) -> None:
    if not 0.0 <= v <= top:
        span = "[0, 1]" if key == "probability" else f"[0, {top:g}]"
        raise ctx.fail(node, f"{key} {v:g} is outside {span}: it must be {what}")


def _number(ctx: _Ctx, node: yaml.Node, key: str) -> float:
    if not isinstance(node, yaml.ScalarNode):
        raise ctx.fail(node, f"{key!r} must be a number")
    text = node.value.strip()
    try:
        value = float(text)
    except ValueError:
        parsed = _fraction(text)
        if parsed is None:
            raise ctx.fail(node, f"{key!r} must be a number, got {text!r}") from None
        value = parsed
    if not math.isfinite(value):
        raise ctx.fail(node, f"{key!r} must be a finite number, got {text!r}")
    return value


def _fraction(text: str) -> float | None:
    """``"1/3"`` -> 0.333...: people write knowledge as fractions."""
    parts = text.split("/")
    if len(parts) != 2:
        return None
    try:
        num, den = float(parts[0]), float(parts[1])
    except ValueError:
        return None
    return num / den if den else None


def _check_qi(
    ctx: _Ctx, key_node: yaml.Node, val_node: yaml.Node, col: str, val: str, person: bool
) -> None:
    schema = ctx.schema
    if schema is None:
        return
    if col not in schema.qi_columns:
        role = " (it is the sensitive column)" if col == schema.sensitive else ""
        raise ctx.fail(
            key_node,
            f"{col!r} is not a QI column{role}; QI columns: {', '.join(schema.qi_columns)}",
        )
    domain = schema.column_domains[col]
    if val not in domain:
        if person:  # a person's QI value is not repeated (nor a guess close to it)
            raise ctx.fail(
                val_node,
                f"the value of QI column {col!r} is not a value the release has "
                f"({len(domain)} values; compared exactly, case and spaces included)",
            )
        raise ctx.fail(
            val_node, f"unknown value {val!r} of QI column {col!r}" + _suggest(val, domain)
        )


def _mapping(ctx: _Ctx, node: yaml.Node, what: str, allowed: Sequence[str]) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        raise ctx.fail(node, f"{what} must be a mapping (key: value)")
    out: dict[str, yaml.Node] = {}
    for key_node, val_node in node.value:
        key = _text(ctx, key_node, "a key")
        if key not in allowed:
            raise ctx.fail(
                key_node, f"unknown key {key!r} in {what} (allowed: {', '.join(allowed)})"
            )
        if key in out:
            raise ctx.fail(key_node, f"key {key!r} appears twice in {what}")
        out[key] = val_node
    return out


def _text(ctx: _Ctx, node: yaml.Node, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise ctx.fail(node, f"expected {what} (a single value), got a list or mapping")
    if node.tag == "tag:yaml.org,2002:null" and node.style is None and node.value in ("", "~"):
        raise ctx.fail(node, f"expected {what}, got nothing")
    return str(node.value)


def _suggest(value: str, known: Sequence[str] | frozenset[str]) -> str:
    options = sorted(known)
    close = difflib.get_close_matches(value, options, n=1)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if len(options) <= 12:
        return f" (known: {', '.join(options)})"
    return f" ({len(options)} known values)"
