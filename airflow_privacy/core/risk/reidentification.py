"""Re-identification risk of a sample under El Emam's three attacker models, as ARX computes it.

The input is the sizes of the sample's equivalence classes (``f_j``: the records sharing one
combination of quasi-identifier values; for a :class:`~airflow_privacy.core.model.Bucketization`
these are ``bucketization.sizes``) and, for the journalist and marketer models, the size of each
sample class's matching class in the population (``F_j >= f_j``). Suppressed records are the
caller's business: ARX leaves them out of the classes before it measures, and so must the caller.

With ``n = sum f_j`` records in ``J`` classes and a threshold ``tau`` (the highest acceptable
probability of re-identifying one record), the measures are those of El Emam & Dankar (2008)
for the prosecutor and journalist re-identification scenarios (the maximum risk, the proportion
of records at risk, the average risk), and of El Emam (2013),
chapter "Measuring the Probability of Re-Identification", computed as ARX's
``RiskModelSampleSummary`` computes them (the class's own Javadoc cites that chapter):

* **prosecutor** (the attacker knows the person is in the sample): a record of class ``j`` is
  re-identified with probability ``1/f_j``. Records at risk ``(1/n) sum_{j: 1/f_j > tau} f_j``;
  highest risk ``1/min_j f_j``; average risk = success rate ``J/n``.
* **journalist** (the attacker knows only that the person is in the population): a record of
  class ``j`` is re-identified with probability ``1/F_j``. Records at risk
  ``(1/n) sum_{j: 1/F_j > tau} f_j``; highest risk ``1/min_j F_j``; average risk = success rate
  ``max(J / sum_j F_j, (1/n) sum_j f_j/F_j)``.
* **marketer** (the attacker re-identifies as many records as possible): success rate
  ``(1/n) sum_j f_j/F_j``.

"At risk" is ARX's strict comparison ``1d / groupSize > threshold``: a record whose risk equals
``tau`` is not at risk. The comparison is exact here (a rational ``1/f_j`` against the decimal
the threshold prints as, :func:`airflow_privacy.core.thresholds.at_most`), where ARX compares
doubles; the two agree except when ``tau`` is typed with about 16 significant digits
(``0.3333333333333333``: ARX reads ``1d/3`` as equal and a class of 3 as not at risk, here
``1/3`` exceeds the decimal and the class is at risk, the safe side).

Discrepancies with ARX, all deliberate:

* ARX estimates no population class sizes from a sampling fraction in this summary: with no
  population table (``handle.getSuperset() == null``) it uses the sample as the population
  (``population = sample``), so journalist risk equals prosecutor risk and the marketer
  success rate is ``J/n``. This engine does the same when ``population_sizes`` is omitted and
  takes no sampling fraction (ARX's sampling fraction feeds only its population-uniqueness
  models: Pitman, Zayatz, SNB, which this engine does not reproduce).
* ARX returns zeros for an empty sample; here an empty sample is bad input.
* ARX's later ``getEffectiveRiskThreshold`` (the size threshold ``1/tau`` rounded to within 1%)
  is a reported value only; the counts above use the threshold as given, as ARX's summary does.

References: K. El Emam, *Guide to the De-Identification of Personal Health Information*, CRC
Press, 2013; K. El Emam and F. K. Dankar, "Protecting privacy using k-anonymity", *Journal of
the American Medical Informatics Association* 15(5):627-637, 2008.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

from airflow_privacy.core.thresholds import smallest_size_at_most
from airflow_privacy.errors import InputError, opt

__all__ = [
    "JournalistRisk",
    "MarketerRisk",
    "ProsecutorRisk",
    "ReidentificationRisk",
    "journalist_risk",
    "marketer_risk",
    "prosecutor_risk",
    "reidentification_risk",
]


@dataclass(frozen=True)
class ProsecutorRisk:
    """Prosecutor risk (El Emam & Dankar 2008, the prosecutor re-identification scenario).

    ``records_at_risk`` is the share of records whose class gives a re-identification
    probability ``1/f_j`` strictly above ``threshold`` (``None`` without a threshold);
    ``highest_risk`` is ``1/min f_j``; ``average_risk`` (ARX's success rate) is ``J/n``.
    """

    threshold: float | None
    n_records: int
    n_classes: int
    records_at_risk: float | None
    n_records_at_risk: int | None
    highest_risk: float
    average_risk: float

    @property
    def success_rate(self) -> float:
        """ARX's name for the average risk."""
        return self.average_risk

    def to_dict(self) -> dict[str, Any]:
        return {"model": "prosecutor", **asdict(self), "success_rate": self.success_rate}


@dataclass(frozen=True)
class JournalistRisk:
    """Journalist risk (El Emam & Dankar 2008, the journalist re-identification scenario).

    As :class:`ProsecutorRisk` with the population class sizes ``F_j`` of the sample's
    classes: ``records_at_risk`` counts the sample records with ``1/F_j > threshold``,
    ``highest_risk`` is ``1/min F_j`` and ``average_risk`` is ARX's
    ``max(J / sum F_j, (1/n) sum f_j/F_j)``.
    """

    threshold: float | None
    n_records: int
    n_classes: int
    n_population_records: int
    records_at_risk: float | None
    n_records_at_risk: int | None
    highest_risk: float
    average_risk: float

    @property
    def success_rate(self) -> float:
        """ARX's name for the average risk."""
        return self.average_risk

    def to_dict(self) -> dict[str, Any]:
        return {"model": "journalist", **asdict(self), "success_rate": self.success_rate}


@dataclass(frozen=True)
class MarketerRisk:
    """Marketer risk: the expected share of sample records re-identified when the attacker
    matches every record, ``(1/n) sum f_j/F_j`` (ARX's ``getMarketerRisk``)."""

    n_records: int
    n_classes: int
    success_rate: float

    def to_dict(self) -> dict[str, Any]:
        return {"model": "marketer", **asdict(self)}


@dataclass(frozen=True)
class ReidentificationRisk:
    """The three models together, as ARX's risk summary reports them."""

    prosecutor: ProsecutorRisk
    journalist: JournalistRisk
    marketer: MarketerRisk
    population_given: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "population_given": self.population_given,
            "prosecutor": self.prosecutor.to_dict(),
            "journalist": self.journalist.to_dict(),
            "marketer": self.marketer.to_dict(),
        }


# ---------------------------------------------------------------- validation
def _sizes(values: Iterable[int], name: str) -> tuple[int, ...]:
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise InputError(f"{opt(name)} must be a sequence of positive integers")
    values = list(values)
    if values and all(type(v) is int for v in values) and min(values) >= 1:
        # the usual input, plain integers: no check per value (the abstract-class test cost
        # 40 ms on 12,458 classes); anything else is checked one by one, for its message
        return tuple(values)
    out: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InputError(f"{opt(name)} must hold integers, got {v!r}")
        if int(v) < 1:
            raise InputError(f"{opt(name)} must hold positive class sizes, got {int(v)}")
        out.append(int(v))
    if not out:
        raise InputError(f"{opt(name)} is empty: the sample has no records")
    return tuple(out)


def _threshold(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise InputError(f"{opt('threshold')} must be a number in (0, 1], got {threshold!r}")
    t = float(threshold)
    if not (math.isfinite(t) and 0.0 < t <= 1.0):
        raise InputError(f"{opt('threshold')} must be in (0, 1], got {threshold!r}")
    return t


def _population(sample: tuple[int, ...], population_sizes: Iterable[int] | None) -> tuple[int, ...]:
    if population_sizes is None:
        return sample
    pop = _sizes(population_sizes, "population_sizes")
    if len(pop) != len(sample):
        raise InputError(
            f"{opt('population_sizes')} has {len(pop)} classes, the sample {len(sample)}"
        )
    for j, (f, big_f) in enumerate(zip(sample, pop, strict=True)):
        if big_f < f:
            raise InputError(
                f"{opt('population_sizes')}[{j}] = {big_f} is smaller than the sample class ({f})"
            )
    return pop


def _at_risk(sample: tuple[int, ...], risk_sizes: tuple[int, ...], t: float | None) -> int | None:
    """Records of the classes whose risk ``1 / risk_size`` is strictly above ``t`` (ARX:
    ``1d / groupSize > threshold``), compared exactly on the safe side."""
    if t is None:
        return None
    # one exact size threshold for every class: the same decision as
    # at_most(Fraction(1, s), t), without a Fraction per class
    need = smallest_size_at_most(t)
    return sum(f for f, s in zip(sample, risk_sizes, strict=True) if s < need)


def _success_sum(sample: tuple[int, ...], population: tuple[int, ...]) -> Fraction:
    """``sum_j f_j / F_j``, exactly. The classes are grouped by their population size first,
    so the sum takes one fraction per distinct size, not one per class (12,458 classes of
    Adult's 8 QIs: 0.1 s of fractions whose denominators grew with every class)."""
    by_size: dict[int, int] = {}
    for f, big_f in zip(sample, population, strict=True):
        by_size[big_f] = by_size.get(big_f, 0) + f
    return sum((Fraction(f, big_f) for big_f, f in by_size.items()), Fraction(0))


# ---------------------------------------------------------------- engines
def prosecutor_risk(class_sizes: Iterable[int], threshold: float | None = None) -> ProsecutorRisk:
    """Prosecutor risk of a sample with equivalence classes of sizes ``class_sizes`` (module
    doc; ARX ``RiskModelSampleSummary.getProsecutorRisk``)."""
    f = _sizes(class_sizes, "class_sizes")
    t = _threshold(threshold)
    n, j = sum(f), len(f)
    k = _at_risk(f, f, t)
    return ProsecutorRisk(
        threshold=t,
        n_records=n,
        n_classes=j,
        records_at_risk=None if k is None else float(Fraction(k, n)),
        n_records_at_risk=k,
        highest_risk=float(Fraction(1, min(f))),
        average_risk=float(Fraction(j, n)),
    )


def journalist_risk(
    class_sizes: Iterable[int],
    population_sizes: Iterable[int] | None = None,
    threshold: float | None = None,
) -> JournalistRisk:
    """Journalist risk; ``population_sizes[j]`` is the size of sample class ``j``'s class in
    the population (omitted: the sample is its own population, as in ARX without a population
    table). ARX ``RiskModelSampleSummary.getJournalistRisk``."""
    f = _sizes(class_sizes, "class_sizes")
    t = _threshold(threshold)
    big_f = _population(f, population_sizes)
    n, j, pop_n = sum(f), len(f), sum(big_f)
    k = _at_risk(f, big_f, t)
    rc1 = Fraction(j, pop_n)
    rc2 = _success_sum(f, big_f) / n
    return JournalistRisk(
        threshold=t,
        n_records=n,
        n_classes=j,
        n_population_records=pop_n,
        records_at_risk=None if k is None else float(Fraction(k, n)),
        n_records_at_risk=k,
        highest_risk=float(Fraction(1, min(big_f))),
        average_risk=float(max(rc1, rc2)),
    )


def marketer_risk(
    class_sizes: Iterable[int], population_sizes: Iterable[int] | None = None
) -> MarketerRisk:
    """Marketer risk, ``(1/n) sum f_j/F_j`` (ARX ``RiskModelSampleSummary.getMarketerRisk``);
    ``population_sizes`` as in :func:`journalist_risk`."""
    f = _sizes(class_sizes, "class_sizes")
    big_f = _population(f, population_sizes)
    n = sum(f)
    rate = _success_sum(f, big_f) / n
    return MarketerRisk(n_records=n, n_classes=len(f), success_rate=float(rate))


def reidentification_risk(
    class_sizes: Iterable[int],
    population_sizes: Iterable[int] | None = None,
    threshold: float | None = None,
) -> ReidentificationRisk:
    """All three models (ARX's ``RiskModelSampleSummary``)."""
    return ReidentificationRisk(
        prosecutor=prosecutor_risk(class_sizes, threshold),
        journalist=journalist_risk(class_sizes, population_sizes, threshold),
        marketer=marketer_risk(class_sizes, population_sizes),
        population_given=population_sizes is not None,
    )
