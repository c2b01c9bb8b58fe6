"""Tags and branches: Iceberg refs that name snapshots, and review on a branch.

A tag (`reviewed-2026-11`) pins a snapshot so a training card can name it; a branch
(`review`) takes edits (`commit_change(..., branch="review")`) while `main` stays as it
was, until `fast_forward` moves `main` to the branch head (also after a compaction of
main, which changes no row). Every snapshot picker
resolves these names (`podium.store.read.snapshots.resolve_snapshot`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from pyiceberg.table import Table
from pyiceberg.table.refs import MAIN_BRANCH

from podium.errors import InvalidInput
from podium.identity import User, require
from podium.review.changes import ACTION, AUTHOR, touched_rows
from podium.store.catalog.catalog import load_table
from podium.store.catalog.commit_outcome import REFUSED, settle_by
from podium.store.read.snapshots import resolve_snapshot
from podium.store.write.row_locations import branch_head

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class Ref:
    name: str
    kind: str  # "tag" or "branch"
    snapshot_id: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_name(table_name: str, name: str) -> None:
    if not _NAME.match(name) or name.isdigit():
        raise InvalidInput(
            f"{name!r} is not a usable tag or branch name: start with a letter; letters, "
            "digits, '.', '_' and '-' only."
        )
    if name in load_table(table_name).refs():
        raise InvalidInput(f"{table_name} already has a tag or branch named {name!r}.")


def list_refs(table_name: str) -> list[Ref]:
    return refs_of(load_table(table_name))


def refs_of(table: Table) -> list[Ref]:
    """A loaded table's tags and branches, by name."""
    return [
        Ref(name, ref.snapshot_ref_type.value, ref.snapshot_id)
        for name, ref in sorted(table.refs().items())
    ]


ATTEMPTS = 8  # a tag or branch lost to another commit is tried again on the new head


def _create(table_name: str, name: str, user: User, snapshot: int | str | None, kind: str) -> Ref:
    require(user, "edit")
    _check_name(table_name, name)
    table = load_table(table_name)
    sid = resolve_snapshot(table, snapshot)
    if sid is None:
        raise InvalidInput(f"{table_name} has no snapshot to {kind} yet.")
    what = f"creating {kind} {name!r} of {table_name}"
    for _ in range(ATTEMPTS):
        manage = table.manage_snapshots()
        try:
            (manage.create_tag if kind == "tag" else manage.create_branch)(sid, name).commit()
        except REFUSED:  # another commit landed first: look again
            table = load_table(table_name)
            if name in table.refs():
                raise InvalidInput(
                    f"{table_name} already has a tag or branch named {name!r} "
                    "(made meanwhile by someone else)."
                ) from None
            continue
        except (Exception, KeyboardInterrupt) as exc:  # unknown outcome: did it land?
            settle_by(
                exc,
                landed=lambda t: _names(t, name, sid, kind),
                reload=lambda: load_table(table_name),
                what=what,
            )
        return Ref(name, kind, sid)
    raise InvalidInput(
        f"{table_name} kept changing while {what} ({ATTEMPTS} tries); nothing was created. "
        "Try again."
    )


def _names(table: Table, name: str, sid: int, kind: str) -> bool:
    """Whether `table` has the ref `name` of `kind` at `sid` (the change landed)."""
    ref = table.refs().get(name)
    return ref is not None and ref.snapshot_id == sid and ref.snapshot_ref_type.value == kind


def create_tag(table_name: str, name: str, user: User, snapshot: int | str | None = None) -> Ref:
    """Name a snapshot (default: current) so cards and pickers can use the name."""
    return _create(table_name, name, user, snapshot, "tag")


def create_branch(table_name: str, name: str, user: User, snapshot: int | str | None = None) -> Ref:
    """A branch starting at a snapshot (default: current); edits on it leave main alone."""
    return _create(table_name, name, user, snapshot, "branch")


def fast_forward(table_name: str, branch: str, user: User) -> Ref:
    """Move main to `branch`'s head, when main changed no row since the branch began.

    Main may have moved by snapshots that touch no row (compaction: its summary's
    `podium.rows` is "[]"); the branch head then holds exactly the rows main would have
    with the branch's changes, so main moves to it. The rewrite compaction did is given up
    (the next `podium maintain` compacts again). Any other change to main refuses.
    """
    require(user, "edit")
    for _ in range(ATTEMPTS):
        table = load_table(table_name)
        target = branch_head(table, branch)
        main = branch_head(table, MAIN_BRANCH)
        if target is None:
            raise InvalidInput(
                f"Branch {branch!r} of {table_name} has no snapshot to move main to."
            )
        blocker = _row_change_since(table, main, set(_lineage(table, target)))
        if blocker is not None:
            raise InvalidInput(
                f"main of {table_name} changed rows since branch {branch!r} began ({blocker}); "
                "it cannot be fast-forwarded. Make the branch's edits again on main."
            )
        if main == target:
            return Ref(MAIN_BRANCH, "branch", target)
        try:
            # Committed with a requirement on main's head: a change landing meanwhile fails
            # it, and main is looked at again.
            table.manage_snapshots().set_current_snapshot(snapshot_id=target).commit()
        except REFUSED:
            continue
        except (Exception, KeyboardInterrupt) as exc:  # unknown outcome: did main move?
            settle_by(
                exc,
                landed=functools.partial(_main_at, snapshot_id=target),
                reload=lambda: load_table(table_name),
                what=f"fast-forwarding main of {table_name} to {branch!r}",
            )
        return Ref(MAIN_BRANCH, "branch", target)
    raise InvalidInput(
        f"main of {table_name} kept changing while it was fast-forwarded ({ATTEMPTS} tries); "
        "nothing was changed. Try again."
    )


def _main_at(table: Table, snapshot_id: int) -> bool:
    return branch_head(table, MAIN_BRANCH) == snapshot_id


def _lineage(table: Table, sid: int | None) -> Iterator[int]:
    """`sid` and its ancestors; the last may be an expired snapshot's id (a parent id
    outlives its snapshot, and both lines of a fork still name it)."""
    while sid is not None:
        yield sid
        snap = table.snapshot_by_id(sid)
        sid = snap.parent_snapshot_id if snap else None


def _row_change_since(table: Table, main: int | None, on_branch: set[int]) -> str | None:
    """What changed rows on main after it met the branch's line, or None."""
    for sid in _lineage(table, main):
        if sid in on_branch:
            return None
        snap = table.snapshot_by_id(sid)
        props = dict(snap.summary.additional_properties) if snap and snap.summary else {}
        if snap is None:
            break
        if touched_rows(props) != set():
            action = props.get(ACTION) or (snap.summary.operation.value if snap.summary else "")
            by = f" by {props[AUTHOR]}" if AUTHOR in props else ""
            return f"snapshot {sid}, {action}{by}"
    # Expiry removed the snapshot both lines began from (pyiceberg then forgets the
    # parent ids too): whether main changed rows before its oldest snapshot is unknown.
    return "no snapshot the two have in common is left after expiry, so that is unknown"
