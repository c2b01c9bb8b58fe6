"""Tags and branches: Iceberg refs that name snapshots, and review on a branch.

A tag (`reviewed-2026-11`) pins a snapshot so a training card can name it; a branch
(`review`) takes edits (`commit_change(..., branch="review")`) while `main` stays as it
was, until `fast_forward` moves `main` to the branch head. Every snapshot picker
resolves these names (`podium.store.snapshots.resolve_snapshot`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from pyiceberg.table.refs import MAIN_BRANCH

from podium.errors import InvalidInput
from podium.identity import User, require
from podium.review.row_locations import branch_head
from podium.store.catalog import load_table
from podium.store.snapshots import resolve_snapshot

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
    table = load_table(table_name)
    return [
        Ref(name, ref.snapshot_ref_type.value, ref.snapshot_id)
        for name, ref in sorted(table.refs().items())
    ]


def _create(table_name: str, name: str, user: User, snapshot: int | str | None, kind: str) -> Ref:
    require(user, "edit")
    _check_name(table_name, name)
    table = load_table(table_name)
    sid = resolve_snapshot(table, snapshot)
    if sid is None:
        raise InvalidInput(f"{table_name} has no snapshot to {kind} yet.")
    manage = table.manage_snapshots()
    (manage.create_tag if kind == "tag" else manage.create_branch)(sid, name).commit()
    return Ref(name, kind, sid)


def create_tag(table_name: str, name: str, user: User, snapshot: int | str | None = None) -> Ref:
    """Name a snapshot (default: current) so cards and pickers can use the name."""
    return _create(table_name, name, user, snapshot, "tag")


def create_branch(table_name: str, name: str, user: User, snapshot: int | str | None = None) -> Ref:
    """A branch starting at a snapshot (default: current); edits on it leave main alone."""
    return _create(table_name, name, user, snapshot, "branch")


def fast_forward(table_name: str, branch: str, user: User) -> Ref:
    """Move main to `branch`'s head, when main has not moved since the branch began."""
    require(user, "edit")
    table = load_table(table_name)
    target = branch_head(table, branch)
    main = branch_head(table, MAIN_BRANCH)
    sid: int | None = target
    while sid is not None and sid != main:
        snap = table.snapshot_by_id(sid)
        sid = snap.parent_snapshot_id if snap else None
    if sid != main or target is None:
        raise InvalidInput(
            f"main of {table_name} changed since branch {branch!r} began; it cannot be "
            "fast-forwarded. Make the branch's edits again on main."
        )
    table.manage_snapshots().set_current_snapshot(snapshot_id=target).commit()
    return Ref(MAIN_BRANCH, "branch", target)
