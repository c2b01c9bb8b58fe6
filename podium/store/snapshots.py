"""Listing a table's snapshots and resolving one for time travel."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from pyiceberg.table import Table

from podium.errors import NotFound


@dataclass(frozen=True)
class SnapshotInfo:
    snapshot_id: int
    parent_id: int | None
    committed_at: str  # ISO 8601, UTC
    operation: str
    added_rows: int
    total_rows: int
    current: bool

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def list_snapshots(table: Table) -> list[SnapshotInfo]:
    """All snapshots of `table`, oldest first."""
    current = table.current_snapshot()
    out = []
    for snap in sorted(table.snapshots(), key=lambda s: s.timestamp_ms):
        summary = snap.summary
        extra = summary.additional_properties if summary else {}
        out.append(
            SnapshotInfo(
                snapshot_id=snap.snapshot_id,
                parent_id=snap.parent_snapshot_id,
                committed_at=datetime.fromtimestamp(snap.timestamp_ms / 1000, UTC).isoformat(),
                operation=str(summary.operation.value) if summary else "",
                added_rows=int(extra.get("added-records", 0)),
                total_rows=int(extra.get("total-records", 0)),
                current=current is not None and snap.snapshot_id == current.snapshot_id,
            )
        )
    return out


def resolve_snapshot(table: Table, snapshot_id: int | str | None) -> int | None:
    """The snapshot to read: the given id (checked to exist) or the current one.

    Returns None only for a table with no snapshot at all (created empty).
    """
    if snapshot_id is None or snapshot_id == "":
        current = table.current_snapshot()
        return current.snapshot_id if current else None
    try:
        sid = int(snapshot_id)
    except (TypeError, ValueError):
        raise NotFound(f"Snapshot id {snapshot_id!r} is not a number.") from None
    if table.snapshot_by_id(sid) is None:
        known = ", ".join(str(s.snapshot_id) for s in list_snapshots(table)) or "none"
        raise NotFound(
            f"Table {'.'.join(table.name())} has no snapshot {sid}. Its snapshots: {known}."
        )
    return sid
