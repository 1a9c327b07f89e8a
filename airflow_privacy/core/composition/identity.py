"""Identity risk of a release on its quasi-identifiers, from its recorded groups: how many
records share each combination of QI values the release shows (its equivalence classes),
and the prosecutor measures of El Emam & Dankar (2008) on them.

For a bucketized (Anatomy) release the QIs are published exactly: the classes are the exact
QI tuples (a bucket's members), which is why a release can pass k-anonymity counted on
buckets and still single people out. For a generalized or microaggregated release a class
is a group. Aggregates only: no record and no QI value leaves this function.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from airflow_privacy.core.composition.release import PublishedRelease

#: ARX's default: a record is at risk when its re-identification probability exceeds it
THRESHOLD = 0.2


@dataclass(frozen=True)
class IdentityRisk:
    """The prosecutor risk of a release's records on its QIs (module doc)."""

    qis: list[str]
    records: int
    classes: int
    highest: float  # 1 / the smallest class
    average: float  # classes / records (ARX's success rate)
    records_at_risk: int  # records in classes with 1/size above ``threshold``
    sample_uniques: int  # records alone in their class
    threshold: float = THRESHOLD

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def class_sizes(release: PublishedRelease) -> Counter[tuple[str, ...]]:
    """Records per combination of QI values the release shows (read from its groups as
    they are held, without building their plain-dict form)."""
    sizes: Counter[tuple[str, ...]] = Counter()
    for g, key in enumerate(release.keys):
        if release.members is not None:
            for qis, count in release.members[g]:
                sizes[tuple(str(v) for v in qis)] += int(count)
        else:
            sizes[tuple(str(v) for v in key)] += int(release.sizes[g])
    return sizes


def identity_risk(release: PublishedRelease, threshold: float = THRESHOLD) -> IdentityRisk:
    """The prosecutor measures of ``release`` on its QIs (module doc)."""
    sizes = class_sizes(release)
    n = sum(sizes.values())
    smallest = min(sizes.values()) if sizes else 0
    return IdentityRisk(
        qis=list(release.qis),
        records=n,
        classes=len(sizes),
        highest=1.0 / smallest if smallest else 0.0,
        average=len(sizes) / n if n else 0.0,
        records_at_risk=sum(s for s in sizes.values() if 1.0 / s > threshold),
        sample_uniques=sum(1 for s in sizes.values() if s == 1),
        threshold=threshold,
    )
