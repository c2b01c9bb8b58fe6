"""A row's history, and the removals (a turn, a whole row) asked about before anything
is written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from podium.app.page_tables import PageTables
from podium.app.rows.filters import annotations_at
from podium.config import get_settings
from podium.errors import InvalidInput
from podium.review.history import history_of
from podium.store.read.kept import Kept

# A row's history by the metadata files of its table and annotations table: either
# changes only with a commit, which names a new metadata file, so every session and rerun
# with the row open shares one read until the next edit or label.
_histories: Kept[tuple[str, str, str | None, str], list[dict[str, Any]]] = Kept(256)


def history_rows(tables: PageTables, row_id: str) -> list[dict[str, Any]]:
    """A row's changes and annotations, oldest first, as table rows (when, what, who)."""
    notes = tables.notes
    key = (
        get_settings().catalog_uri,
        tables.table.metadata_location,
        notes.metadata_location if notes is not None else None,
        row_id,
    )
    rows = _histories.get(key, lambda: _history_rows(tables, row_id))
    return [dict(r) for r in rows]  # a caller's change never reaches the kept rows


def _history_rows(tables: PageTables, row_id: str) -> list[dict[str, Any]]:
    index = annotations_at(tables.notes)  # shared with the pages' labels
    return [
        {
            "when": e["at"][:19].replace("T", " "),
            "what": e["kind"],
            "author": e["author"],
            "detail": e["detail"],
            "snapshot": str(e["snapshot_id"] or ""),
        }
        for e in history_of(tables.table, index.of(row_id), row_id)
    ]


def delete_question(row_id: str) -> str:
    """What "Delete row" asks before it removes anything."""
    return (
        f"Delete row {row_id}? The next snapshot will not hold it; older snapshots and "
        "its history keep it."
    )


@dataclass(frozen=True)
class Removal:
    """A removal the page asks about before doing it: one turn of a row, or the row."""

    row_id: str
    turn: int | None  # None: the whole row
    why: str
    question: str  # names what goes, so the answer is about this turn or row
    yes: str  # the confirming button's label


def removal(row: Mapping[str, Any], turn: int | None, why: str) -> Removal:
    """What "Remove turn" (`turn`) or "Delete row" (`turn` None) will remove, to ask
    before anything is written. The reason is checked first: a removal without one
    would be refused after the confirmation, which then asked for nothing."""
    row_id = str(row["id"])
    if not why.strip():
        what = "the row" if turn is None else f"turn {turn}"
        raise InvalidInput(f"Say why before removing {what}: the reason is kept in the snapshot.")
    if turn is None:
        return Removal(row_id, None, why.strip(), delete_question(row_id), f"Yes, delete {row_id}")
    messages = list(row.get("messages") or [])
    if not 0 <= turn < len(messages):
        raise InvalidInput(f"Row {row_id} has no turn {turn}; it has {len(messages)}.")
    role = messages[turn].get("role") or "no role"
    content = str(messages[turn].get("content") or "")
    start = " ".join(content.split())
    start = start if len(start) <= 60 else start[:59] + "…"
    question = (
        f"Remove turn {turn} ({role}) of row {row_id}? It reads: “{start}”. The next "
        "snapshot will not hold it; older snapshots and the row's history keep it."
    )
    return Removal(row_id, turn, why.strip(), question, f"Yes, remove turn {turn}")
