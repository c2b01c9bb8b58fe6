"""Acting on a signal: its rows handed to the review changes that exist. Computing a
signal never changes the table; an action is one merge-on-read snapshot with author and
reason (`podium.review.changes.commit_change`), previewed with its count first, and
undone by time travel like any edit."""

from __future__ import annotations

from typing import Any

from podium.review.changes import Change, commit_change
from podium.signals.registry import signal_kind
from podium.signals.values import REMOVES, ids_to_remove
from podium.store.catalog.catalog import full_name, load_table, name_of
from podium.store.read.snapshots import resolve_snapshot
from podium.store.state.users import acting_user


def remove_by_signal(
    table: str, signal: str, *, why: str | None = None, preview: bool = False
) -> dict[str, Any]:
    """Remove the rows the current `signal` names (near-dup, exact-dup: all but each
    cluster's canonical row): one snapshot, or only the count with `preview`."""
    name = signal_kind(signal).name
    loaded = load_table(full_name(table))
    sid = resolve_snapshot(loaded, None)
    ids = ids_to_remove(loaded, sid, name)
    message = why or f"signals: remove {REMOVES[name][1]} ({name} of snapshot {sid})"
    result: dict[str, Any] = {
        "table": name_of(loaded),
        "signal": name,
        "rows": len(ids),
        "message": message,
        "snapshot_id": None,
        "parent_id": sid,
    }
    if preview or not ids:
        return result
    committed = commit_change(
        loaded, Change(deletes=frozenset(ids), message=message), acting_user(), base=sid
    )
    result["snapshot_id"] = committed.snapshot_id
    result["parent_id"] = committed.parent_id
    return result
