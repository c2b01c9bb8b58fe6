"""What the Browse page shows, without Streamlit: paging, row summaries, sample keys,
chart data, filter choices and notes. The view and its URL are `podium.app.rows.view_state`'s;
a row's turns are `podium.app.rows.turns`'s.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from podium.app.page_tables import PageTables
from podium.app.rows import filters as row_filters
from podium.app.rows.view_state import ViewState
from podium.identity import User
from podium.store.catalog.catalog import list_tables as list_tables
from podium.store.catalog.catalog import name_of as name_of
from podium.store.read.query import Page as Page
from podium.store.read.query import page
from podium.store.read.snapshots import SnapshotInfo

PREVIEW_CHARS = 120


ROW_KEY_PREFIX = "row-"  # sample key of a row in a table without an `id` column


def page_count(total: int, page_size: int) -> int:
    """Number of pages; an empty result still has one (empty) page."""
    return max(1, math.ceil(total / page_size))


def clamp_page(page: int, total: int, page_size: int) -> int:
    return min(max(1, page), page_count(total, page_size))


def with_page_in_range(state: ViewState, total: int) -> ViewState:
    page = clamp_page(state.page, total, state.page_size)
    return state if page == state.page else replace(state, page=page)


def row_range(offset: int, shown: int, total: int) -> str:
    """'Rows 26–50 of 1,234' for a caption."""
    if total == 0 or shown == 0:
        return f"No rows of {total:,}"
    return f"Rows {offset + 1:,}–{offset + shown:,} of {total:,}"


def is_chat(columns: Sequence[str]) -> bool:
    return "messages" in columns


def sample_key(row: Mapping[str, Any], position: int) -> str:
    """How a row is named in the URL: its id, or its position in the filtered rows
    for tables without ids."""
    if row.get("id") not in (None, ""):
        return str(row["id"])
    return f"{ROW_KEY_PREFIX}{position}"


def row_position(key: str, has_ids: bool) -> int | None:
    """The position a `row-N` key names, or None when the key is an id."""
    if has_ids or not key.startswith(ROW_KEY_PREFIX):
        return None
    try:
        position = int(key.removeprefix(ROW_KEY_PREFIX))
    except ValueError:
        return None
    return position if position >= 0 else None


def preview(text: str | None, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _first(messages: Sequence[Mapping[str, Any]], role: str) -> str | None:
    for m in messages:
        if m and m.get("role") == role:
            return m.get("content")
    return None


def _last_of(messages: Sequence[Mapping[str, Any]], role: str) -> str | None:
    return _first(list(reversed(messages)), role)


def _cell(value: Any) -> Any:
    """A value st.dataframe can draw: nested data becomes JSON text."""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return value


def summarize_rows(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str]
) -> list[dict[str, Any]]:
    """One short line per row for the results grid.

    Chat rows show the first prompt and the last answer rather than the raw message
    list, which is unreadable in a grid cell.
    """
    if not is_chat(columns):
        return [{c: _cell(row.get(c)) for c in columns} for row in rows]
    out = []
    for row in rows:
        messages = row.get("messages") or []
        line: dict[str, Any] = {"id": row.get("id"), "turns": len(messages)}
        line["prompt"] = preview(_first(messages, "user"))
        line["answer"] = preview(_last_of(messages, "assistant"))
        for column in ("source", "split"):
            if column in columns:
                line[column] = row.get(column)
        if "tags" in columns:
            line["tags"] = ", ".join(row.get("tags") or [])
        out.append(line)
    return out


# Grid widths for a chat table's summary columns: the answer is what a reviewer reads,
# so it gets the room (Streamlit's "large"); ids and counts stay narrow.
Width = Literal["small", "medium", "large"]
_GRID_WIDTHS: dict[str, Width] = {"id": "small", "turns": "small", "review": "small",
    "prompt": "medium", "answer": "large", "source": "small", "split": "small"}  # fmt: skip


def grid_widths(columns: Sequence[str]) -> dict[str, Width]:
    """The grid's width for each known summary column among `columns`."""
    return {c: _GRID_WIDTHS[c] for c in columns if c in _GRID_WIDTHS}


def sample_choice_label(row: Mapping[str, Any], key: str, columns: Sequence[str]) -> str:
    """'abc123 — What is the capital…' for the sample picker."""
    if is_chat(columns):
        text = _first(row.get("messages") or [], "user")
    else:
        text = next((v for v in row.values() if isinstance(v, str) and v != key), None)
    return f"{key} — {preview(text, 60)}" if text else key


def detail_fields(row: Mapping[str, Any], columns: Sequence[str]) -> list[tuple[str, Any]]:
    """The fields shown beside a sample: everything but the conversation itself, with
    the `metadata` JSON string parsed so it reads as a structure."""
    # In a chat row the conversation and the id are already on screen.
    shown = (
        [c for c in columns if c not in ("id", "messages", "system")]
        if is_chat(columns)
        else list(columns)
    )
    out = []
    for column in shown:
        value = row.get(column)
        if column == "metadata" and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass  # shown as the raw string it is
        out.append((column, value))
    return out


def _span(first: int, last: int) -> str:
    return f"{first:,}" if first == last else f"{first:,}–{last:,}"


def length_histogram(values: Sequence[int], bins: int = 30) -> list[dict[str, Any]]:
    """Counts of samples per character-length bin, computed here so the chart carries
    `bins` points instead of one per row (a million-row table stays a small chart)."""
    if len(values) == 0:
        return []
    data = np.asarray(values, dtype=np.int64)
    low, high = int(data.min()), int(data.max())
    # Whole-number bin edges, so a label like "40–59" means exactly those lengths.
    width = max(1, math.ceil((high - low + 1) / bins))
    counts = np.bincount((data - low) // width)
    return [
        {
            "from": low + i * width,
            "to": low + (i + 1) * width - 1,
            "label": _span(low + i * width, low + (i + 1) * width - 1),
            "samples": int(count),
        }
        for i, count in enumerate(counts)
    ]


def filter_options(counts: Sequence[tuple[Any, int]]) -> dict[str, int]:
    """{value: rows} for a filter's choices; null values are not offered."""
    return {str(value): n for value, n in counts if value is not None}


_COUNTED = re.compile(r"^(.*) \(\d[\d,]*\)$")


def sample_of(value: str | None) -> str | None:
    """The sample key a picker value stands for. Streamlit's selectbox hands back the
    shown label ('chat-00000 — How do I reverse…') when its options changed under it;
    that label must never become the view's sample (nor the URL's)."""
    if not value:
        return None
    return value.split(" — ", 1)[0]


def filter_values(values: Sequence[str], known: Collection[str] = ()) -> tuple[str, ...]:
    """Filter values without a picker's count label ('train (1,200)' -> 'train'), the
    same way: a URL holds values, never labels."""
    out = []
    for v in values:
        counted = _COUNTED.match(v)
        out.append(counted.group(1) if counted and v not in known else v)
    return tuple(dict.fromkeys(out))


def grid_state(keys: Sequence[str], sample: str | None) -> tuple[str, list[int]]:
    """(a key for the rows grid, the rows it ticks): a new key whenever the rows or the
    open sample change, so the grid never keeps a tick from other rows (a search moved
    chat-00001 under the tick while chat-00000 stayed open) and ticks the open one."""
    rows = [keys.index(sample)] if sample in keys else []
    token = abs(hash((tuple(keys), sample))) % 10**12
    return f"browse.grid.{token}", rows


@dataclass(frozen=True)
class ActiveFilter:
    name: str  # what clearing it resets: "search", "where", "malformed", or a column
    text: str  # what the chip says


def active_filters(view: ViewState) -> list[ActiveFilter]:
    """Every filter narrowing the rows, as chips the page shows above them (each one can
    be cleared there); a filter set by a link (Validate's 'malformed only') included."""
    out = []
    if view.malformed_only:
        out.append(ActiveFilter("malformed", "Malformed only"))
    if view.search:
        out.append(ActiveFilter("search", f"Search: {view.search}"))
    for column, values in view.filters.items():
        if values:
            out.append(ActiveFilter(column, f"{column.capitalize()}: {', '.join(values)}"))
    if view.where:
        out.append(ActiveFilter("where", f"Where: {view.where}"))
    return out


def older_snapshot_note(snapshots: Sequence[SnapshotInfo], sid: int | None) -> str | None:
    """A banner when the page shows a snapshot other than the current one."""
    current = next((s for s in snapshots if s.current), None)
    shown = next((s for s in snapshots if s.snapshot_id == sid), None)
    if current is None or shown is None or shown.snapshot_id == current.snapshot_id:
        return None
    when = shown.committed_at[:16].replace("T", " ")
    return (
        f"Showing an older snapshot ({sid}, {when} UTC, {shown.total_rows:,} rows), not "
        f"the current one ({current.snapshot_id}, {current.total_rows:,} rows)."
    )


# ---- the rows the page reads ----


def read_sample(name: str, view: ViewState, columns: list[str], sid: int | None) -> Page:
    """The open sample: by id, or in a table without ids the n-th row of the same filters."""
    position = row_position(view.sample or "", "id" in columns)
    if position is not None:
        return page(name, offset=position, limit=1, snapshot_id=sid, **view.row_filter())
    return page(name, ids=[view.sample or ""], limit=1, snapshot_id=sid)


def rows_of(
    tables: PageTables,
    view: ViewState,
    sid: int | None,
    keep: set[str] | None,
    which: str,
    user: User,
    order: Sequence[str] | None = None,
) -> Page:
    """The page of rows the view shows under review filter `which` (counted), in table
    order or, given `order` (ids by a signal's value), in that order: then only the rows
    `order` names (a sort by cluster size shows the rows in a cluster)."""
    offset, limit = view.offset, view.page_size
    if order is not None:
        wanted = set(order) if keep is None else keep.intersection(order)
        kept = set(
            row_filters.filter_ids(
                tables, which, user, keep=wanted, snapshot_id=sid, **view.row_filter()
            )
        )
        ids = [i for i in order if i in kept]
        chosen = ids[offset : offset + limit]
        found = page(tables.name, ids=chosen, limit=len(chosen), snapshot_id=sid, count=False)
        by_id = {str(r.get("id")): r for r in found.rows}
        rows = [by_id[i] for i in chosen if i in by_id]
        return Page(rows, len(ids), offset, limit, found.snapshot_id, found.columns)
    if which != row_filters.ALL:
        return row_filters.review_page(
            tables,
            which,
            user,
            offset=offset,
            limit=limit,
            keep=keep,
            snapshot_id=sid,
            **view.row_filter(),
        )
    return page(
        tables.name, offset=offset, limit=limit, ids=keep, snapshot_id=sid, **view.row_filter()
    )
