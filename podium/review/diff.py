"""What changed between two snapshots of a table: rows added, removed and changed.

The two snapshots' plans are compared first: the same physical rows of the same data
file are the same rows on both sides and are never read. Only the runs one side has and
the other lacks (an edit's new row and the old one it deleted, an appended file) are
read, by DuckDB, joined on `id`; a row present on both sides but in different files (a
compaction moves every row) counts only if a column differs.
Changed rows come with a per-message unified text diff (difflib).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.table import Table

from podium.review.changes import ACTION, AUTHOR, MESSAGE
from podium.store import scan
from podium.store.catalog import load_table
from podium.store.file_plan import runs_not_in
from podium.store.plan import plan_snapshot
from podium.store.scan import quote
from podium.store.snapshots import resolve_snapshot

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
    plan_a, plan_b = plan_snapshot(table, sa), plan_snapshot(table, sb)
    sub_a, sub_b = runs_not_in(plan_a, plan_b), runs_not_in(plan_b, plan_a)
    read = {f.path for f in (*sub_a.files, *sub_b.files)}
    result = SnapshotDiff(
        ".".join(table.name()),
        sa,
        sb,
        files_read=len(read),
        files_shared=len({f.path for f in (*plan_a.files, *plan_b.files)} - read),
        authors=_between(table, sa, sb),
    )
    if not sub_a.files and not sub_b.files:
        return result
    con = scan.connect_plans([sub_a, sub_b])
    scan.register_snapshot(con, "a", table, sub_a, with_pos=False)
    scan.register_snapshot(con, "b", table, sub_b, with_pos=False)
    common = [c for c in plan_a.column_names if c in set(plan_b.column_names) and c != "id"]
    differs = " OR ".join(f"a.{quote(c)} IS DISTINCT FROM b.{quote(c)}" for c in common) or "false"
    flags = ", ".join(
        f"a.{quote(c)} IS DISTINCT FROM b.{quote(c)} AS {quote('d_' + c)}" for c in common
    )
    rows = con.sql(
        "SELECT a.id AS a_id, b.id AS b_id, a.messages AS a_messages, b.messages AS b_messages"
        + (f", {flags}" if flags else "")
        + " FROM a FULL OUTER JOIN b ON a.id = b.id"
        + f" WHERE a.id IS NULL OR b.id IS NULL OR ({differs})"
        + " ORDER BY coalesce(a.id, b.id)"
    ).to_arrow_table()
    for r in rows.to_pylist():
        if r["a_id"] is None:
            result.added.append(r["b_id"])
        elif r["b_id"] is None:
            result.removed.append(r["a_id"])
        else:
            cols = [c for c in common if r.get("d_" + c)]
            msgs = (
                message_diff(r["a_messages"], r["b_messages"])
                if len(result.changed) < MAX_TEXT_DIFFS and "messages" in cols
                else []
            )
            result.changed.append(RowDiff(r["a_id"], msgs, cols))
    return result
