"""What changed between two snapshots of a table: rows added, removed and changed.

Which rows differ comes from the store (`podium.store.read.snapshot_diff.snapshot_changes`:
only the runs one side has and the other lacks are read, joined on `id`); this adds what
a reviewer reads: a per-message unified text diff (difflib) for changed rows, and who
made the snapshots in between.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.table import Table

from podium.review.changes import ACTION, AUTHOR, MESSAGE
from podium.store.catalog.catalog import load_table
from podium.store.read.snapshot_diff import snapshot_changes
from podium.store.read.snapshots import resolve_snapshot

MAX_TEXT_DIFFS = 200  # changed rows whose message diffs are computed


@dataclass
class RowDiff:
    id: str
    messages: list[dict[str, Any]]  # per changed message: index, role change, text diff
    columns: list[str]  # other columns that differ


@dataclass
class SnapshotDiff:
    table: str
    a: int | None
    b: int | None
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[RowDiff] = field(default_factory=list)
    files_read: int = 0
    files_shared: int = 0
    authors: list[dict[str, str]] = field(default_factory=list)  # snapshots between, on b's side

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def message_diff(
    old: Sequence[Mapping[str, Any]] | None, new: Sequence[Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    """Per message index: what changed (role, text as a unified diff, added, removed)."""
    old, new = list(old or []), list(new or [])
    out: list[dict[str, Any]] = []
    for i in range(max(len(old), len(new))):
        a = old[i] if i < len(old) else None
        b = new[i] if i < len(new) else None
        if a == b:
            continue
        entry: dict[str, Any] = {"index": i}
        if a is None:
            entry.update(status="added", role=b["role"], text=b.get("content") or "")  # type: ignore[index,union-attr]
        elif b is None:
            entry.update(status="removed", role=a["role"], text=a.get("content") or "")
        else:
            entry["status"] = "changed"
            if a.get("role") != b.get("role"):
                entry["role"] = f"{a.get('role')} -> {b.get('role')}"
            lines = difflib.unified_diff(
                (a.get("content") or "").splitlines(),
                (b.get("content") or "").splitlines(),
                f"message {i} before",
                f"message {i} after",
                lineterm="",
            )
            entry["diff"] = "\n".join(lines)
        out.append(entry)
    return out


def _between(table: Table, a: int | None, b: int | None) -> list[dict[str, str]]:
    """Who made the snapshots after `a` up to `b` (when `a` is an ancestor of `b`)."""
    out, sid = [], b
    while sid is not None and sid != a:
        snap = table.snapshot_by_id(sid)
        if snap is None:
            break
        props = snap.summary.additional_properties if snap.summary else {}
        out.append(
            {
                "snapshot_id": str(sid),
                "author": props.get(AUTHOR, ""),
                "message": props.get(MESSAGE, ""),
                "action": props.get(ACTION, snap.summary.operation.value if snap.summary else ""),
            }
        )
        sid = snap.parent_snapshot_id
    return list(reversed(out)) if sid == a else []


def diff_snapshots(name: str, a: int | str | None, b: int | str | None = None) -> SnapshotDiff:
    """Rows added, removed and changed from snapshot `a` to `b` (ids, tags or branches;
    `b` defaults to the current snapshot)."""
    table = load_table(name)
    sa, sb = resolve_snapshot(table, a), resolve_snapshot(table, b)
    found = snapshot_changes(table, sa, sb)
    result = SnapshotDiff(
        ".".join(table.name()),
        sa,
        sb,
        added=found.added,
        removed=found.removed,
        files_read=found.files_read,
        files_shared=found.files_shared,
        authors=_between(table, sa, sb),
    )
    for row in found.changed:
        texts = len(result.changed) < MAX_TEXT_DIFFS and "messages" in row.columns
        msgs = message_diff(row.before, row.after) if texts else []
        result.changed.append(RowDiff(row.id, msgs, row.columns))
    return result
