"""A commit's outcome is checked, never assumed.

Every Podium write stages files, then asks the catalog to commit one snapshot that names
them. Only two answers are certain: the commit landed, or the catalog refused it
(`CommitFailedException`, `ValidationException`, a table created meanwhile). Any other
error (a database connection dropped after COMMIT, an I/O error at SQLite's COMMIT, an
S3 or HTTP time-out, Ctrl-C after the UPDATE) says nothing about whether the snapshot is
now the table's: deleting the written files then would leave a live snapshot pointing at
missing files. pyiceberg deletes its own files only on the two certain refusals, for the
same reason.

So each write puts a fresh token (`podium.commit`) in its snapshot summary and, after an
error of unknown outcome, reloads the table and looks for it:
- found: the change landed and only the answer was lost; the write reports success;
- not found: the change did not land; its files stay (orphan removal collects them after
  the grace period) and `CommitNotLanded` says so;
- the reload fails too: `CommitOutcomeUnknown` says what to check; the files stay.

The catalog's `commit_table` passes the `commit.before` and `commit.after` failpoints
(`podium.failpoints`), so tests can lose an answer anywhere.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from pyiceberg.exceptions import (
    CommitFailedException,
    NoSuchTableError,
    TableAlreadyExistsError,
    ValidationException,
)

from podium.errors import PodiumError, disk_full
from podium.failpoints import hit

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.table import CommitTableResponse, Table
    from pyiceberg.table.update import TableRequirement, TableUpdate

log = logging.getLogger("podium")

TOKEN = "podium.commit"  # snapshot summary key: which write made this snapshot

# The catalog certainly refused: nothing the write staged is referenced by any snapshot.
REFUSED: tuple[type[BaseException], ...] = (
    CommitFailedException,
    ValidationException,
    TableAlreadyExistsError,
)


class CommitNotLanded(PodiumError):
    """The commit failed without a certain answer, and the table does not hold it."""


class CommitOutcomeUnknown(PodiumError):
    """The commit failed without an answer, and the table could not be read to check."""


def new_token() -> str:
    return uuid.uuid4().hex


# Every snapshot this process committed, in order: (table, snapshot id). A job (one to a
# process) reads the ones landed since it began, so a job that fails after its output
# landed still records (and pins against expiry) what it wrote, and its message says so.
_landed: list[tuple[str, int]] = []
_dropped = 0  # entries trimmed from the front: a long-lived process (the app) keeps the last
_KEEP = 10_000
_landed_lock = threading.Lock()


def landed_mark() -> int:
    """A mark for `landed_since`: how many commits this process has made so far."""
    with _landed_lock:
        return _dropped + len(_landed)


def landed_since(mark: int) -> list[tuple[str, int]]:
    """(table, snapshot id) of each snapshot committed in this process after `mark` (the
    newest `_KEEP` at most)."""
    with _landed_lock:
        return list(_landed[max(0, mark - _dropped) :])


def _record(entries: list[tuple[str, int]]) -> None:
    global _dropped
    with _landed_lock:
        _landed.extend(entries)
        if len(_landed) > 2 * _KEEP:
            _dropped += len(_landed) - _KEEP
            del _landed[:-_KEEP]


def note_landed(table: str, updates: tuple[TableUpdate, ...]) -> None:
    """Record the snapshots a commit to `table` just added."""
    from pyiceberg.table.update import AddSnapshotUpdate

    _record([(table, u.snapshot.snapshot_id) for u in updates if isinstance(u, AddSnapshotUpdate)])


def _note_token(table: Table, token: str) -> None:
    sid = _snapshot_with(table, token)
    if sid is not None:
        _record([(".".join(table.name()), sid)])


def certainly_refused(exc: BaseException) -> bool:
    return isinstance(exc, REFUSED)


def holds(table: Table, token: str) -> bool:
    """Whether any snapshot of `table` was committed with `token`."""
    return _snapshot_with(table, token) is not None


def _snapshot_with(table: Table, token: str) -> int | None:
    """The id of the snapshot of `table` committed with `token` (newest first), if any."""
    for snapshot in reversed(table.snapshots()):
        summary = snapshot.summary
        if summary is not None and summary.additional_properties.get(TOKEN) == token:
            return snapshot.snapshot_id
    return None


def settle(exc: BaseException, *, token: str, reload: Callable[[], Table], what: str) -> Table:
    """After `exc` from a commit sent with `token`: the reloaded table when the commit
    landed (the lost answer is logged), else raise `CommitNotLanded` (or
    `CommitOutcomeUnknown` when the table cannot be read) from `exc`."""
    table = settle_by(exc, landed=lambda t: holds(t, token), reload=reload, what=what)
    _note_token(table, token)
    return table


def settle_by(
    exc: BaseException, *, landed: Callable[[Table], bool], reload: Callable[[], Table], what: str
) -> Table:
    """`settle` for any change `landed` can recognise in the reloaded table (a tag or
    branch that now names its snapshot, a snapshot with a token)."""
    try:
        table = reload()
    except NoSuchTableError:
        raise CommitNotLanded(_not_landed(what, exc)) from exc
    except Exception as check:  # noqa: BLE001 - the reason is in the message
        raise CommitOutcomeUnknown(
            f"{what}: the commit failed ({_reason(exc)}) and the table could not be read "
            f"to check whether it landed ({_reason(check)}). Its files are kept; check "
            "with `podium snapshots` once the catalog answers again (an unused file is "
            "removed by `podium maintain` after the grace period)."
        ) from exc
    if landed(table):
        log.warning(
            "%s: the catalog's answer was lost (%s), but the commit landed; nothing to redo",
            what,
            _reason(exc),
        )
        return table
    raise CommitNotLanded(_not_landed(what, exc)) from exc


def _not_landed(what: str, exc: BaseException) -> str:
    if disk_full(exc):
        return (
            f"{what}: the disk is full ({_reason(exc)}); the commit did not land and nothing "
            "was changed. Free space on it (`podium maintain --all` removes files no table "
            "uses), then run it again."
        )
    return (
        f"{what}: the commit failed ({_reason(exc)}) and did not land; nothing was changed. "
        "Run it again (its unused files are removed by `podium maintain` after the grace "
        "period)."
    )


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# pyiceberg's words when a snapshot was planned before another branch's commit raised the
# table's last sequence number: its requirements (on the write's own branch) still hold, so
# the catalog applies the update and refuses it there, before anything is written.
_STALE_SEQUENCE = "older than last sequence number"


@contextlib.contextmanager
def stale_plans_refused() -> Iterator[None]:
    """Around a catalog's staging of an update: a snapshot numbered before a commit on
    another branch is a certain refusal (`CommitFailedException`, which pyiceberg retries
    on the refreshed table and the callers re-plan on), not an error of unknown outcome."""
    try:
        yield
    except ValueError as exc:
        if _STALE_SEQUENCE not in str(exc):
            raise
        raise CommitFailedException(
            f"the table changed on another branch since this write was planned ({exc})"
        ) from exc


class CheckedCommits:
    """Mixin for a catalog: every `commit_table` passes `commit.before`/`commit.after`, and
    a plan made stale by another branch's commit is refused as a conflict."""

    def commit_table(
        self,
        table: Table,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        hit("commit.before")
        with stale_plans_refused():
            response: CommitTableResponse = super().commit_table(  # type: ignore[misc]
                table, requirements, updates
            )
        note_landed(".".join(table.name()), updates)
        hit("commit.after")
        return response


@functools.cache
def checked_sql_catalog() -> type[SqlCatalog]:
    """pyiceberg's `SqlCatalog` with the commit failpoints (imported on first need: it
    imports SQLAlchemy, which the lean one-shot path avoids)."""
    from pyiceberg.catalog.sql import SqlCatalog

    class PodiumSqlCatalog(CheckedCommits, SqlCatalog):
        pass

    return PodiumSqlCatalog


def commit_checked(
    commit: Callable[[], object],
    *,
    token: str,
    reload: Callable[[], Table],
    discard: Callable[[], None],
    what: str,
) -> Table | None:
    """Run `commit` (whose snapshot summary carries `token`). A certain refusal discards
    the written files and is raised as it is (the caller may retry); any other error is
    settled: returns the reloaded table when the snapshot landed, raises `CommitNotLanded`
    (files kept for orphan removal) or `CommitOutcomeUnknown` when not. Returns None when
    `commit` itself returned: pyiceberg's commit updated the caller's table in place."""
    try:
        commit()
    except REFUSED:
        discard()
        raise
    except (Exception, KeyboardInterrupt) as exc:
        return settle(exc, token=token, reload=reload, what=what)
    return None
