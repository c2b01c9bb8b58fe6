"""The review tools' saves, without Streamlit: what Browse's and the Review page's
buttons write.

A label, rating or note is one append to the annotations table; an edit of a message,
an added or removed turn or a removal is one snapshot (author, message, rows) made on
the snapshot the reviewer was looking at, so a row changed since gives `EditConflict`'s
message instead of a lost write. Each returns `Saved`, the page's confirmation. The
author's role is checked below (`podium.identity.require`), whatever the page offered.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from podium.errors import InvalidInput
from podium.identity import User
from podium.review import annotations as ann
from podium.review.changes import (
    Change,
    Committed,
    add_turn,
    commit_change,
    remove_turn,
    set_message,
)
from podium.store.catalog.catalog import load_table


@dataclass(frozen=True)
class Saved:
    """What a save did, for the page's confirmation."""

    text: str
    snapshot_id: int | None = None  # the table's new snapshot (edits and removals)


def label_rows(
    name: str, ids: Sequence[str], user: User, label: str, snapshot: int | None = None
) -> Saved:
    ann.annotate(load_table(name), ids, user, label=label, snapshot=snapshot)
    return Saved(f"Labelled {rows_text(len(ids))} {label}.")


def rate_row(name: str, row_id: str, user: User, rating: int, snapshot: int | None = None) -> Saved:
    ann.annotate(load_table(name), [row_id], user, rating=rating, snapshot=snapshot)
    return Saved(f"Rated {row_id} {rating} of 5.")


def note_row(name: str, row_id: str, user: User, note: str, snapshot: int | None = None) -> Saved:
    if not note.strip():
        raise InvalidInput("Write a note first; an empty note records nothing.")
    ann.annotate(load_table(name), [row_id], user, note=note.strip(), snapshot=snapshot)
    return Saved(f"Noted on {row_id}.")


def rows_text(n: int) -> str:
    """'1 row', '1,234 rows'."""
    return f"{n:,} row" + ("" if n == 1 else "s")


def _committed(what: str, done: Committed, branch: str) -> Saved:
    where = "" if branch == "main" else f" on branch {branch}"
    return Saved(f"{what}: snapshot {done.snapshot_id}{where}.", done.snapshot_id)


def _messages(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [dict(m) for m in row.get("messages") or []]


def edit_message(
    name: str,
    row: Mapping[str, Any],
    index: int,
    user: User,
    *,
    content: str | None,
    role: str | None,
    why: str,
    base: int | str | None,
    branch: str = "main",
) -> Saved:
    """Message `index` of `row` (as read at snapshot `base`) gets new content/role."""
    messages = set_message(_messages(row), index, content=content, role=role)
    if messages == _messages(row):
        raise InvalidInput("Nothing changed in this message; edit its text or role first.")
    change = Change(updates={row["id"]: {"messages": messages}}, message=why)
    return _committed(f"Edited {row['id']}", _commit(name, change, user, base, branch), branch)


def insert_turn(
    name: str,
    row: Mapping[str, Any],
    user: User,
    *,
    role: str,
    content: str,
    at: int | None,
    why: str,
    base: int | str | None,
    branch: str = "main",
) -> Saved:
    messages = add_turn(_messages(row), role, content, at)
    change = Change(updates={row["id"]: {"messages": messages}}, message=why)
    return _committed(
        f"Added a turn to {row['id']}", _commit(name, change, user, base, branch), branch
    )


def drop_turn(
    name: str,
    row: Mapping[str, Any],
    index: int,
    user: User,
    *,
    why: str,
    base: int | str | None,
    branch: str = "main",
) -> Saved:
    messages = remove_turn(_messages(row), index)
    change = Change(updates={row["id"]: {"messages": messages}}, message=why)
    return _committed(
        f"Removed turn {index} of {row['id']}", _commit(name, change, user, base, branch), branch
    )


def delete_rows(
    name: str,
    ids: Collection[str],
    user: User,
    *,
    why: str,
    base: int | str | None,
    branch: str = "main",
) -> Saved:
    change = Change(deletes=frozenset(ids), message=why)
    return _committed(
        f"Removed {rows_text(len(ids))}", _commit(name, change, user, base, branch), branch
    )


def _commit(
    name: str, change: Change, user: User, base: int | str | None, branch: str
) -> Committed:
    # Reading a branch's head and editing it: the base is that branch's snapshot.
    return commit_change(load_table(name), change, user, base=base, branch=branch)
