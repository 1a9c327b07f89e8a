"""A step of the gate, declared once (:class:`Step`), and the attempt protocol every check
step follows (:class:`MeasuringStep`).

A step declares its :class:`~airflow_privacy.gate.steps.fields.Field` s, its cross-field
rules (:meth:`Step.rules`, written once in the project's words: ``opt(key)`` names a field
as the front end in effect spells it), how the checked values become the service's request
(:meth:`Step.request`) and the work that differs (:meth:`MeasuringStep.measure`). The
command line and the operators derive everything else: their parsers and argument checks,
the error wording, the reference tables of the docs.

The rules run in the service (so both front ends get them when the step runs) and, in
Airflow, also when the DAG is parsed, on the values that are not templates yet: a rule
reads only the values it is given (:class:`Known`) and waits while one it needs is unknown.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from airflow_privacy.gate.steps.fields import Field

if TYPE_CHECKING:
    from airflow_privacy.gate.attempts import CheckStart
    from airflow_privacy.gate.context import GateContext
    from airflow_privacy.gate.envelope import Envelope


class Known(Mapping[str, Any]):
    """The values of a step's fields that are known now (not templates waiting to be
    rendered). ``known.has("a", "b")``: whether a rule that reads both can run."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._values = dict(values)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def has(self, *keys: str) -> bool:
        return all(k in self._values for k in keys)


class Step:
    """A gate step's declaration (module doc). Subclasses set the class attributes and
    override :meth:`rules`, :meth:`request` and :meth:`run`."""

    #: the command's name (``airflow-privacy NAME``) and the envelope's ``step``
    name: ClassVar[str]
    #: the words of its command when they are not ``(name,)``: ``("policy", "set")``
    command: ClassVar[tuple[str, ...]] = ()
    #: one line for ``airflow-privacy --help``
    summary: ClassVar[str]
    #: the command's description (``airflow-privacy NAME --help``)
    description: ClassVar[str]
    #: the operator's dotted class name (None: no operator)
    operator: ClassVar[str | None] = None
    #: the fields this step declares (module doc)
    fields: ClassVar[tuple[Field, ...]] = ()
    #: the command-line option groups shared by several commands, added after the fields:
    #: ``criterion-flags``, ``input``, ``attempt`` (or ``ledger`` alone), ``report``,
    #: ``output``
    cli_groups: ClassVar[tuple[str, ...]] = ("output",)
    #: whether the step works under an attempt (``attempt`` / ``attempt_task_id``)
    takes_attempt: ClassVar[bool] = False
    #: what ``--format json`` prints (the ledger's listings print their records)
    json_output: ClassVar[str] = "the report envelope"

    def template_fields(self) -> tuple[str, ...]:
        """The operator arguments that are templated: every templated field's argument (a
        reference's variants and its connection with it)."""
        out: list[str] = []
        for f in self.fields:
            if f.argument is None or not f.templated:
                continue
            out.append(f.argument)
            if f.kind == "ref" and f.variants:
                out.extend([*f.variants, f.conn_arg, f.table_conn])
        return tuple(dict.fromkeys(out))

    def field(self, key: str) -> Field:
        for f in self.fields:
            if f.key == key:
                return f
        raise KeyError(key)

    def rules(self, known: Known) -> None:
        """The cross-field rules (module doc): raise ``InputError`` naming the fields."""

    def check(self, known: Known) -> None:
        """Every declared range, choice and exclusive set of the known values, then
        :meth:`rules`: what each front end and the service run, so a declaration is enforced
        wherever the value comes from."""
        from airflow_privacy.gate.steps.values import at_most_one, in_range

        for f in self.fields:
            value = known.get(f.key)
            if value is None:
                continue
            if f.kind in ("number", "whole"):
                in_range(f, value)
            elif f.kind == "choice" and value not in f.choices:
                from airflow_privacy.errors import InputError, opt

                raise InputError(
                    f"{opt(f.key)} must be one of {', '.join(f.choices)}, got {value!r}"
                )
        sets: dict[str, list[str]] = {}
        for f in self.fields:
            if f.exclusive:
                sets.setdefault(f.exclusive, []).append(f.key)
        for keys in sets.values():
            at_most_one(keys, [k for k in keys if known.get(k) is not None])
        self.rules(known)

    def request(self, values: Mapping[str, Any]) -> Any:
        """The service's request from the checked values of every field (by key), plus the
        shared ones the front end adds (``attempt``, ``name``, ``ledger``, ...)."""
        raise NotImplementedError

    def run(self, req: Any, ctx: GateContext) -> Envelope:
        raise NotImplementedError


class MeasuringStep(Step):
    """A step that measures a release and may record its envelope under an attempt: the
    attempt protocol is here once, so no step can forget a part of it.

    1. the rules run (:meth:`Step.rules`) on the request's values;
    2. ``begin``: the attempt must be open, and the release this step reads must be the
       bytes the attempt recorded (the content digest is compared);
    3. an attempt whose content is already published is not measured again (``skipped``);
    4. :meth:`measure` does the work and returns the envelope;
    5. ``record``: the envelope is stored as this check of the attempt.
    """

    takes_attempt = True

    def values_of(self, req: Any) -> Known:
        """The request's values by field key, for the rules (default: none)."""
        return Known({})

    def reads(self, req: Any) -> Any:
        """The release this step reads (what ``begin`` compares with the attempt's
        digest); None for a step that measures something else."""
        return getattr(req, "release", None)

    def measure(self, req: Any, ctx: GateContext, start: CheckStart, prepared: Any) -> Envelope:
        raise NotImplementedError

    def run(self, req: Any, ctx: GateContext) -> Envelope:
        from airflow_privacy.gate.attempts import begin_check, record, skipped

        self.check(self.values_of(req))
        with self.within_memory():
            prepared = self.before_begin(req, ctx)
        start = begin_check(req.attempt, req.ledger, ctx, reads=self.reads(req))
        if start.skip:
            return skipped(self.name, req.name, start.info)
        with self.within_memory():
            env = self.measure(req, ctx, start, prepared)
        return record(env, start, req.ledger, ctx)

    @contextmanager
    def within_memory(self) -> Iterator[None]:
        """Running out of memory (the process's limit, or the machine's) is said in one
        line naming the step, as bad input (exit 2; nothing is recorded), not as a crash:
        the input is too large to hold in this process. The counting backend that streams
        is named when the step has one."""
        from airflow_privacy.errors import InputError, opt

        try:
            yield
        except MemoryError as exc:
            streams = any(f.key == "backend" for f in self.fields)
            hint = (
                f"; {opt('backend')} duckdb counts it streaming, in bounded memory"
                if streams
                else "; give the process more memory"
            )
            raise InputError(
                f"the {self.name} step ran out of memory ({type(exc).__name__}): the input is "
                f"too large to hold in this process{hint}"
            ) from None

    def before_begin(self, req: Any, ctx: GateContext) -> Any:
        """Checks of the request that need more than its fields (e.g. the criteria's names
        known to the engines): before the ledger is touched. What it returns (e.g. files it
        loaded to check them) is handed to :meth:`measure` as ``prepared``, so nothing is
        read twice."""
        return None
