"""Release files and manifests -> :class:`PublishedRelease` / :class:`Population`.

A release written by the anonymizers comes with a manifest (``RELEASE.manifest.json``, the
``to_dict()`` of :class:`airflow_privacy.core.anonymize.Manifest`): it names the QIs, the
sensitive column, the method and the group columns, so a release can be read without
repeating them. Explicit arguments win over the manifest; the manifest's method decides the
kind (``bucketize`` -> bucketized, its extra group column being the bucket id). Blank
sensitive cells are refused, or read as the caller's ``missing_as`` value, as everywhere
(:mod:`airflow_privacy.core.io`).
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from airflow_privacy.core.composition.locate import Population
from airflow_privacy.core.composition.release import PublishedRelease, check_kind
from airflow_privacy.core.io import MANIFEST_SUFFIX
from airflow_privacy.errors import InputError, opt


def manifest_beside(release: str | Path) -> Path | None:
    """``RELEASE.manifest.json`` when it exists (the operators' convention)."""
    from airflow_privacy.core.io import is_regular_file

    p = Path(f"{release}{MANIFEST_SUFFIX}")
    return p if is_regular_file(p) else None


_JSON_LIMIT = 64 << 20  # bytes a manifest may take


def read_json(path: str | Path, what: str) -> Any:
    """A JSON file (a regular file of at most 64 MiB, checked before it is opened)."""
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise InputError(f"{what} file {str(p)!r} does not exist") from None
    except (OSError, ValueError) as exc:  # a name too long, a symlink loop, a NUL
        reason = (exc.strerror if isinstance(exc, OSError) else None) or exc
        raise InputError(f"cannot read {what} {str(p)!r}: {reason}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{what} file {str(p)!r} is not a regular file")
    if info.st_size > _JSON_LIMIT:
        raise InputError(f"{what} file {str(p)!r} is larger than {_JSON_LIMIT >> 20} MiB")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # UnicodeDecodeError, JSONDecodeError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"cannot read {what} {str(p)!r}: {reason}") from None


@dataclass(frozen=True)
class ReleaseFile:
    """A release read from a file, with the manifest it came with (if any)."""

    release: PublishedRelease
    manifest: dict[str, Any] | None
    bucket: str | None

    def spec(self) -> dict[str, Any]:
        r = self.release
        return {"qis": list(r.qis), "sensitive": r.sensitive, "kind": r.kind, "bucket": self.bucket}


def resolve_columns(
    manifest: Mapping[str, Any] | None,
    qis: Sequence[str] | None,
    sensitive: str | None,
    kind: str | None,
    bucket: str | None,
    source: str,
) -> tuple[tuple[str, ...], str, str, str | None]:
    """QIs, sensitive column, kind and bucket column from the arguments, else the manifest."""
    m = manifest or {}
    out_qis = tuple(qis) if qis else tuple(str(q) for q in m.get("qis", ()))
    out_sens = sensitive or m.get("sensitive")
    if not out_qis:
        raise InputError(f"which columns of {source} are quasi-identifiers? give {opt('qi')}")
    if not out_sens:
        raise InputError(f"which column of {source} is sensitive? give {opt('sensitive')}")
    method = str(m.get("method", ""))
    out_kind = kind or ("bucketized" if method == "bucketize" else "generalized")
    check_kind(out_kind)
    out_bucket = bucket
    if out_kind == "bucketized" and not out_bucket:
        extra = [c for c in m.get("group_columns", ()) if c not in out_qis]
        out_bucket = str(extra[0]) if len(extra) == 1 else None
        if out_bucket is None:
            raise InputError(f"which column of {source} is the bucket id? give {opt('bucket')}")
    return out_qis, str(out_sens), out_kind, out_bucket


def read_release_file(
    path: str | Path,
    *,
    qis: Sequence[str] | None = None,
    sensitive: str | None = None,
    kind: str | None = None,
    bucket: str | None = None,
    manifest: str | Path | None = None,
    name: str | None = None,
    fmt: str | None = None,
    delimiter: str | None = None,
    missing_as: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> ReleaseFile:
    """Read a release file (CSV / Parquet) into its published groups.

    Blank cells of the sensitive column are refused, or published as ``missing_as``
    (:func:`airflow_privacy.core.io.fill_blanks`).

    A large generalized release (:func:`airflow_privacy.core.backends.large`: a Parquet
    file of at least 4 x 10^7 cells by its metadata, a CSV of 64 MiB, a gzip CSV that
    decompresses past that) is read from its per-group counts, counted by ``auto``'s
    backend in bounded memory (DuckDB, or Arrow one row group at a time), not whole (a
    2.6 MB Parquet file of 2 x 10^8 rows took 8 GB): the same groups (the backends'
    parity). A bucketized release lists its members and is read whole.
    """
    from airflow_privacy.core.backends import count_release, large
    from airflow_privacy.core.cells import check_missing_as
    from airflow_privacy.core.io import read_release
    from airflow_privacy.core.model import ReleaseSpec

    replacement = check_missing_as(missing_as)
    mpath = Path(manifest) if manifest else manifest_beside(path)
    mdata = read_json(mpath, "manifest") if mpath else None
    if mdata is not None and not isinstance(mdata, dict):
        raise InputError(f"manifest {str(mpath)!r} is not a JSON object")
    label = name or Path(path).name
    q, s, k, b = resolve_columns(mdata, qis, sensitive, kind, bucket, label)
    spec = ReleaseSpec(sensitive=s, group_columns=q)
    generalized = k == "generalized" and b is None
    if generalized and large(Path(path), fmt, spec.required_columns()):
        if progress is not None:
            progress(f"counting {label} without reading it whole (a large file)")
        counted, _ = count_release(path, spec, requested="auto", fmt=fmt, delimiter=delimiter,
                                   missing_as=missing_as, progress=progress)  # fmt: skip
        counted_release = PublishedRelease(
            "generalized", q, s, counted.groups, counted.values, counted.counts, None, label
        )
        return ReleaseFile(counted_release, mdata, None)
    cols = [*q, s, *([b] if b else [])]
    table = read_release(
        path,
        cols,
        fmt,  # type: ignore[arg-type]
        delimiter,
        sensitive=s,
        missing_as=replacement,
    )
    release = PublishedRelease.from_arrow(table, q, s, k, b, name=label)
    return ReleaseFile(release, mdata, b)


def read_population_file(
    path: str | Path,
    qis: Sequence[str],
    *,
    id_column: str | None = None,
    hash_key: bytes | None = None,
    fmt: str | None = None,
    delimiter: str | None = None,
    sensitive: str | None = None,
    missing_as: str | None = None,
) -> Population:
    """The people of a table of original records: exact QI values (and hashed identifiers;
    and their ``sensitive`` values when that column is named, whose blank cells are
    refused, or read as ``missing_as``)."""
    from airflow_privacy.core.cells import check_missing_as
    from airflow_privacy.core.io import read_release

    replacement = check_missing_as(missing_as)
    cols = [*dict.fromkeys(qis), *([id_column] if id_column else [])]
    table = read_release(
        path,
        cols,
        fmt,  # type: ignore[arg-type]
        delimiter,
        sensitive=sensitive,
        missing_as=replacement,
    )
    return Population.from_arrow(
        table, qis, id_column, hash_key, sensitive=sensitive, name=Path(path).name
    )
