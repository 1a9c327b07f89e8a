"""What a front end hands the gate: where things are and who is asking.

:class:`GateContext` carries the progress callback (stderr on the command line, the task log
in Airflow), the :class:`Connections` that reach object stores and SQL databases (pyarrow's
file systems and SQLAlchemy URLs on the command line, Airflow connections in a task), how
the ledger is located (:func:`airflow_privacy.ledger.location.resolve` with that front end's
connection store), and the origin recorded with an attempt (the command line's user, or the
DAG run and task).
"""

from __future__ import annotations

import getpass
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from airflow_privacy.ledger import ReleaseLedger
    from airflow_privacy.ledger.location import LedgerLocation

Progress = Callable[[str], None]


def quiet(_message: str) -> None:
    return None


class Connections(Protocol):
    """How a front end reaches data that is not a local file."""

    def read_bytes(self, uri: str, conn: str | None) -> bytes:
        """The bytes of an object-store URI (``s3://...``, ``gs://...``)."""

    def download(self, uri: str, conn: str | None, target: str) -> None:
        """Stream an object into the local file ``target`` (1 MiB at a time: a release of
        any size never sits in memory)."""

    def write_bytes(self, uri: str, conn: str | None, data: bytes) -> None:
        """Write an object (object stores replace objects atomically)."""

    def exists(self, uri: str, conn: str | None) -> bool: ...

    def sql_engine(self, conn: str, *, write: bool = False) -> Engine:
        """A SQLAlchemy engine for a SQL reference's connection (``write``: one that may
        create tables, for a release written or published in the database)."""


class LocalConnections:
    """The command line's connections: object stores through pyarrow's file systems
    (credentials from the usual environment), SQL through a SQLAlchemy URL given as the
    reference's connection (``--conn``)."""

    def _fs(self, uri: str) -> tuple[Any, str]:
        import pyarrow.fs as pafs

        from airflow_privacy.errors import InputError

        try:
            return pafs.FileSystem.from_uri(uri)  # type: ignore[no-any-return]
        except Exception as exc:  # pyarrow raises ArrowInvalid / OSError variants
            raise InputError(f"cannot open {uri!r}: {str(exc).splitlines()[0]}") from None

    def download(self, uri: str, conn: str | None, target: str) -> None:
        import shutil

        from airflow_privacy.errors import InputError

        fs, path = self._fs(uri)
        try:
            with fs.open_input_stream(path) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
        except FileNotFoundError:
            raise InputError(f"{uri!r} does not exist") from None
        except OSError as exc:
            raise InputError(f"cannot read {uri!r}: {str(exc).splitlines()[0]}") from None

    def read_bytes(self, uri: str, conn: str | None) -> bytes:
        from airflow_privacy.errors import InputError

        fs, path = self._fs(uri)
        try:
            with fs.open_input_stream(path) as fh:
                return bytes(fh.read())
        except FileNotFoundError:
            raise InputError(f"{uri!r} does not exist") from None
        except OSError as exc:
            raise InputError(f"cannot read {uri!r}: {str(exc).splitlines()[0]}") from None

    def write_bytes(self, uri: str, conn: str | None, data: bytes) -> None:
        fs, path = self._fs(uri)
        with fs.open_output_stream(path) as fh:
            fh.write(data)

    def exists(self, uri: str, conn: str | None) -> bool:
        import pyarrow.fs as pafs

        fs, path = self._fs(uri)
        return bool(fs.get_file_info(path).type != pafs.FileType.NotFound)

    def sql_engine(self, conn: str, *, write: bool = False) -> Engine:
        from sqlalchemy import create_engine
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError, NoSuchModuleError

        from airflow_privacy.errors import InputError, opt
        from airflow_privacy.ledger.engine import safe_url

        if not conn or "://" not in conn:
            raise InputError(
                f"a table reference needs {opt('conn')} with a database URL "
                "(e.g. postgresql+psycopg://USER@HOST/DB)"
            )
        try:
            url = make_url(conn)
            if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
                # reading a table never creates a database (SQLite would make an empty file)
                from airflow_privacy.core.io import is_regular_file

                if not is_regular_file(url.database):
                    raise InputError(
                        f"database file {url.database!r} of {opt('conn')} does not exist or is "
                        "not a regular file"
                    )
                url = url.set(
                    database=f"file:{url.database}",
                    query={**url.query, "mode": "rw" if write else "ro", "uri": "true"},
                )
            return create_engine(url)
        except InputError:
            raise
        except (ArgumentError, NoSuchModuleError, ModuleNotFoundError, ValueError) as exc:
            raise InputError(
                f"cannot use database {safe_url(conn)!r}: {str(exc).splitlines()[0][:200]}"
            ) from None


def _cli_origin() -> dict[str, Any]:
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment
        user = "unknown"
    return {"front_end": "cli", "user": user}


@dataclass
class GateContext:
    """Everything a service needs from its front end (module doc)."""

    progress: Progress = quiet
    connections: Connections = field(default_factory=LocalConnections)
    locate_ledger: Callable[[str | None], LedgerLocation] | None = None
    origin: dict[str, Any] = field(default_factory=_cli_origin)

    def ledger_location(self, explicit: str | None = None) -> LedgerLocation:
        """The ledger to use (``explicit``: the user's ``--ledger`` / connection id)."""
        if self.locate_ledger is not None:
            return self.locate_ledger(explicit)
        from airflow_privacy.ledger.location import resolve

        return resolve(explicit)

    def open_ledger(self, explicit: str | None = None, *, create: bool = False) -> ReleaseLedger:
        """Open the ledger; ``create=False`` (every reader, and every writer that may not
        start a new ledger) refuses one that does not exist."""
        from airflow_privacy.ledger import ReleaseLedger

        loc = self.ledger_location(explicit)
        _refuse_memory(loc.url)
        if create:
            _make_parent(loc.url)
        return ReleaseLedger(loc.url, create=create, key_env=loc.key_env)

    def user(self) -> str:
        return str(self.origin.get("user") or self.origin.get("task_id") or "unknown")


def _refuse_memory(url: str) -> None:
    """A ledger in memory (``sqlite://``, ``sqlite:///:memory:``) ends with the command: a
    policy, an attempt or a decision recorded there is gone before anyone can read it, so
    the gate's front ends refuse it (the Python API keeps it, for tests)."""
    from airflow_privacy.errors import InputError, opt
    from airflow_privacy.ledger.engine import parse_url, sqlite_path

    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite":
        return
    if sqlite_path(parsed) is None or parsed.query.get("mode") == "memory":
        raise InputError(
            f"{opt('ledger')} {url!r} is a database in memory: nothing recorded there outlives "
            "the command; give a file (sqlite:///PATH) or a server"
        )


def _make_parent(url: str) -> None:
    """Creating a ledger on purpose: its default folder ($AIRFLOW_HOME) may be made, but only
    that one (a typo elsewhere stays an error)."""
    from airflow_privacy.errors import InputError, opt
    from airflow_privacy.ledger.engine import parse_url, sqlite_path
    from airflow_privacy.ledger.location import default_path

    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite":
        return
    path = sqlite_path(parsed)
    try:
        default = path is not None and path.resolve() == default_path().resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop, a name too long
        raise InputError(f"cannot use the ledger file {str(path)!r}: {exc}") from None
    if path is not None and default:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise InputError(
                f"the ledger's default folder {str(path.parent)!r} ($AIRFLOW_HOME) is a file, "
                f"not a folder; point AIRFLOW_HOME at a folder or give {opt('ledger')}"
            ) from None
        except OSError as exc:
            raise InputError(
                f"cannot make the ledger's default folder {str(path.parent)!r} "
                f"($AIRFLOW_HOME): {exc.strerror or type(exc).__name__}"
            ) from None
