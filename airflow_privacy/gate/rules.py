"""The gate's blocking rules: why an attempt may not be published, from what its attempt
recorded and the checks recorded under it (pure functions of the ledger's facts; the ledger
evaluates them inside the transaction that decides, :meth:`ReleaseLedger.decide`).

A check counts for an attempt only when it is a check *of what the attempt recorded*:

* its verdict is a real one and agrees with its own result rows (a report whose top-level
  verdict is false or none while its rows say true is not a pass);
* it looked at the attempt's columns: its sensitive column is the attempt's, and it grouped
  the records by the attempt's QIs (for a bucketized release also: by the bucket alone, or
  by the QIs and the bucket); MaxEnt's ``qis`` are the attempt's QIs. A k-anonymity check of
  ``zip`` alone says nothing about a release of (age, zip, sex);
* a composition audit read the ledger, with the attempt's own dataset in its scope (the
  releases it read are compared with the ledger's again, under its lock, by the ledger:
  ``_stale_reasons``);
* the attempt was opened on recorded bytes (an attempt without a content digest was opened
  before ledger revision 0004: its checks may have read another file).

Every function returns reasons in words (empty: nothing against it). :func:`check_problem`
also refuses such a check when it is recorded (``gate.attempts.record``), naming both.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from airflow_privacy.vocabulary import DP_KIND

if TYPE_CHECKING:
    from airflow_privacy.gate.policy import Policy
    from airflow_privacy.ledger import AttemptInfo, PolicyInfo, ReleaseInfo

#: the steps whose envelopes name the columns they measured (and so must be the attempt's)
MEASURING = ("check", "maxent", "audit", "risk")


def _names(cols: Sequence[str]) -> str:
    return "(" + ", ".join(cols) + ")"


def verdict_problem(envelope: Mapping[str, Any]) -> str | None:
    """Why an envelope's verdict disagrees with its own result rows (None: it agrees).

    ``safe`` True needs every row's verdict True; ``safe`` False needs a row that did not
    pass when rows give verdicts; ``safe`` None (no verdict) with every row True is not a
    pass either way and is refused: a reader could take the rows for the verdict."""
    safe = envelope.get("safe")
    rows = [r for r in envelope.get("results") or [] if isinstance(r, Mapping) and "safe" in r]
    if not rows:
        return None
    verdicts = [r.get("safe") for r in rows]
    if safe is True and any(v is not True for v in verdicts):
        bad = [str(r.get("criterion", "?")) for r in rows if r.get("safe") is not True]
        return f"its verdict is 'passed' but its result(s) {', '.join(bad)} did not pass"
    if safe is False and all(v is True for v in verdicts):
        return "its verdict is 'failed' but every result row says passed"
    if safe is None and all(v is True for v in verdicts):
        return "it gives no verdict but every result row says passed"
    return None


def expected_groupings(release: ReleaseInfo) -> list[frozenset[str]]:
    """The column sets a check of ``release`` may group its records by."""
    qis = frozenset(release.qis)
    spec = release.spec if isinstance(release.spec, Mapping) else {}
    bucket = spec.get("bucket")
    if release.kind == "bucketized" and isinstance(bucket, str) and bucket:
        return [frozenset({bucket}), qis, qis | {bucket}]
    return [qis]


def columns_problem(release: ReleaseInfo, envelope: Mapping[str, Any]) -> str | None:
    """Why a check's envelope looked at other columns than the attempt's (None: the same)."""
    if envelope.get("step") not in MEASURING:
        return None
    facts = envelope.get("release") if isinstance(envelope.get("release"), Mapping) else {}
    assert isinstance(facts, Mapping)
    sensitive = facts.get("sensitive")
    if sensitive is not None and release.sensitive and str(sensitive) != release.sensitive:
        return (
            f"it measured sensitive column {str(sensitive)!r}, but the attempt recorded "
            f"{release.sensitive!r}"
        )
    groups = [str(c) for c in facts.get("group_columns") or []]
    allowed = expected_groupings(release)
    if groups and frozenset(groups) not in allowed:
        want = " or ".join(_names(sorted(a)) for a in allowed)
        return (
            f"it grouped the records by {_names(groups)}, but the attempt recorded QIs "
            f"{_names(release.qis)}: a check of other columns says nothing about this release "
            f"(group by {want})"
        )
    details = envelope.get("details") if isinstance(envelope.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    qis = details.get("qis")
    used = [str(q) for q in qis] if isinstance(qis, list) else []
    if envelope.get("step") == "maxent" and used and frozenset(used) != frozenset(release.qis):
        return (
            f"it estimated with QIs {_names(used)}, but the attempt recorded {_names(release.qis)}"
        )
    return None


def scope_problem(release: ReleaseInfo, envelope: Mapping[str, Any]) -> str | None:
    """Why a composition audit's scope leaves out the attempt's own dataset (None: it does
    not). The ledger compares the releases it read with every published release of the
    dataset when the gate decides."""
    if envelope.get("step") != "audit" or envelope.get("outcome") == "already-published":
        return None
    details = envelope.get("details") if isinstance(envelope.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    scope = details.get("ledger_scope")
    if not isinstance(scope, Mapping):
        return (
            "it did not read the ledger, so the earlier releases of "
            f"{release.dataset!r} were not audited against"
        )
    datasets = scope.get("datasets")
    if isinstance(datasets, list) and release.dataset not in [str(d) for d in datasets]:
        return (
            f"its scope is dataset(s) {', '.join(map(str, datasets))}, which leaves out the "
            f"attempt's own dataset {release.dataset!r}: an audit scoped away from its dataset "
            "is not an audit of this release"
        )
    return None


def check_problem(release: ReleaseInfo, envelope: Mapping[str, Any]) -> str | None:
    """Why a check's envelope does not count for an attempt of ``release`` (None: it does)."""
    return (
        verdict_problem(envelope)
        or columns_problem(release, envelope)
        or scope_problem(release, envelope)
    )


def mapped_instances(name: str, names: Iterable[str]) -> list[str]:
    """The recorded instances ``name[i]`` of a mapped check ``name``."""
    return sorted(
        n for n in names
        if n.startswith(f"{name}[") and n.endswith("]") and n[len(name) + 1 : -1].isdigit()
    )  # fmt: skip


def reasons(
    info: AttemptInfo, failed_tasks: Mapping[str, str], policy: PolicyInfo | None = None
) -> list[str]:
    """Every reason the attempt may not be published (empty: it may), from its own record
    and its dataset's ``policy`` in force (:func:`policy_reasons`)."""
    out = [
        f"task {task} ended {state}: the release depends on it"
        for task, state in sorted(failed_tasks.items())
    ]
    by_name = {c.name: c for c in info.checks}
    required = list(info.required)
    for name in required:
        # a mapped check records one verdict per instance, name[0], name[1], ...: each is
        # judged below, and the gate's task states say whether every instance ran
        if name not in by_name and not mapped_instances(name, by_name):
            out.append(f"{name}: no result was recorded (its task failed or did not run)")
    for name in [*required, *sorted(n for n in by_name if n not in required)]:
        c = by_name.get(name)
        if c is None:
            continue
        env = c.envelope if isinstance(c.envelope, dict) else {}
        problem = check_problem(info.release, env)
        if problem is not None:
            out.append(f"{name}: does not count for this attempt: {problem}")
            continue
        if c.safe is True:
            continue
        why = [str(r) for r in env.get("reasons") or []]
        if c.safe is None:
            why = why or [str(env.get("summary") or "no verdict (an estimate without a threshold)")]
            out.append(f"{name}: gave no verdict: {'; '.join(why)}")
        else:
            out.append(f"{name}: {'; '.join(why) or str(env.get('summary') or 'failed')}")
    if not info.checks:
        out.append("no check was recorded for this attempt: nothing says it is safe")
    if not required:
        out.append(
            "this attempt names no required checks (it was recorded before attempts existed): "
            "open a new attempt that names them"
        )
    if policy is not None:
        out += policy_reasons(info, policy)
    if info.content_digest is None:
        out.append(
            "the attempt recorded no content digest (it was opened before ledger revision "
            "0004), so its checks may have read another file: open a new attempt"
        )
    return out


def _benign_ok(row: Mapping[str, Any], policy: Policy) -> bool:
    params = row.get("parameters") if isinstance(row.get("parameters"), Mapping) else {}
    assert isinstance(params, Mapping)
    return set(map(str, params.get("benign") or [])) <= set(policy.benign)


def dp_reasons(info: AttemptInfo, held: PolicyInfo, policy: Policy) -> list[str]:
    """Why a differentially private release may not be published under ``policy`` (empty:
    it may). Its privacy is its spend, recorded with it under the dataset's budget when its
    noise was drawn: it needs a passed ``dp-release`` check (the record of that spend) and
    a policy that still allows DP releases. The lines about partitions (criteria, the
    composition audit, MaxEnt, identity) say nothing about noisy counts and do not apply."""
    head = f"policy v{held.version} of {held.dataset!r}"
    out: list[str] = []
    if not policy.dp:
        out.append(f"{head} allows no differentially private release (it sets no DP budget)")
    if not [c for c in info.checks if c.step == "dp-release" and c.safe is True]:
        out.append(f"{head}: a DP release needs its dp-release record (its spend of the budget)")
    return out


def policy_reasons(info: AttemptInfo, held: PolicyInfo) -> list[str]:
    """Why the attempt's checks do not meet its dataset's policy (empty: they do), one
    reason per line missed, naming the strongest check recorded for it."""
    # the policy's module is read only when a dataset has a policy (a check's start-up skips it)
    from airflow_privacy.gate.policy import (
        Policy,
        as_number,
        composition_meets,
        composition_text,
        criterion_text,
        meets,
    )

    policy = Policy.from_dict(held.policy)
    if info.release.kind == DP_KIND:
        return dp_reasons(info, held, policy)
    rows: list[tuple[str, Mapping[str, Any]]] = []
    failed: set[str] = set()  # criteria a recorded check measured and did not pass
    for c in info.checks:
        env = c.envelope if isinstance(c.envelope, dict) else {}
        results = [r for r in env.get("results") or [] if isinstance(r, Mapping)]
        failed |= {str(r.get("criterion")) for r in results if r.get("safe") is not True}
        if c.safe is not True or check_problem(info.release, env) is not None:
            continue
        rows += [(c.name, r) for r in results]
    head = f"policy v{held.version} of {held.dataset!r}"
    out: list[str] = []

    for step in policy.required_steps:
        kinds = [c for c in info.checks if c.step == step]
        good = [
            c for c in kinds
            if c.safe is True and check_problem(
                info.release, c.envelope if isinstance(c.envelope, dict) else {}
            ) is None
        ]  # fmt: skip
        if not good:
            got = (
                f"its {step} check(s) ({', '.join(repr(c.name) for c in kinds)}) did not pass"
                if kinds
                else f"no {step} check was recorded under this attempt"
            )
            out.append(f"{head} requires a passed {step} check: {got}")

    def passed(name: str) -> list[tuple[str, Mapping[str, Any]]]:
        return [(n, r) for n, r in rows if r.get("criterion") == name and r.get("safe") is True]

    for name, params in policy.criteria:
        candidates = passed(name)
        why = [meets(name, _params(r), params) for _, r in candidates]
        if any(
            w is None and _benign_ok(r, policy) for w, (_, r) in zip(why, candidates, strict=True)
        ):
            continue
        line = criterion_text(name, params)
        if not candidates:
            out.append(f"{head} requires {line}: " + _none_passed(name, failed))
        else:
            n, r = candidates[0]
            detail = why[0] or "it declared benign values the policy does not list"
            out.append(
                f"{head} requires {line}; check {n!r} measured "
                f"{criterion_text(name, _params(r))}: {detail}"
            )
    if policy.composition:
        found = passed("composition")
        if not any(composition_meets(_params(r), policy.composition) is None for _, r in found):
            weaker = composition_meets(_params(found[0][1]), policy.composition) if found else None
            missing = weaker or _none_passed("composition", failed)
            out.append(f"{head} requires {composition_text(policy.composition)}: {missing}")
    if policy.maxent_c is not None:
        limit = policy.maxent_c
        found = passed("maxent")
        ok = [r for _, r in found if (as_number(_params(r).get("c")) or math.inf) <= limit]
        if not any(_benign_ok(r, policy) for r in ok):
            got = ", ".join(str(_params(r).get("c")) for _, r in found) or "no passed MaxEnt check"
            out.append(f"{head} requires maxent c <= {limit:g}: measured {got}")
    if policy.max_prosecutor_risk is not None:
        spec = info.release.spec if isinstance(info.release.spec, Mapping) else {}
        identity = spec.get("identity") if isinstance(spec.get("identity"), Mapping) else None
        cap = policy.max_prosecutor_risk
        if identity is None:
            out.append(
                f"{head} limits the highest prosecutor risk to {cap:g}, but this release's "
                "identity risk was not measured (content recorded before it was): open a new "
                "attempt"
            )
        elif float(identity.get("highest") or 0.0) > cap:
            out.append(
                f"{head} limits the highest prosecutor risk to {cap:g}; this release's is "
                f"{float(identity['highest']):.3g} ({int(identity.get('sample_uniques') or 0):,} "
                f"sample uniques, {int(identity.get('records_at_risk') or 0):,} records at "
                "risk): generalize or suppress the QIs further"
            )
    return out


def _none_passed(criterion: str, failed: set[str]) -> str:
    if criterion in failed:
        return "the check of this attempt that measured it did not pass (its reason is given)"
    return "no check of this attempt measured it"


def _params(row: Mapping[str, Any]) -> Mapping[str, Any]:
    p = row.get("parameters")
    return p if isinstance(p, Mapping) else {}
