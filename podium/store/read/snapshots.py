"""Listing a table's snapshots and resolving one for time travel."""

from __future__ import annotations

from collections.abc import Mapping
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
    refs: tuple[str, ...] = ()  # tags and branches naming this snapshot
    summary: dict[str, str] | None = None  # Podium's review properties (author, message)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def live_rows(summary: Mapping[str, str]) -> int:
    """Rows a snapshot holds, from its summary: Iceberg's `total-records` counts every
    row of its data files, also those a position delete removed (a review edit deletes
    the old row by position and writes the new one), so the deletes are taken off."""
    records = int(summary.get("total-records", 0))
    return max(0, records - int(summary.get("total-position-deletes", 0)))


def list_snapshots(table: Table) -> list[SnapshotInfo]:
    """All snapshots of `table`, oldest first."""
    current = table.current_snapshot()
    names = refs_by_snapshot(table)
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
                total_rows=live_rows(extra),
                current=current is not None and snap.snapshot_id == current.snapshot_id,
                refs=tuple(names.get(snap.snapshot_id, ())),
                summary={k: v for k, v in extra.items() if k.startswith("podium.")} or None,
            )
        )
    return out


def resolve_snapshot(table: Table, snapshot_id: int | str | None) -> int | None:
    """The snapshot to read: the given id or tag/branch name (checked to exist), or
    the current one.

    Returns None only for a table with no snapshot at all (created empty). A name made
    of digits is taken as an id first, since Iceberg ids are numbers and refs are names.
    """
    if snapshot_id is None or snapshot_id == "":
        current = table.current_snapshot()
        return current.snapshot_id if current else None
    if isinstance(snapshot_id, str) and not snapshot_id.strip().lstrip("-").isdigit():
        ref = table.snapshot_by_name(snapshot_id.strip())
        if ref is not None:
            return ref.snapshot_id
        raise NotFound(
            f"Table {'.'.join(table.name())} has no snapshot, tag or branch {snapshot_id!r}. "
            f"Its tags and branches: {', '.join(sorted(table.refs())) or 'none'}."
        )
    sid = int(snapshot_id)
    if table.snapshot_by_id(sid) is None:
        known = ", ".join(str(s.snapshot_id) for s in list_snapshots(table)) or "none"
        raise NotFound(
            f"Table {'.'.join(table.name())} has no snapshot {sid}. Its snapshots: {known}."
        )
    return sid


def refs_by_snapshot(table: Table) -> dict[int, list[str]]:
    """Tag and branch names pointing at each snapshot (lineage and pickers show them)."""
    out: dict[int, list[str]] = {}
    for name, ref in sorted(table.refs().items()):
        out.setdefault(ref.snapshot_id, []).append(name)
    return out
