"""User-facing errors.

Every error a person can cause (bad file, unknown table, invalid card) is a
`PodiumError`: its message names the problem and what to do, and the CLI prints it
without a traceback and exits non-zero.
"""

import sys
from typing import Any


class PodiumError(Exception):
    """An error caused by input; the message is shown to the user as is."""

    exit_code = 2


class NotFound(PodiumError):
    """A named thing (table, snapshot, job, model) does not exist."""


class InvalidInput(PodiumError):
    """A file, expression or setting that cannot be used as given."""


class Cancelled(Exception):
    """Raised inside long work when the user asked it to stop."""


class PermissionDenied(PodiumError):
    """The acting user's role does not allow the action."""

    exit_code = 3


class DiskFull(PodiumError):
    """A write ran out of space (a full disk or quota); nothing was committed."""

    exit_code = 74  # EX_IOERR: not "unreachable, try again in a minute" (75)


_FULL_WORDS = ("no space left on device", "database or disk is full", "disk quota exceeded")


def disk_full(exc: BaseException | None) -> bool:
    """Whether `exc`, or an error it was raised from, says the disk (or quota) is full:
    an OSError's ENOSPC/EDQUOT, SQLite's "database or disk is full", pyarrow's words."""
    import errno

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(word in str(exc).lower() for word in _FULL_WORDS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def disk_full_error(exc: BaseException, what: str) -> DiskFull:
    """The one-line error for `exc` (a `disk_full` one) while doing `what`."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return DiskFull(
        f"The disk is full ({first}) while {what}; nothing was committed. Free space on it "
        "(`podium maintain --all` removes files no table uses), then run it again."
    )


def outage_message(exc: BaseException) -> str | None:
    """What to tell the user when a service of the deployment went away mid-command (the
    catalog database refusing connections, the S3 warehouse unreachable): the cause's
    first line and what to do, instead of a traceback. None for any other error."""
    sqlalchemy_exc = sys.modules.get("sqlalchemy.exc")
    sqlite3 = sys.modules.get("sqlite3")  # a one-row write reads an SQLite catalog directly
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        wrapped = sqlalchemy_exc is not None and isinstance(
            exc, (sqlalchemy_exc.OperationalError, sqlalchemy_exc.InterfaceError)
        )
        sqlite_fault = _is_sqlite_fault(exc.orig if wrapped else exc, sqlite3)  # type: ignore[attr-defined]
        if sqlite_fault is False:
            return None
        if wrapped or sqlite_fault:
            service = "the catalog and state database"
            break
        if isinstance(exc, OSError) and _is_storage_error(exc):
            service = "the warehouse's object store"
            break
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    else:
        return None
    return (
        f"{service} is unreachable or went away mid-command: {first}\n"
        "Iceberg commits are atomic, so a table holds this command's change whole or not at "
        "all: once it is back, `podium snapshots TABLE` shows whether it landed; run the command "
        "again only if it did not (an append run twice adds its rows twice)."
    )


# SQLite reports a fault of its file (locked, gone, unreadable) and a fault of the
# statement (no such table, a syntax error) as the same OperationalError; only the first
# kind is the database going away, the second is a bug to show as one.
_SQLITE_OUTAGES = ("database is locked", "unable to open database", "disk i/o error", "busy")


def _is_sqlite_fault(exc: object, sqlite3: Any) -> bool | None:
    """Whether `exc`, an SQLite error, is its database being unavailable; None when it
    is not an SQLite error at all."""
    if sqlite3 is None or not isinstance(exc, sqlite3.OperationalError):
        return None
    text = str(exc).lower()
    return any(words in text for words in _SQLITE_OUTAGES)


def _is_storage_error(exc: OSError) -> bool:
    text = str(exc)
    return isinstance(exc, ConnectionError) or any(
        word in text for word in ("AWS Error", "Could not connect", "Connection refused", "curl")
    )
