"""What a Privacy-MaxEnt estimate reports (Du et al. 2008, sections 3.1 and 7.1).

``P*(s | q) = sum_b P*(q, s, b) / P(q)`` for every QI value ``q`` of the release, the same
for every named individual, the maximum posterior (the number a release gate compares with
its threshold), the QI values and individuals most at risk, and the estimation accuracy
against the original table when it is given. Sensitive values declared *not sensitive*
(the paper's footnote 3: the most frequent Education value) do not count towards the
maximum.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from airflow_privacy.core.maxent.knowledge import Fact
from airflow_privacy.core.maxent.rules import AssociationRule
from airflow_privacy.core.maxent.solver import Solution

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class AtRisk:
    """One QI value (``kind == "qi"``) or named person (``"person"``) and its most likely
    sensitive value under the estimate."""

    kind: str
    label: str
    qi: dict[str, str]
    records: int
    value: str
    posterior: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True, eq=False)
class MaxEntResult:
    """The estimate and everything derived from it (JSON via :meth:`to_dict`)."""

    solution: Solution
    rules: tuple[AssociationRule, ...] = ()
    not_sensitive: tuple[str, ...] = ()
    accuracy: float | None = None

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
        out: FloatArray = mass / rel.qi_counts[:, None]
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
        return out

    @cached_property
    def _counted(self) -> npt.NDArray[np.bool_]:
        vals = self.release.values
        return np.array([v not in self.not_sensitive for v in vals], dtype=bool)

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

    def top_at_risk(self, n: int = 10) -> list[AtRisk]:
        """The ``n`` QI values and the named people with the highest posterior of one
        sensitive value (people first when tied), most at risk first."""
        rel = self.release
        vals = rel.values
        out: list[AtRisk] = []
        post = np.where(self._counted[None, :], self.posterior, -1.0)
        if self.people:
            ppost = np.where(self._counted[None, :], self.people_posterior, -1.0)
            for i, name in enumerate(self.people):
                j = int(np.argmax(ppost[i]))
                g = self.system.groups[self.system.named_groups[name]]
                out.append(
                    AtRisk("person", name, _qi_dict(rel, g.q), 1, vals[j], float(ppost[i, j]))
                )
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
                    vals[int(arg[q])],
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

    def to_dict(self, top: int = 10) -> dict[str, Any]:
        rel = self.release
        at = self.max_at
        return {
            "max_posterior": self.max_posterior,
            "max_at": at.to_dict() if at is not None else None,
            "top_at_risk": [a.to_dict() for a in self.top_at_risk(top)],
            "people": [
                {"name": name, "posterior": dict(zip(rel.values, row.tolist(), strict=True))}
                for name, row in zip(self.people, self.people_posterior, strict=True)
            ],
            "accuracy": self.accuracy,
            "accuracy_unit": "nats (weighted KL distance, section 7.1)",
            "entropy": self.entropy,
            "residual": self.solution.stats.residual,
            "not_sensitive": list(self.not_sensitive),
            "knowledge": [{"statement": f.describe(), **f.source.to_dict()} for f in self.facts],
            "rules": [r.to_dict() for r in self.rules],
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
