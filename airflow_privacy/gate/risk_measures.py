"""The risk step's numbers in words: every measure with one plain sentence that says what it
means (El Emam & Dankar 2008 for the prosecutor, journalist and marketer models; Zayatz 1991,
Hoshino 2001, Chen & McNulty 1998 and Dankar et al. 2012 for population uniqueness; Elliot et
al. 2002 and Manning, Haglin & Keane 2008 for SUDA2), and the class-size histogram the report
plots. Records are counted here, never shown."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.thresholds import smallest_size_at_most

if TYPE_CHECKING:
    from airflow_privacy.core.risk import PopulationUniqueness, ReidentificationRisk
    from airflow_privacy.core.risk.suda import SudaResult

#: sdcMicro's DIS-SUDA summary thresholds (``print.suda2``: records with a score above each)
DIS_THRESHOLDS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def prob(x: float) -> str:
    """A probability as people read it: 4 significant digits."""
    return f"{x:.4g}"


def pct(x: float | Fraction) -> str:
    return f"{100 * float(x):.4g}%"


def largest_risky_size(tau: float) -> int:
    """The largest class size ``s`` with ``1/s > tau`` (0 when none): the strict comparison
    of ARX, on the decimal ``tau`` is written as."""
    return smallest_size_at_most(tau) - 1


def measure(key: str, label: str, value: Any, explanation: str) -> dict[str, Any]:
    return {"measure": key, "label": label, "value": value, "explanation": explanation}


def at_risk_sentence(model: str, k: int, n: int, tau: float, population: str) -> str:
    s = largest_risky_size(tau)
    if s == 0:
        return f"No record is at {model} risk: no probability can exceed the threshold {tau:g}."
    if k == 0:
        where = "group of the release" if model == "prosecutor" else "matching population group"
        return (
            f"No record is at {model} risk: no {where} holds {s:,} or fewer "
            f"{'records' if model == 'prosecutor' else 'people'}, the sizes whose "
            f"re-identification probability 1/size is above the threshold {tau:g}."
        )
    share = f"{pct(Fraction(k, n))} of the records ({k:,} of {n:,}) are at {model} risk"
    if model == "prosecutor":
        size = f"at most {s:,} {'record' if s == 1 else 'records'}"
        return (
            f"{share}: they sit in groups of {size}, where an attacker who knows they are in "
            f"the release picks each of them out with probability above the threshold {tau:g}."
        )
    size = f"at most {s:,} {'person' if s == 1 else 'people'}"
    return (
        f"{share}: the population group matching theirs ({population}) holds {size}, so an "
        "attacker who knows only that they are in the population picks each of them out with "
        f"probability above the threshold {tau:g}."
    )


def reidentification_measures(
    r: ReidentificationRisk, sizes: Sequence[int], pop: Sequence[int], source: str, tau: float
) -> list[dict[str, Any]]:
    pr, jr, mr = r.prosecutor, r.journalist, r.marketer
    n, j = pr.n_records, pr.n_classes
    m = min(sizes)
    big_m = min(pop)
    out = [
        measure(
            "prosecutor_highest_risk", "Highest prosecutor risk", pr.highest_risk,
            f"Highest prosecutor risk {prob(pr.highest_risk)}: the smallest group has {m:,} "
            f"record{'s' if m != 1 else ''}, so an attacker who knows a person is in the "
            "release and knows their quasi-identifiers picks the right record with "
            f"probability 1/{m:,}" + (" (certainty)." if m == 1 else "."),
        ),
        measure(
            "prosecutor_records_at_risk", "Prosecutor records at risk", pr.records_at_risk,
            at_risk_sentence("prosecutor", int(pr.n_records_at_risk or 0), n, tau, source),
        ),
        measure(
            "prosecutor_success_rate", "Prosecutor success rate (average risk)",
            pr.average_risk,
            f"Average prosecutor risk {prob(pr.average_risk)} (ARX's success rate): an attacker "
            "who tries every record of the release, knowing each person is in it, is right "
            f"{j:,} times out of {n:,} (once per group) on average.",
        ),
    ]  # fmt: skip
    if source == "the release itself":
        out.append(
            measure(
                "journalist_highest_risk", "Highest journalist risk", jr.highest_risk,
                f"Highest journalist risk {prob(jr.highest_risk)}: no population was given, so "
                "the release is its own population (as in ARX) and the journalist risks equal "
                "the prosecutor risks; give a population table, size or sampling fraction "
                "for the risk of an attacker who does not know who is in the release.",
            )
        )  # fmt: skip
    else:
        est = source.startswith("estimated")
        out.append(
            measure(
                "journalist_highest_risk", "Highest journalist risk", jr.highest_risk,
                f"Highest journalist risk {prob(jr.highest_risk)}: the smallest population "
                f"group matching a group of the release has {'an estimated ' if est else ''}"
                f"{big_m:,} {'person' if big_m == 1 else 'people'} ({source}), so an "
                "attacker who knows only that a person is in the population picks the right "
                f"record with probability 1/{big_m:,}.",
            )
        )  # fmt: skip
    out += [
        measure(
            "journalist_records_at_risk", "Journalist records at risk", jr.records_at_risk,
            at_risk_sentence("journalist", int(jr.n_records_at_risk or 0), n, tau, source),
        ),
        measure(
            "journalist_success_rate", "Journalist success rate (average risk)",
            jr.average_risk,
            f"Average journalist risk {prob(jr.average_risk)} (ARX's success rate, the larger "
            "of groups per population person and the mean of release size / population "
            "size over the records): the share of records an attacker who does not know who "
            "is in the release re-identifies on average.",
        ),
        measure(
            "marketer_success_rate", "Marketer risk", mr.success_rate,
            f"Marketer risk {prob(mr.success_rate)}: an attacker who links every record of the "
            "release to the population at once expects to re-identify "
            f"{mr.success_rate * n:,.1f} of the {n:,} records ({pct(mr.success_rate)}), the "
            "sum over groups of release size / population size.",
        ),
    ]  # fmt: skip
    return out


_MODEL_NAMES = {"zayatz": "Zayatz", "pitman": "Pitman", "snb": "SNB", "none": "none"}


def uniqueness_measures(pu: PopulationUniqueness) -> list[dict[str, Any]]:
    n, pi, big_n = pu.n_records, pu.sampling_fraction, pu.population_size
    out = [
        measure(
            "sample_uniques", "Sample uniques", pu.n_sample_uniques,
            f"{pu.n_sample_uniques:,} of the {n:,} records ({pct(pu.sample_uniqueness)}) are "
            "the only record of their group in the release (unique on all the "
            "quasi-identifiers together).",
        )
    ]  # fmt: skip
    what = {
        "zayatz": "the sample uniques times the estimated chance (hypergeometric draws) that "
        "a record unique in the release is unique in the population, scaled up by the "
        "sampling fraction to the whole population",
        "pitman": "a Pitman partition fitted to the group sizes by maximum likelihood",
        "snb": "population group sizes modelled as 1 + negative binomial (Chen & McNulty)",
    }
    for model in ("zayatz", "pitman", "snb"):
        u = getattr(pu, f"{model}_uniques")
        f = getattr(pu, f"{model}_fraction")
        name = _MODEL_NAMES[model]
        if u is None:
            text = (
                f"{name}'s model gives no estimate for this release (its fit found no valid "
                "solution, or the model does not apply at this sampling fraction)."
            )
        else:
            text = (
                f"{name}'s model estimates {u:,.1f} population-unique people "
                f"({pct(f)} of a population of {big_n:,.0f}), from {what[model]}."
            )
        out.append(measure(f"{model}_uniques", f"Population uniques ({name})", u, text))
    if pu.n_sample_uniques == 0:
        why = "the release has no sample unique, so every model estimates 0"
    elif pi <= 0.1:
        why = f"the sampling fraction {pi:.4g} is at most 0.1, where the rule prefers Pitman"
    else:
        why = (
            f"the sampling fraction {pi:.4g} is above 0.1, where the rule takes the smaller of "
            "Zayatz and SNB"
        )
    chosen = _MODEL_NAMES[pu.dankar_model]
    out.append(
        measure(
            "population_uniqueness", "Population uniqueness (Dankar's choice)",
            pu.dankar_fraction,
            f"Population uniqueness {pct(pu.dankar_fraction)} ({chosen}, chosen by Dankar et "
            f"al.'s rule because {why}): about {pu.dankar_uniques:,.1f} people of the "
            "population are unique on the quasi-identifiers, so anyone who knows their values "
            "finds their record.",
        )
    )  # fmt: skip
    return out


def dis_table(s: SudaResult) -> list[dict[str, Any]]:
    scores = [r.dis_score for r in s.records]
    return [{"above": t, "records": sum(1 for x in scores if x > t)} for t in DIS_THRESHOLDS]


def suda_measures(s: SudaResult, qis: Sequence[str]) -> list[dict[str, Any]]:
    n = s.n_records
    k = len(s.records)
    out = [
        measure(
            "suda_records_with_msu", "Records with a special unique", k,
            f"{k:,} of the {n:,} records ({pct(Fraction(k, n))}) have a special unique: a "
            f"combination of at most {s.k_max} quasi-identifier value"
            f"{'s' if s.k_max != 1 else ''} that no other record shares, none of whose parts "
            "is unique on its own (SUDA2's minimal sample uniques).",
        )
    ]  # fmt: skip
    if k:
        top = max(r.score_value() for r in s.records)
        out.append(
            measure(
                "suda_max_score", "Highest SUDA score", top,
                f"Highest SUDA score {top:g}: a record's score adds (number of QIs - size)! for "
                "each of its special uniques, so small special uniques (few values single a "
                "person out) weigh most.",
            )
        )  # fmt: skip
    above = sum(1 for r in s.records if r.dis_score > 0.1)
    out.append(
        measure(
            "dis", "DIS probability", s.dis,
            f"DIS {prob(s.dis)}: the estimated probability that a record unique in the release "
            f"is unique in the population too (sampling fraction {s.dis_fraction:g}; "
            f"{s.sample_uniques:,} uniques, {s.pair_records:,} records in pairs).",
        )
    )  # fmt: skip
    out.append(
        measure(
            "dis_suda_above_0_1", "Records with DIS-SUDA above 0.1", above,
            f"{above:,} record{'s' if above != 1 else ''} have a DIS-SUDA score above 0.1: "
            "DIS-SUDA turns the SUDA scores into estimated probabilities of re-identification, "
            "so these are the records most worth protecting.",
        )
    )  # fmt: skip
    contrib = s.attribute_contributions
    ranked = sorted(qis, key=lambda a: (-contrib.get(a, 0.0), list(qis).index(a)))
    if k and ranked:
        lead = ranked[0]
        out.append(
            measure(
                "suda_driving_attribute", "Attribute driving the risk", lead,
                f"{lead} drives the risk most: special uniques containing it carry "
                f"{contrib[lead]:.1f}% of the total SUDA score (the shares add up to more than "
                "100% because one special unique can hold several attributes); generalizing or "
                "suppressing it removes the most risk.",
            )
        )  # fmt: skip
    for a in ranked:
        out.append(
            measure(
                f"suda_contribution:{a}", f"SUDA contribution of {a}", contrib.get(a, 0.0),
                f"{contrib.get(a, 0.0):.1f}% of the total SUDA score comes from special uniques "
                f"that contain {a}.",
            )
        )  # fmt: skip
    return out


def histogram(
    sizes: Sequence[int], pop_sizes: Sequence[int] | None, tau: float
) -> list[dict[str, Any]]:
    """Groups by size: how many, their records, each one's prosecutor risk ``1/size`` and
    whether it is above ``tau`` (ARX's strict comparison), for the report's plot."""

    safe_size = smallest_size_at_most(tau)  # risk 1/size above tau below this size
    by: dict[int, list[int]] = {}
    for i, f in enumerate(sizes):
        by.setdefault(f, []).append(i)
    out = []
    for f in sorted(by):
        idx = by[f]
        journalist_at_risk = (
            sum(f for i in idx if pop_sizes[i] < safe_size) if pop_sizes is not None else None
        )
        out.append(
            {
                "size": f,
                "groups": len(idx),
                "records": f * len(idx),
                "prosecutor_risk": float(Fraction(1, f)),
                "at_risk": f < safe_size,
                "journalist_records_at_risk": journalist_at_risk,
            }
        )
    return out
