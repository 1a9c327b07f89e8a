"""The release lifecycle as services: open an attempt, record a check, the publish gate,
block and supersede by hand.

The invariants (docs/design.md) live here and in the ledger, not in a DAG:

* a release is published only by :func:`publish`, and only when the ledger says every check
  of *this* attempt passed, every required check is recorded, no task the gate depends on
  failed, and the file to publish is still the content that was checked;
* the content counts as published for every later audit from the moment the gate allows it
  (before the files are copied), so a crash while copying errs on the safe side; the attempt
  says ``published`` only once the files are in place;
* content published before is never checked or published again: every step says "already
  published as release #N";
* a decided attempt takes no more checks; a later attempt of the same content is judged
  afresh; a steward may supersede a blocked attempt with a reason (who, when, why).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from airflow_privacy.core.io import MANIFEST_SUFFIX
from airflow_privacy.errors import (
    IllegalTransition,
    InputError,
    ReleaseBlocked,
    opt,
)
from airflow_privacy.gate.context import GateContext
from airflow_privacy.gate.envelope import Envelope, ReleaseFacts, attempt_ref
from airflow_privacy.gate.refs import ReleaseRef
from airflow_privacy.gate.rules import reasons as blocking_reasons

if TYPE_CHECKING:
    from airflow_privacy.core.composition.files import ReleaseFile
    from airflow_privacy.ledger import AttemptInfo, ReleaseLedger


def has_manifest(ref: ReleaseRef, ctx: GateContext) -> bool:
    """Whether a manifest lies beside the release file ``ref`` (local or object store)."""
    from airflow_privacy.core.io import is_regular_file

    if ref.is_table:
        return False
    m = ref.sibling(MANIFEST_SUFFIX)
    if m.is_uri:
        return ctx.connections.exists(str(m.path), m.conn)
    return is_regular_file(m.local)  # False for a name too long, where is_file() raises


# ----------------------------------------------------------------------------- reading
def read_candidate(
    ref: ReleaseRef,
    ctx: GateContext,
    *,
    qis: Sequence[str] | None = None,
    sensitive: str | None = None,
    kind: str | None = None,
    bucket: str | None = None,
    manifest: ReleaseRef | None = None,
    fmt: Any = None,
    delimiter: str | None = None,
) -> ReleaseFile:
    """A release file as the ledger records it (its groups), with its manifest."""
    from airflow_privacy.core.composition.files import read_release_file
    from airflow_privacy.gate.tables import local_copy

    if ref.is_table:
        return _table_candidate(ref, ctx, qis, sensitive, kind, bucket, manifest)
    with contextlib.ExitStack() as stack:
        path = stack.enter_context(local_copy(ref, ctx))
        m: Path | None = None
        if manifest is not None:
            m = stack.enter_context(local_copy(manifest, ctx))
        elif ref.is_uri and has_manifest(ref, ctx):
            m = stack.enter_context(local_copy(ref.sibling(MANIFEST_SUFFIX), ctx))
        # a local file's manifest beside it is found by read_release_file itself
        return read_release_file(
            path, qis=qis, sensitive=sensitive, kind=kind, bucket=bucket, manifest=m,
            name=ref.name, fmt=fmt, delimiter=delimiter, progress=ctx.progress,
        )  # fmt: skip


def _table_candidate(
    ref: ReleaseRef,
    ctx: GateContext,
    qis: Sequence[str] | None,
    sensitive: str | None,
    kind: str | None,
    bucket: str | None,
    manifest: ReleaseRef | None,
) -> ReleaseFile:
    """A release table as the ledger records it: its groups counted in its database (only
    the counts travel), the columns from the arguments or the manifest file."""
    from airflow_privacy.core.composition.files import ReleaseFile, read_json, resolve_columns
    from airflow_privacy.core.composition.release import PublishedRelease
    from airflow_privacy.gate.tables import local_copy, sql_group_counts

    mdata: Any = None
    if manifest is not None:
        with local_copy(manifest, ctx) as m:
            mdata = read_json(m, "manifest")
        if not isinstance(mdata, dict):
            raise InputError(f"manifest {manifest.describe()!r} is not a JSON object")
    q, s, k, _ = resolve_columns(mdata, qis, sensitive, kind, bucket, ref.describe())
    if k != "generalized":
        raise InputError(
            f"{ref.describe()}: a release table is recorded as generalized groups; a "
            f"{k} release is recorded from a file"
        )
    groups: dict[tuple[str, ...], dict[str, int]] = {}
    for row in sql_group_counts(ref, [*q, s], ctx):
        *labels, value, n = row
        if value is None or any(v is None for v in labels):
            raise InputError(
                f"{ref.describe()}: column {s if value is None else 'of a group'!r} has missing "
                "values; a release table must be complete"
            )
        key = tuple(str(v) for v in labels)
        cell = groups.setdefault(key, {})
        cell[str(value)] = cell.get(str(value), 0) + int(n)
    if not groups:
        raise InputError(f"{ref.describe()} is empty (0 records)")
    release = PublishedRelease.from_groups(q, s, list(groups.items()), k)
    return ReleaseFile(release, mdata, None)


def member_hashes(
    population: ReleaseRef | None,
    id_column: str | None,
    key_env: str,
    ctx: GateContext,
) -> list[str] | None:
    """The keyed hashes of the candidate's people (never the identifiers), when asked; the
    key is the ledger's (held by the environment variable ``key_env``)."""
    if bool(population) != bool(id_column):
        raise InputError(f"{opt('population')} and {opt('id_column')} go together")
    if population is None or id_column is None:
        return None
    from airflow_privacy.core.composition.files import read_population_file
    from airflow_privacy.core.composition.identifiers import key_from_env
    from airflow_privacy.gate.tables import local_copy

    key = key_from_env(key_env)
    if population.is_table:
        from airflow_privacy.gate.members import table_population

        pop = table_population(population, (), id_column, key, ctx)
        return list(pop.id_hashes or ())
    with local_copy(population, ctx) as path:
        pop = read_population_file(path, (), id_column=id_column, hash_key=key)
    ctx.progress(f"hashed {len(set(pop.id_hashes or ())):,} identifiers of {population.describe()}")
    return list(pop.id_hashes or ())


def _name(value: object, what: str) -> str:
    """A dataset, version or check name as the ledger stores it: text, not blank, at most
    255 characters, no NUL (checked before the ledger is opened or created)."""
    if not isinstance(value, str):
        raise InputError(f"{what} must be text, got {type(value).__name__}")
    if not value.strip():
        raise InputError(f"{what} is empty")
    if len(value) > 255:
        raise InputError(f"{what} is longer than 255 characters")
    if "\x00" in value:
        raise InputError(f"{what} contains a NUL character")
    return value


def content_digest(ref: ReleaseRef, ctx: GateContext) -> str | None:
    """``sha256:HEX`` of a release file's bytes (None for a table): what ties an attempt, its
    checks and the gate to one content."""
    import hashlib

    if ref.is_table:
        from airflow_privacy.gate.sql_releases import table_digest

        return table_digest(ref, ctx)
    if ref.is_uri:
        return (
            "sha256:"
            + hashlib.sha256(ctx.connections.read_bytes(str(ref.path), ref.conn)).hexdigest()
        )
    from airflow_privacy.core.io import is_regular_file

    if not is_regular_file(ref.local):
        raise InputError(f"{ref.describe()} is not a regular file")
    with open(ref.local, "rb") as fh:
        return "sha256:" + hashlib.file_digest(fh, "sha256").hexdigest()


@dataclass(frozen=True)
class CheckStart:
    """An attempt as a check found it before doing any work, and the digest of what the
    check reads (both None without an attempt)."""

    info: AttemptInfo | None
    digest: str | None = None
    reads_release: bool = True

    @property
    def skip(self) -> bool:
        return self.info is not None and self.info.status == "already-published"


def same_run(info: AttemptInfo, ctx: GateContext) -> None:
    """A run's steps work only on the attempt that run opened: in Airflow (the context names
    a DAG run) an attempt opened by another run, or from the command line, is refused, so a
    pasted attempt UUID or an edited XCom cannot make a run decide someone else's attempt.
    The command line names its attempt itself (no run to compare)."""
    run = (ctx.origin.get("dag_id"), ctx.origin.get("run_id"))
    if ctx.origin.get("front_end") != "airflow" or run[1] is None:
        return
    theirs = (info.origin.get("dag_id"), info.origin.get("run_id"))
    if theirs == run:
        return
    by = (
        f"run {theirs[1]!r} of DAG {theirs[0]!r}"
        if info.origin.get("front_end") == "airflow"
        else f"the {info.origin.get('front_end') or 'unknown'} front end"
    )
    raise InputError(
        f"attempt {info.uuid} ({info.release.name}) was opened by {by}, not by this run "
        f"({run[1]!r} of DAG {run[0]!r}): a run decides only the attempt it opened; take the "
        "attempt from this run's open-attempt task (attempt_task_id), never a pasted UUID"
    )


def begin_check(
    attempt: str | None,
    ledger: str | None,
    ctx: GateContext,
    reads: ReleaseRef | None = None,
) -> CheckStart:
    """Before a check does any work: its attempt must be open (a decided one takes no more
    checks), and the release it reads (``reads``) must be the file the attempt was opened on.
    An ``already-published`` attempt is returned as it is: the caller skips the work
    (:func:`skipped`). ``reads=None``: a custom check of something else."""
    if attempt is None:
        return CheckStart(None, reads_release=reads is not None)
    with ctx.open_ledger(ledger) as db:
        info = db.attempt(attempt)
    same_run(info, ctx)
    if info.status not in ("open", "already-published"):
        raise IllegalTransition(
            f"attempt {info.uuid} was already decided ({info.status} at {info.decided_at}): a "
            "decided attempt takes no more checks; open a new attempt"
        )
    digest = None
    if reads is not None and info.status == "open" and info.content_digest is not None:
        digest = content_digest(reads, ctx)
        if digest != info.content_digest:
            raise InputError(
                f"{reads.describe()} is not the file attempt {info.uuid} was opened on "
                f"({info.release.name}): a check of another file is not a check of this "
                f"attempt; give the check the attempt's release"
            )
    return CheckStart(info, digest, reads_release=reads is not None)


def skipped(step: str, name: str, info: AttemptInfo | None) -> Envelope:
    """The envelope of a check that did not run because its content is already published."""
    assert info is not None
    why = info.reasons[0] if info.reasons else "already published"
    return Envelope(
        step=step, name=name, outcome="already-published", safe=None,
        summary=f"not checked again: {why}", attempt=attempt_ref(info),
    )  # fmt: skip


def record(envelope: Envelope, start: CheckStart, ledger: str | None, ctx: GateContext) -> Envelope:
    """Record ``envelope`` as check ``envelope.name`` of the attempt (when there is one),
    with the digest of what it read (the ledger compares it again, in its transaction)."""
    info = start.info
    if info is None:
        return envelope
    from airflow_privacy.gate.rules import check_problem

    problem = check_problem(info.release, envelope.to_dict())
    if problem is not None:
        raise InputError(
            f"check {envelope.name!r} is not recorded under attempt {info.uuid} "
            f"({info.release.name}): {problem}"
        )
    with ctx.open_ledger(ledger) as db:
        after = db.record_check(
            info.uuid,
            name=envelope.name,
            step=envelope.step,
            safe=envelope.safe,
            outcome=envelope.outcome,
            envelope=envelope.to_dict(),
            content_digest=start.digest,
            reads_release=start.reads_release,
        )
    ctx.progress(f"recorded as check {envelope.name!r} of attempt {after.uuid}")
    return replace(envelope, attempt=attempt_ref(after))


# ------------------------------------------------------------------------------- publish
@dataclass(frozen=True)
class PublishRequest:
    """The gate: publish the attempt's release to ``destination`` (a folder or URI prefix)
    when every check passed. ``release``: the file that was checked (copied with its manifest
    and verified against the recorded content); ``failed_tasks``: tasks the release depends
    on that did not succeed (task -> state)."""

    attempt: str
    release: ReleaseRef | None = None
    destination: str | None = None
    failed_tasks: Mapping[str, str] = field(default_factory=dict)
    ledger: str | None = None
    name: str = "publish"
    conn: str | None = None


def publish(req: PublishRequest, ctx: GateContext) -> Envelope:
    """Decide and publish (module doc). Raises :class:`ReleaseBlocked` (with the envelope)
    when the attempt may not be published.

    The file is read once into a private snapshot: the snapshot is what is verified against
    the attempt (its bytes' digest, else its recorded content) and what is copied, so a file
    replaced in between is never published. The destination is checked before the gate
    decides: publishing never replaces a file with other content (an identical file is the
    trace of an interrupted earlier run and is written again)."""
    paired(req.release, req.destination)
    target = _destination(req)
    with contextlib.ExitStack() as stack:
        snap = stack.enter_context(_snapshot(req.release, ctx)) if req.release else None
        with ctx.open_ledger(req.ledger) as db:
            info = db.attempt(req.attempt)
            same_run(info, ctx)
            extra: list[str] = []
            if snap is not None and target is not None:
                assert req.release is not None
                changed = _content_changed(snap, req.release, info, db, ctx)
                if info.status != "open":
                    _decided_matches(info, changed, target)
                elif changed:
                    extra.append(changed)
                if info.status in ("open", "publishing"):
                    _check_target(snap, target, ctx)
            decided = db.decide(
                info.uuid,
                rules=lambda found, policy: blocking_reasons(found, req.failed_tasks, policy),
                reasons=extra,
                destination=target.describe() if target else None,
            )
            if decided.status == "publishing":
                if snap is not None and target is not None:
                    _copy(snap, target, ctx)
                    ctx.progress(f"copied {req.release.describe() if req.release else ''} "
                                 f"to {target.describe()}")  # fmt: skip
                decided = db.finish_publish(decided.uuid)
                files = "copied" if target is not None else "ledger only"
            elif info.status == "published":
                files = _files_in_place(snap, target, info.content_digest, ctx)
            else:
                files = ""
    return _publish_envelope(req, decided, before=info.status, files=files)


def _decided_matches(info: AttemptInfo, changed: str | None, target: ReleaseRef) -> None:
    """A decided attempt re-run (or pasted) with a release: it must be the bytes the attempt
    recorded, going where the attempt recorded (else nothing happens, exit 2)."""
    if changed:
        raise InputError(
            f"{changed}; attempt {info.uuid} is {info.status} (decided {info.decided_at}): "
            "nothing is published"
        )
    if info.status in ("published", "publishing") and info.destination not in (
        None,
        target.describe(),
    ):
        raise InputError(
            f"attempt {info.uuid} was published to {info.destination}, not "
            f"{target.describe()}: {opt('to')} must name the same place (the one the "
            "attempt recorded)"
        )


def _files_in_place(
    snap: ReleaseRef | None, target: ReleaseRef | None, digest: str | None, ctx: GateContext
) -> str:
    """A published attempt re-run: whether its files are still where it published them
    (``verified``), gone (``missing``), or were not looked at (no release given). ``digest``:
    the attempt's, which the snapshot was just verified against (hashed again only for an
    attempt recorded without one)."""
    if snap is None or target is None:
        return "not looked at"
    try:
        there = content_digest(target, ctx)
    except InputError:
        return "missing"
    return "verified" if there == (digest or content_digest(snap, ctx)) else "changed"


def paired(release: object, destination: object) -> None:
    """The release file and its destination go together (or neither: the ledger only), for
    the gate and for an approved override alike."""
    if (release is None) != (destination is None):
        raise InputError(
            f"the release file and {opt('to')} go together (or neither: the ledger only)"
        )


def _destination(req: PublishRequest) -> ReleaseRef | None:
    if req.release is None or req.destination is None:
        return None
    if not isinstance(req.destination, str) or not req.destination.strip("/ "):
        raise InputError(f"{opt('to')} is empty")
    if req.release.is_table:
        from airflow_privacy.gate.sql_releases import destination

        return destination(req.release, req.destination)
    base = req.destination.rstrip("/")
    return ReleaseRef(path=f"{base}/{req.release.name}", conn=req.conn)


@contextlib.contextmanager
def _snapshot(ref: ReleaseRef, ctx: GateContext) -> Iterator[ReleaseRef]:
    """A private local copy of a release file and its manifest (same names, a fresh folder)."""
    import shutil

    from airflow_privacy.core import private_folders
    from airflow_privacy.core.io import is_regular_file
    from airflow_privacy.gate.tables import local_copy

    if ref.is_table:
        from airflow_privacy.gate.sql_releases import snapshot

        with snapshot(ref, ctx) as snap_table:
            yield snap_table
        return
    folder = private_folders.make("publish")
    try:
        snap = ReleaseRef(path=str(folder / ref.name))
        with local_copy(ref, ctx) as path:
            if not is_regular_file(path):
                raise InputError(f"{ref.describe()} is not a regular file")
            size, free = os.stat(path).st_size, shutil.disk_usage(folder).free
            if size > free:  # a sparse terabyte would fill the disk before failing
                raise InputError(
                    f"{ref.describe()} ({size:,} bytes) does not fit in the temporary folder "
                    f"({free:,} bytes free), where the gate copies a release to publish it"
                )
            shutil.copyfile(path, snap.local)
        if has_manifest(ref, ctx):
            with local_copy(ref.sibling(MANIFEST_SUFFIX), ctx) as path:
                shutil.copyfile(path, snap.sibling(MANIFEST_SUFFIX).local)
        yield snap
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _check_target(snap: ReleaseRef, target: ReleaseRef, ctx: GateContext) -> None:
    """The destination may receive the release: no other file is there, and (local) its
    folder can be made."""
    if target.is_table:
        from airflow_privacy.gate.sql_releases import check_target

        check_target(snap, target, ctx)
        return
    if target.is_uri:
        if not ctx.connections.exists(str(target.path), target.conn):
            return
    else:
        path = target.local
        try:
            for parent in path.parents:
                if parent.exists():
                    if not parent.is_dir():
                        raise InputError(f"{opt('to')}: {str(parent)!r} is a file, not a folder")
                    break
            if not path.exists() and not path.is_symlink():
                return
        except OSError as exc:  # a name too long, a loop of links: before any decision
            raise InputError(
                f"{opt('to')}: cannot use {_short(str(path))!r}: "
                f"{exc.strerror or type(exc).__name__}"
            ) from None
        if not path.is_file():
            raise InputError(f"{opt('to')}: {str(path)!r} exists and is not a file")
    if content_digest(target, ctx) != content_digest(snap, ctx):
        raise InputError(
            f"{target.describe()} already exists with other content: publishing never "
            f"replaces a published file; give another {opt('to')} (e.g. one per version)"
        )


def _short(text: str, keep: int = 120) -> str:
    """A long name cut for a one-line message (its end kept: the file name)."""
    return text if len(text) <= keep else "..." + text[-keep:]


def _copy(src: ReleaseRef, dst: ReleaseRef, ctx: GateContext) -> None:
    from airflow_privacy.errors import PrivacyGateError, StorageUnavailable
    from airflow_privacy.gate.tables import copy_files

    if src.is_table:
        from airflow_privacy.gate.sql_releases import copy

        copy(src, dst, ctx)
        return
    pairs = [(src, dst)]
    if has_manifest(src, ctx):
        pairs.append((src.sibling(MANIFEST_SUFFIX), dst.sibling(MANIFEST_SUFFIX)))
    try:
        copy_files(pairs, ctx)
    except (OSError, PrivacyGateError) as exc:
        raise StorageUnavailable(
            f"copying the release to {dst.describe()} failed ({exc}); the gate allowed it and "
            "the ledger counts it as published: run the publish step again to put the files "
            "in place"
        ) from None


def _content_changed(
    snap: ReleaseRef, ref: ReleaseRef, info: AttemptInfo, db: ReleaseLedger, ctx: GateContext
) -> str | None:
    """Why the file to publish (read into ``snap``) is not the content the checks saw (None
    when it is)."""
    if info.content_digest is not None:
        if content_digest(snap, ctx) == info.content_digest:
            return None
        return (
            f"{ref.describe()} is not the file attempt {info.uuid} was opened on (its bytes "
            "changed after the attempt was opened, or it is another file)"
        )
    spec = info.release.spec or {}
    try:
        cand = read_candidate(
            snap, ctx, qis=spec.get("qis"), sensitive=spec.get("sensitive"),
            kind=spec.get("kind"), bucket=spec.get("bucket"),
        )  # fmt: skip
    except InputError as exc:
        return f"the release file cannot be read: {exc}"
    if cand.release.content_hash() != info.release.content_hash:
        return (
            f"{ref.describe()} is not the content this attempt checked (it changed after the "
            "attempt was opened)"
        )
    return None


def _publish_envelope(
    req: PublishRequest, info: AttemptInfo, *, before: str = "open", files: str = ""
) -> Envelope:
    rel = info.release
    ref = attempt_ref(info)
    facts = ReleaseFacts(
        ref=req.release.describe() if req.release else rel.name, records=rel.records,
        groups=rel.groups, sensitive=rel.sensitive, kind=rel.kind,
        group_columns=[str(q) for q in rel.qis or []] if isinstance(rel.qis, list) else [],
    )  # fmt: skip
    checks = [
        {"name": c.name, "step": c.step, "safe": c.safe, "outcome": c.outcome} for c in info.checks
    ]
    details = {"checks": checks, "required": info.required, "destination": info.destination,
               "policy_version": info.policy_version, **_passed(info)}  # fmt: skip
    if info.status == "already-published":
        return Envelope(
            step="publish", name=req.name, outcome="already-published", safe=None,
            summary=info.reasons[0] if info.reasons else f"already published as {rel.name}",
            release=facts, attempt=ref, details=details,
        )  # fmt: skip
    details["files"] = files or None
    if info.status == "published":
        where = f" to {info.destination}" if info.destination else ""
        outputs = {"published": info.destination} if info.destination else {}
        summary = (
            f"published {rel.name} (release #{rel.id}){where}: all {len(checks)} "
            f"check(s) of attempt {info.uuid} passed"
        )
        if before == "published":
            state = {
                "verified": "its files are in place (verified)",
                "missing": "its files are NOT there any more (moved or deleted since)",
                "changed": "the file there now has OTHER content (replaced since)",
            }.get(files, "its files were not looked at (no release was given)")
            summary = (
                f"already decided: attempt {info.uuid} published {rel.name} (release "
                f"#{rel.id}){where} at {info.decided_at}; nothing was done again; {state}"
            )
        return Envelope(
            step="publish", name=req.name, outcome="published", safe=True,
            summary=summary, release=facts, attempt=ref, details=details, outputs=outputs,
        )  # fmt: skip
    reasons = list(info.reasons) or [f"attempt is {info.status}"]
    summary = f"{rel.name} was NOT published: {len(reasons)} reason(s)"
    if before != "open":
        summary = (
            f"{rel.name} was NOT published: attempt {info.uuid} was already decided "
            f"({info.status} at {info.decided_at}) for the reason(s) below; a decided attempt "
            "is never decided again: open a new attempt (in Airflow: clear this run's "
            "open-attempt task and everything after it, so that it opens a new one)"
        )
    env = Envelope(
        step="publish", name=req.name, outcome="blocked", safe=False,
        summary=summary, reasons=reasons, release=facts, attempt=ref, details=details,
        advice=way_forward(info),
    )  # fmt: skip
    lead = summary if before != "open" else f"{rel.name} was not published"
    raise ReleaseBlocked(f"{lead}: " + "; ".join(reasons), env)


def _passed(info: AttemptInfo) -> dict[str, Any]:
    """What the attempt's passed checks showed, in short: each criterion with its
    parameters (``k-anonymity:k=5``), and a DP release's budget after its spend."""
    from airflow_privacy.gate.policy import criterion_text

    criteria: set[str] = set()
    dp: dict[str, Any] | None = None
    for c in info.checks:
        env = c.envelope if isinstance(c.envelope, dict) else {}
        if c.safe is not True:
            continue
        for r in env.get("results") or []:
            if isinstance(r, dict) and r.get("safe") is True and r.get("criterion"):
                params = r.get("parameters") if isinstance(r.get("parameters"), dict) else {}
                criteria.add(criterion_text(str(r["criterion"]), params or {}))
        if c.step == "dp-release":
            d = env.get("details") or {}
            b = d.get("budget") or {}
            dp = {"unit": d.get("unit"), "cost": d.get("cost"), "spent": b.get("spent"),
                  "cap": b.get("cap"), "left": b.get("left")}  # fmt: skip
    return {"criteria": sorted(criteria), "dp": dp}


def way_forward(info: AttemptInfo) -> list[dict[str, Any]]:
    """The advice of the attempt's checks that did not pass, each tagged with its check's
    name (what the gate, the report and the UI show after a block)."""
    out: list[dict[str, Any]] = []
    for c in info.checks:
        env = c.envelope if isinstance(c.envelope, dict) else {}
        if c.safe is True:
            continue
        out += [{**a, "check": c.name} for a in env.get("advice") or [] if isinstance(a, dict)]
    return out


# --------------------------------------------------------------------------- by hand
def block(
    attempt: str,
    reasons: Sequence[str],
    ctx: GateContext,
    ledger: str | None = None,
    by: str | None = None,
) -> Envelope:
    """A steward blocks an open attempt, with reasons; ``by`` names who (default: the
    user)."""
    if by is not None and not by.strip():
        raise InputError(f"{opt('by')} must name who blocks it, got {by!r}")
    who = by if by is not None else ctx.user()
    with ctx.open_ledger(ledger) as db:
        info = db.block(attempt, reasons, by=who)
    return Envelope(
        step="block", name="block", outcome="blocked", safe=False,
        summary=f"attempt {info.uuid} of {info.release.name} blocked by {who}",
        reasons=list(info.reasons), attempt=attempt_ref(info),
    )  # fmt: skip


def supersede(
    attempt: str, reason: str, ctx: GateContext, ledger: str | None = None, by: str | None = None
) -> Envelope:
    """A steward sets a blocked attempt aside; who, when and why are kept. Under a dataset
    policy it is only asked (outcome ``proposed``) until a second, different person approves
    it with :func:`override` (``approve``)."""
    who = by if by is not None else ctx.user()  # a blank name is refused, never replaced
    with ctx.open_ledger(ledger) as db:
        info = db.supersede(attempt, reason, who)
    if info.status == "blocked":  # four eyes: asked, waiting for a second person
        return _override_envelope(info, "proposed")
    return Envelope(
        step="supersede", name="supersede", outcome="superseded", safe=None,
        summary=f"attempt {info.uuid} of {info.release.name} superseded by {who} at "
        f"{info.superseded_at}: {reason}",
        reasons=list(info.reasons), attempt=attempt_ref(info),
        details={"superseded_by": who, "superseded_at": info.superseded_at, "reason": reason},
    )  # fmt: skip


# ------------------------------------------------------------------------- overrides
@dataclass(frozen=True)
class OverrideRequest:
    """A decision on publishing a blocked attempt despite its reasons: ``ask`` (the first
    person), ``approve``, ``set-aside`` or ``reject`` (a second, different person). Approving
    with ``release`` and ``destination`` verifies the release is the attempt's bytes and
    copies it there (as the gate does); without them only the ledger is updated.
    ``set-aside`` approves the pending request as a supersede: the block no longer stands,
    nothing is published, a new attempt is judged afresh."""

    attempt: str
    action: str
    reason: str
    by: str | None = None
    release: ReleaseRef | None = None
    destination: str | None = None
    ledger: str | None = None
    conn: str | None = None


def override(req: OverrideRequest, ctx: GateContext) -> Envelope:
    """Ask for, approve or reject an override of a blocked attempt (four eyes)."""
    who = req.by if req.by is not None else ctx.user()
    if req.action not in ("ask", "approve", "set-aside", "reject"):
        raise InputError(
            f"an override is asked, approved, set aside or rejected, not {req.action!r}"
        )
    if req.action != "approve" and (req.release is not None or req.destination is not None):
        raise InputError(f"the release file and {opt('to')} go with approving only")
    if req.action == "set-aside":
        with ctx.open_ledger(req.ledger) as db:
            info = db.decide_override(
                req.attempt, approve=True, by=who, reason=req.reason, set_aside=True
            )
        return _override_envelope(info, "superseded")
    if req.action == "ask":
        with ctx.open_ledger(req.ledger) as db:
            info = db.request_override(req.attempt, by=who, reason=req.reason)
        return _override_envelope(info, "proposed")
    if req.action == "reject":
        with ctx.open_ledger(req.ledger) as db:
            info = db.decide_override(req.attempt, approve=False, by=who, reason=req.reason)
        return _override_envelope(info, "rejected")
    with ctx.open_ledger(req.ledger) as db:
        kind = (db.attempt(req.attempt).override or {}).get("kind")
        if kind == "supersede":
            if req.release is not None or req.destination is not None:
                raise InputError(
                    f"the attempt's pending request is a supersede, which publishes nothing: "
                    f"approve it without the release file and {opt('to')}"
                )
            info = db.decide_override(req.attempt, approve=True, by=who, reason=req.reason)
            return _override_envelope(info, "superseded")
    publish_req = PublishRequest(
        attempt=req.attempt, release=req.release, destination=req.destination,
        ledger=req.ledger, conn=req.conn,
    )  # fmt: skip
    paired(req.release, req.destination)
    target = _destination(publish_req)
    with contextlib.ExitStack() as stack:
        snap = stack.enter_context(_snapshot(req.release, ctx)) if req.release else None
        with ctx.open_ledger(req.ledger) as db:
            info = db.attempt(req.attempt)
            if snap is not None and target is not None:
                assert req.release is not None
                changed = _content_changed(snap, req.release, info, db, ctx)
                if changed:
                    raise InputError(f"{changed}: nothing is published")
                _check_target(snap, target, ctx)
            decided = db.decide_override(
                req.attempt, approve=True, by=who, reason=req.reason,
                destination=target.describe() if target else None,
            )  # fmt: skip
            if snap is not None and target is not None:
                _copy(snap, target, ctx)
            decided = db.finish_publish(decided.uuid)
    return _override_envelope(decided, "published")


def _override_envelope(info: AttemptInfo, outcome: str) -> Envelope:
    o = info.override or {}
    rel = info.release
    kind = str(o.get("kind") or "override")
    if outcome == "proposed":
        summary = (
            f"{kind} of attempt {info.uuid} ({rel.name}) asked by {o.get('requested_by')}: "
            "it takes effect only when a second, different person approves it "
            "(ledger approve / reject)"
        )
    elif outcome == "rejected":
        summary = (
            f"{kind} of attempt {info.uuid} ({rel.name}) rejected by {o.get('decided_by')}: "
            "the block stands"
        )
    elif outcome == "superseded":
        why = o.get("decision_reason") if o.get("asked_as") else o.get("request_reason")
        asked = " (asked as an override)" if o.get("asked_as") else ""
        summary = (
            f"attempt {info.uuid} of {rel.name} superseded: asked by {o.get('requested_by')}"
            f"{asked}, approved by {o.get('decided_by')} at {o.get('decided_at')}: {why}"
        )
    else:
        where = f" to {info.destination}" if info.destination else ""
        policy = f", policy v{o['policy_version']}" if o.get("policy_version") else ""
        summary = (
            f"published {rel.name} (release #{rel.id}){where} by override: asked by "
            f"{o.get('requested_by')}, approved by {o.get('decided_by')} at "
            f"{o.get('decided_at')}{policy}: {o.get('decision_reason')}"
        )
    return Envelope(
        step="supersede" if kind == "supersede" else "override", name=kind, outcome=outcome,
        safe=True if outcome == "published" else None, summary=summary,
        reasons=list(info.reasons), attempt=attempt_ref(info),
        details={"override": dict(o), "blocked_for": list(info.reasons)},
        outputs={"published": info.destination} if outcome == "published" and info.destination
        else {},
    )  # fmt: skip
