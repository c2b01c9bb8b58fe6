"""Edits asked about before anything is written: a message's new text or role, or a
turn added at the end. Each comes back as `PendingEdit`: the question naming the row and
message, and a preview of the change (a per-message diff, `podium.review.diff`), so the
reviewer reads what the next snapshot will hold before confirming it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from podium.errors import InvalidInput
from podium.review.changes import add_turn, set_message
from podium.review.diff import message_diff


@dataclass(frozen=True)
class PendingEdit:
    """An edit the page asks about before saving: message `index`'s new content and
    role, or (`index` None) a new turn at the end."""

    row_id: str
    index: int | None
    role: str
    content: str
    why: str
    question: str
    yes: str  # the confirming button's label
    preview: str = field(default="")  # a unified diff of the row's messages


def _preview(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> str:
    parts: list[str] = []
    for entry in message_diff(old, new):
        head = f"message {entry['index']} {entry['status']}"
        if entry.get("role"):
            head += f" · role {entry['role']}"
        parts.append(f"# {head}")
        if entry.get("diff"):
            parts.append(entry["diff"])
        elif entry["status"] == "added":
            parts.extend(f"+{line}" for line in (entry.get("text") or "").splitlines() or [""])
    return "\n".join(parts)


def edit_asked(
    row: Mapping[str, Any], index: int, *, content: str, role: str, why: str
) -> PendingEdit:
    """What "Save edit" will write to message `index` of `row`, to ask before it is
    written; an edit that changes nothing is said at once, with nothing asked."""
    row_id = str(row["id"])
    old = [dict(m) for m in row.get("messages") or []]
    new = set_message(old, index, content=content, role=role)
    if new == old:
        raise InvalidInput("Nothing changed in this message; edit its text or role first.")
    question = (
        f"Save this edit of message {index} ({role}) of row {row_id}? The next snapshot "
        "holds it; older snapshots and the row's history keep the text before."
    )
    return PendingEdit(
        row_id,
        index,
        role,
        content,
        why.strip(),
        question,
        "Yes, save the edit",
        _preview(old, new),
    )


def turn_asked(row: Mapping[str, Any], *, role: str, content: str, why: str) -> PendingEdit:
    """What "Add turn at the end" will write, to ask before it is written."""
    row_id = str(row["id"])
    if not content.strip():
        raise InvalidInput("Write the new turn's content first; an empty turn adds nothing.")
    old = [dict(m) for m in row.get("messages") or []]
    new = add_turn(old, role, content)
    question = (
        f"Add a {role} turn at the end of row {row_id} (as message {len(old)})? The next "
        "snapshot holds it; older snapshots keep the row without it."
    )
    return PendingEdit(
        row_id, None, role, content, why.strip(), question, "Yes, add the turn", _preview(old, new)
    )
