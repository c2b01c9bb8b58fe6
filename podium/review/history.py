"""A row's history: every snapshot that changed it and every annotation on it, by whom."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from pyiceberg.table import Table

from podium.review.annotations import Annotation
from podium.review.annotations import history as annotation_history
from podium.review.changes import ACTION, AUTHOR, MESSAGE, touched_rows


def row_history(table: Table, notes: Table | None, row_id: str) -> list[dict[str, Any]]:
    """Changes (from `table`'s snapshot summaries) and annotations (in `notes`, its
    annotations table, if any) of `row_id`, oldest first."""
    return history_of(table, annotation_history(notes, row_id), row_id)


def history_of(
    table: Table, annotations: Sequence[Annotation], row_id: str
) -> list[dict[str, Any]]:
    """`row_history` with `row_id`'s annotations already read (the app reads every row's
    at once per snapshot of the annotations table: `annotations.histories`)."""
    events: list[dict[str, Any]] = []
    for snap in table.snapshots():
        props = snap.summary.additional_properties if snap.summary else {}
        if AUTHOR not in props:
            continue
        touched = touched_rows(props)
        if touched is not None and row_id not in touched:
            continue
        # Whole-table writes (an import, a job's output) carry an author but no review
        # action: they show as the Iceberg operation that created or replaced the row.
        action = props.get(ACTION)
        operation = snap.summary.operation.value if snap.summary else "write"
        events.append(
            {
                "at": datetime.fromtimestamp(snap.timestamp_ms / 1000, UTC).isoformat(
                    timespec="seconds"
                ),
                "kind": action or operation,
                "author": props[AUTHOR],
                "detail": props.get(MESSAGE, "" if action else "whole-table write"),
                "snapshot_id": snap.snapshot_id,
            }
        )
    for note in annotations:
        parts = [
            f"label {note.label}" if note.label else "",
            f"tags {', '.join(note.tags)}" if note.tags else "",
            f"rating {note.rating}" if note.rating else "",
            f"note {note.note!r}" if note.note else "",
        ]
        events.append(
            {
                "at": note.at,
                "kind": "annotation",
                "author": note.author,
                "detail": "; ".join(p for p in parts if p),
                "snapshot_id": note.snapshot_id,
            }
        )
    return sorted(events, key=lambda e: e["at"])
