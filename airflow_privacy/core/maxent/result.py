"""What a Privacy-MaxEnt estimate reports (Du et al. 2008, sections 3.1 and 7.1).

``P*(s | q) = sum_b P*(q, s, b) / P(q)`` for every QI value ``q`` of the release, the same
for every named individual, the maximum posterior (the number a release gate compares with
its threshold), the QI values and individuals most at risk, and the estimation accuracy
against the original table when it is given. Sensitive values declared *not sensitive*
(the paper's footnote 3: the most frequent Education value) do not count towards the
maximum.

The gate's verdict is :meth:`MaxEntResult.is_safe`
(:func:`airflow_privacy.core.thresholds.maxent_safe`): the posterior is a float from an
iterative solver, so it must be below ``c`` by more than the tolerance and the solver's
error allowance (:attr:`MaxEntResult.posterior_error_bound`).

Redaction: named people come from a knowledge file; their names, QI values and the values
inferred about them are confidential. :meth:`MaxEntResult.to_dict` and
:meth:`MaxEntResult.top_at_risk` with ``redacted=True`` give the public form, where a
person is ``person #i`` (numbered by first mention in the knowledge's statements) with a
posterior and nothing else, and statements about individuals are reduced to who they
concern. Rows about QI values keep the QI combination (a group of the release), its size
and its largest posterior, but not which sensitive value that is: the estimate is made on
a release that may never be published, and "everyone with QI value q has s with
probability 0.99" is the disclosure itself. For the same reason statements about the
distribution and mined rules appear without their sensitive values. The confidential form
(``redacted=False``, and the posterior table :meth:`MaxEntResult.posterior_rows`) goes only
to files the user asks for.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core import thresholds
from airflow_privacy.core.maxent.knowledge import Fact, IndividualFact, pseudonyms
from airflow_privacy.core.maxent.rules import AssociationRule
from airflow_privacy.core.maxent.solver import Solution

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class AtRisk:
    """One QI value (``kind == "qi"``) or named person (``"person"``) and its most likely
    sensitive value under the estimate. In the public form (``redacted=True``) a person's
    ``label`` is ``person #i``, ``qi`` is empty and ``value`` is ``None``."""

    kind: str
    label: str
    qi: dict[str, str]
    records: int
    value: str | None
    posterior: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True, eq=False)
class MaxEntResult:
    """The estimate and everything derived from it (JSON via :meth:`to_dict`)."""

    solution: Solution
    rules: tuple[AssociationRule, ...] = ()
    benign: tuple[str, ...] = ()
    accuracy: float | None = None

    @property
    def not_sensitive(self) -> tuple[str, ...]:
        """The benign values under their former name (``--not-sensitive``)."""
        return self.benign

    @property
    def benign_absent(self) -> tuple[str, ...]:
        """Declared benign values that do not occur in the release (not an error)."""
        present = set(self.release.values)
        return tuple(v for v in self.benign if v not in present)

    @property
    def system(self) -> Any:
        return self.solution.system

    @property
    def release(self) -> Any:
        return self.solution.system.release

    @property
    def facts(self) -> tuple[Fact, ...]:
        out: tuple[Fact, ...] = self.solution.system.facts
        return out

    @cached_property
    def posterior(self) -> FloatArray:
        """``P*(s | q)``: rows are the release's QI values, columns its sensitive values."""
        sys_ = self.solution.system
        rel = sys_.release
        nq, nv = len(rel.qi_values), len(rel.values)
        mass = np.bincount(
            sys_.cell_q * nv + sys_.cell_s, weights=self.solution.x, minlength=nq * nv
        ).reshape(nq, nv)
        # a probability: the solver's rounding (a posterior of 1.0000000000000142) clipped
        out: FloatArray = np.clip(mass / rel.qi_counts[:, None], 0.0, 1.0)
        return out

    @cached_property
    def people(self) -> tuple[str, ...]:
        return tuple(self.solution.system.named_groups)

    @cached_property
    def people_posterior(self) -> FloatArray:
        """``P*(s | person)`` for every named person (rows in :attr:`people` order)."""
        sys_ = self.solution.system
        nv = len(sys_.release.values)
        named = sys_.named_groups
        out = np.zeros((len(named), nv))
        row_of = np.full(len(sys_.groups), -1, dtype=np.int64)
        for i, g in enumerate(named.values()):
            row_of[g] = i
        sel = row_of[sys_.cell_group] >= 0
        np.add.at(out, (row_of[sys_.cell_group[sel]], sys_.cell_s[sel]), self.solution.x[sel])
        clipped: FloatArray = np.clip(out, 0.0, 1.0)  # a probability, as :attr:`posterior`
        return clipped

    @cached_property
    def _counted(self) -> npt.NDArray[np.bool_]:
        vals = self.release.values
        return np.array([v not in self.benign for v in vals], dtype=bool)

    @cached_property
    def entropy(self) -> float:
        """The maximized entropy (nats): ``H(Q, S, B)``; with named people, the entropy of
        the pseudonym model minus the knowledge-independent ``sum_q P(q) log n(q)``, so that
        adding knowledge never increases it."""
        sys_ = self.solution.system
        n = sys_.n_records
        x = self.solution.x
        pos = x > 0
        p = x[pos] / n
        w = sys_.group_weight[sys_.cell_group[pos]]
        h_full = float(-(p * np.log(p / w)).sum())
        counts = sys_.release.qi_counts.astype(np.float64)
        return h_full - float((counts / n * np.log(counts)).sum())

    @cached_property
    def _pseudonyms(self) -> dict[str, str]:
        """``name -> person #i``, numbered by first mention in the knowledge's statements
        (then any other named person, in :attr:`people` order)."""
        return pseudonyms(self.facts, self.people)

    def pseudonym(self, name: str) -> str:
        """``person #i``: a named person in the public form (``i`` counts from 1 in the order
        in which the knowledge's statements first mention the people)."""
        return self._pseudonyms.get(name, "a person")

    def top_at_risk(self, n: int = 10, redacted: bool = False) -> list[AtRisk]:
        """The ``n`` QI values and the named people with the highest posterior of one
        sensitive value (people first when tied), most at risk first. ``redacted=True``:
        people as ``person #i`` without QI values or value, QI values without the value
        (module doc)."""
        rel = self.release
        vals = rel.values
        out: list[AtRisk] = []
        post = np.where(self._counted[None, :], self.posterior, -1.0)
        if self.people:
            ppost = np.where(self._counted[None, :], self.people_posterior, -1.0)
            for i, name in enumerate(self.people):
                j = int(np.argmax(ppost[i]))
                p = float(ppost[i, j])
                if redacted:
                    out.append(AtRisk("person", self.pseudonym(name), {}, 1, None, p))
                    continue
                g = self.system.groups[self.system.named_groups[name]]
                out.append(AtRisk("person", name, _qi_dict(rel, g.q), 1, vals[j], p))
        best = post.max(axis=1)
        arg = post.argmax(axis=1)
        order = np.lexsort((np.arange(best.size), -best))[:n]
        for q in order.tolist():
            out.append(
                AtRisk(
                    "qi",
                    rel.describe_qi(q),
                    _qi_dict(rel, q),
                    int(rel.qi_counts[q]),
                    None if redacted else vals[int(arg[q])],
                    float(best[q]),
                )
            )
        out.sort(key=lambda a: (-a.posterior, a.kind != "person"))
        return out[:n]

    @cached_property
    def max_at(self) -> AtRisk | None:
        top = self.top_at_risk(1)
        return top[0] if top and top[0].posterior >= 0 else None

    @property
    def max_posterior(self) -> float:
        """The largest ``P*(s | q)`` (or ``P*(s | person)``) over counted values: the gate's
        number."""
        return self.max_at.posterior if self.max_at is not None else 0.0

    @cached_property
    def posterior_error_bound(self) -> float:
        """The solver's error allowance on a posterior, in probability units.

        The solution satisfies every invariant and knowledge row to within the reported
        residual ``r`` (probability units, i.e. ``r N`` records, ``N`` the release's size,
        Du et al. 2008, section 3.2). A posterior is the mass of a QI value's (or a named
        person's) cells divided by its number of records, so the slack of its row moves it by
        at most ``r N / n``; the allowance is that slack for the smallest such row (``n = 1``
        when people are named). It carries the constraint slack to the posteriors; it is not
        a bound on the distance to the exact optimum, which the dual Newton method reaches
        to the same residual (docs/maxent.md, "The verdict").
        """
        sys_ = self.solution.system
        rows = [float(self.release.qi_counts.min())] if len(self.release.qi_counts) else []
        if self.people:
            rows.append(1.0)
        smallest = min(rows) if rows else 1.0
        return float(self.solution.stats.residual) * float(sys_.n_records) / smallest

    def is_safe(self, c: float) -> bool:
        """The MaxEnt gate: ``max_posterior < c - max(TOLERANCE, posterior_error_bound)``
        (:func:`airflow_privacy.core.thresholds.maxent_safe`); a posterior that is
        mathematically ``c`` but computed just below it is unsafe."""
        return thresholds.maxent_safe(self.max_posterior, c, self.posterior_error_bound)

    def _public_fact(self, f: Fact) -> dict[str, Any]:
        """A knowledge statement without names or sensitive values: a statement about
        individuals says whom it concerns (``person #i``), one about the distribution the
        QI values it is given; neither its label nor its values."""
        if isinstance(f, IndividualFact):
            who = ", ".join(self.pseudonym(p) for p in f.people)
            text = f"knowledge about {who}"
        else:
            cond = ", ".join(f"{c}={v}" for c, v in f.given) or "everyone"
            text = f"knowledge about the sensitive values given {cond}"
        return {**f.source.to_dict(), "statement": text, "label": None}

    def to_dict(self, top: int = 10, redacted: bool = False) -> dict[str, Any]:
        """JSON-ready result. ``redacted=False``: everything, including the named people's
        names, QI values and posteriors per value (confidential). ``redacted=True``: the
        public form (module doc): people as ``person #i`` with their largest posterior only,
        statements about individuals reduced to whom they concern."""
        rel = self.release
        at = self.top_at_risk(1, redacted=redacted) if self.max_at is not None else []
        if redacted:
            people: list[dict[str, Any]] = [
                {"name": self.pseudonym(name), "max_posterior": float(row[self._counted].max())}
                if self._counted.any()
                else {"name": self.pseudonym(name), "max_posterior": None}
                for name, row in zip(self.people, self.people_posterior, strict=True)
            ]
            knowledge = [self._public_fact(f) for f in self.facts]
        else:
            people = [
                {"name": name, "posterior": dict(zip(rel.values, row.tolist(), strict=True))}
                for name, row in zip(self.people, self.people_posterior, strict=True)
            ]
            knowledge = [{"statement": f.describe(), **f.source.to_dict()} for f in self.facts]
        rules = [r.public_dict() if redacted else r.to_dict() for r in self.rules]
        return {
            "max_posterior": self.max_posterior,
            "max_at": at[0].to_dict() if at else None,
            "top_at_risk": [a.to_dict() for a in self.top_at_risk(top, redacted=redacted)],
            "people": people,
            "redacted": redacted,
            "tolerance": thresholds.TOLERANCE,
            "posterior_error_bound": self.posterior_error_bound,
            "accuracy": self.accuracy,
            "accuracy_unit": "nats (weighted KL distance, section 7.1)",
            "entropy": self.entropy,
            "residual": self.solution.stats.residual,
            "benign": list(self.benign),
            **({"benign_absent": list(self.benign_absent)} if self.benign_absent else {}),
            "not_sensitive": list(self.benign),  # the former name, kept for readers of it
            "knowledge": knowledge,
            "rules": rules,
            "solver": self.solution.stats.to_dict(),
            "release": {
                "records": rel.n_records,
                "buckets": rel.n_buckets,
                "qi_values": len(rel.qi_values),
                "sensitive_values": len(rel.values),
                "qi_columns": list(rel.qi_columns),
                "sensitive": rel.sensitive,
                "bucket_column": rel.bucket_column,
            },
        }

    def public_dict(self, top: int = 10) -> dict[str, Any]:
        """The public form, :meth:`to_dict` with ``redacted=True``."""
        return self.to_dict(top, redacted=True)

    def public_reason(self, c: float | None = None) -> str:
        """One sentence for logs, reports and the ledger, without names or sensitive values:
        where the largest posterior is (a QI value of the release, or ``person #i``), how
        large, and with ``c`` the verdict of :meth:`is_safe`."""
        top = self.top_at_risk(1, redacted=True)
        if self.max_at is None or not top:
            return "every sensitive value is declared benign: nothing can be disclosed"
        at = top[0]
        if at.kind == "person":
            base = (
                f"under the given knowledge the maximum-entropy estimate gives {at.label} one "
                f"sensitive value with probability {at.posterior:.4f}"
            )
        else:
            base = (
                f"under the given knowledge the maximum-entropy estimate gives a person with "
                f"{at.label} one sensitive value with probability {at.posterior:.4f}"
            )
        if c is None:
            return base
        margin = max(thresholds.TOLERANCE, self.posterior_error_bound)
        verdict = "is below" if self.is_safe(c) else "is not below"
        return f"{base}, which {verdict} c = {c:g} (tolerance {margin:.1e})"

    def posterior_rows(self) -> tuple[list[str], list[list[Any]]]:
        """The ``P*(s | q)`` table: header and rows (QI values, records, one column per
        sensitive value)."""
        rel = self.release
        header = [*rel.qi_columns, "records", *(f"P({v})" for v in rel.values)]
        rows = [
            [*q, int(rel.qi_counts[i]), *self.posterior[i].tolist()]
            for i, q in enumerate(rel.qi_values)
        ]
        return header, rows


def _qi_dict(rel: Any, q: int) -> dict[str, str]:
    return dict(zip(rel.qi_columns, rel.qi_values[q], strict=True))
