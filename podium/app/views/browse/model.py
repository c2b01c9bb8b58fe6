"""What the Browse page shows, without Streamlit: view state <-> URL, paging, row
summaries, sample keys, snapshot labels and chart data.

The URL query string is the view: `?table=demo.chat&snapshot=123&page=3&sample=abc`
reopens the same rows and the same sample, so a link can be pasted into a bug report or
built by another page (`browse_url`, or `podium.app.widgets.browse_link` inside the app).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict
from urllib.parse import urlencode

import numpy as np

from podium.app.safe_markdown import code_span, escape_markdown
from podium.store.read.snapshots import SnapshotInfo
from podium.validate.failure_text import message_position, position_text

PAGE_SIZES = (10, 25, 50, 100)
DEFAULT_PAGE_SIZE = 25
FILTER_COLUMNS = ("split", "source", "tags")
PREVIEW_CHARS = 120
ROW_KEY_PREFIX = "row-"  # sample key of a row in a table without an `id` column

QueryParams = Mapping[str, str | Sequence[str]]


class RowFilter(TypedDict):
    """A view's search, condition and column filters as the store's readers take them."""

    search: str | None
    where: str | None
    filters: dict[str, tuple[str, ...]] | None


@dataclass(frozen=True)
class ViewState:
    """Everything that decides what the Browse page shows."""

    table: str | None = None
    snapshot: int | None = None
    page: int = 1  # 1-based, as people count pages
    page_size: int = DEFAULT_PAGE_SIZE
    search: str = ""
    where: str = ""
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    sample: str | None = None
    malformed_only: bool = False

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.page_size

    def row_filter(self) -> RowFilter:
        """Keyword arguments for `page`, `review_page` and `filter_ids` (blank: none)."""
        return RowFilter(
            search=self.search or None, where=self.where or None, filters=dict(self.filters) or None
        )

    def for_table(self, table: str) -> ViewState:
        """The view after switching to another table: same search, everything else reset."""
        return ViewState(table=table, page_size=self.page_size, search=self.search)


def _last(value: str | Sequence[str] | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return value[-1] if value else None


def _all(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    return tuple(v for v in value if v)


def parse_query(params: QueryParams) -> tuple[ViewState, list[str]]:
    """The view a URL asks for, and a note for every part that could not be used.

    A hand-edited link must never break the page: unusable parts fall back to defaults
    and are reported.
    """
    problems: list[str] = []

    def positive_int(key: str, default: int) -> int:
        raw = _last(params.get(key))
        if raw in (None, ""):
            return default
        try:
            value = int(raw)
        except ValueError:
            problems.append(f"Ignored {key}={raw!r} from the link: not a whole number.")
            return default
        if value < 1:
            problems.append(f"Ignored {key}={raw!r} from the link: must be 1 or more.")
            return default
        return value

    snapshot: int | None = None
    raw_snapshot = _last(params.get("snapshot"))
    if raw_snapshot:
        try:
            snapshot = int(raw_snapshot)
        except ValueError:
            problems.append(f"Ignored snapshot={raw_snapshot!r} from the link: not a snapshot id.")
    page_size = positive_int("size", DEFAULT_PAGE_SIZE)
    if page_size not in PAGE_SIZES:
        problems.append(
            f"Page size {page_size} is not offered; showing {DEFAULT_PAGE_SIZE} rows a page."
        )
        page_size = DEFAULT_PAGE_SIZE
    filters = {c: _all(params.get(c)) for c in FILTER_COLUMNS if _all(params.get(c))}
    state = ViewState(
        table=_last(params.get("table")) or None,
        snapshot=snapshot,
        page=positive_int("page", 1),
        page_size=page_size,
        search=_last(params.get("search")) or "",
        where=_last(params.get("where")) or "",
        filters=filters,
        sample=_last(params.get("sample")) or None,
        malformed_only=(_last(params.get("malformed")) or "") in ("1", "true", "yes"),
    )
    return state, problems


def to_query(state: ViewState) -> dict[str, list[str]]:
    """The query string for `state`, defaults left out so links stay short."""
    out: dict[str, list[str]] = {}
    if state.table:
        out["table"] = [state.table]
    if state.snapshot is not None:
        out["snapshot"] = [str(state.snapshot)]
    if state.page != 1:
        out["page"] = [str(state.page)]
    if state.page_size != DEFAULT_PAGE_SIZE:
        out["size"] = [str(state.page_size)]
    if state.search:
        out["search"] = [state.search]
    if state.where:
        out["where"] = [state.where]
    for column in FILTER_COLUMNS:
        if state.filters.get(column):
            out[column] = list(state.filters[column])
    if state.malformed_only:
        out["malformed"] = ["1"]
    if state.sample:
        out["sample"] = [state.sample]
    return out


def browse_url(
    table: str, *, snapshot: int | None = None, sample: str | None = None, search: str = ""
) -> str:
    """A plain-text link to the Browse page, e.g. `/browse?table=demo.chat&sample=abc`.

    Every page has its own URL path (Home is the default page; see podium/app/pages.py).
    Inside the app prefer `podium.app.widgets.browse_link`, which goes through
    st.page_link.
    """
    query = to_query(ViewState(table=table, snapshot=snapshot, sample=sample, search=search))
    return "/browse?" + urlencode(query, doseq=True)


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


def sample_choice_label(row: Mapping[str, Any], key: str, columns: Sequence[str]) -> str:
    """'abc123 — What is the capital…' for the sample picker."""
    if is_chat(columns):
        text = _first(row.get("messages") or [], "user")
    else:
        text = next((v for v in row.values() if isinstance(v, str) and v != key), None)
    return f"{key} — {preview(text, 60)}" if text else key


@dataclass(frozen=True)
class Turn:
    role: str
    content: str | None


def conversation(row: Mapping[str, Any]) -> list[Turn]:
    """The turns to show for a chat row; a `system` column counts as the first turn."""
    messages = row.get("messages") or []
    turns = [Turn(str(m.get("role") or "unknown"), m.get("content")) for m in messages if m]
    system = row.get("system")
    if system and not (turns and turns[0].role == "system" and turns[0].content == system):
        turns.insert(0, Turn("system", system))
    return turns


def system_turn(row: Mapping[str, Any]) -> Turn | None:
    """The row's `system` column as a turn to show above its messages (Browse and the
    Review queue alike); None when it is empty or the messages already hold a system turn."""
    system = row.get("system")
    if not system or any((m or {}).get("role") == "system" for m in row.get("messages") or []):
        return None
    return Turn("system", str(system))


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


def snapshot_label(info: SnapshotInfo) -> str:
    """'2026-11-22 03:10:05 · 1,200 rows (current)': short enough for a sidebar; the id
    is shown beside the picker."""
    when = info.committed_at[:19].replace("T", " ")
    text = f"{when} · {info.total_rows:,} rows"
    return text + (" (current)" if info.current else "")


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


def stats_filters_key(state: ViewState) -> str:
    """The view's search and filters as one hashable string, so statistics cached per
    view follow the active filters."""
    return json.dumps(
        {
            "search": state.search or None,
            "where": state.where or None,
            "filters": {c: list(v) for c, v in sorted(state.filters.items())} or None,
        },
        sort_keys=True,
    )


def stats_filters(key: str) -> dict[str, Any]:
    """Keyword arguments for `podium.store.read.stats.table_stats` from `stats_filters_key`."""
    return dict(json.loads(key))


# ---- what a picker returns, the grid's tick, the filters on show, an older snapshot ----

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


# ---- long conversations: turns drawn a page at a time ----

TURNS_PER_PAGE = 50  # a row of 100,000 turns must not freeze the reviewer's tab


@dataclass(frozen=True)
class TurnPage:
    """Which turns of a conversation to draw: messages[start:stop] on page `page` of
    `pages` (1-based)."""

    start: int
    stop: int
    page: int
    pages: int
    total: int

    @property
    def caption(self) -> str:
        return f"Turns {self.start + 1:,}-{self.stop:,} of {self.total:,}"


def turn_page(total: int, page: int | None, per_page: int = TURNS_PER_PAGE) -> TurnPage:
    """The turns to draw for `page` (clamped into range; 1 when not given)."""
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, page or 1), pages)
    start = (page - 1) * per_page
    return TurnPage(start, min(total, start + per_page), page, pages, total)


def turn_page_of(turn: int, per_page: int = TURNS_PER_PAGE) -> int:
    """The page that holds 0-based `turn` (to open a validation failure's turn)."""
    return turn // per_page + 1


def failure_lines(failures: Sequence[Mapping[str, Any]], messages: list[Any]) -> list[str]:
    """One Markdown line per failure of a row, at the position Validate shows; its role,
    rule, kind and message come from data (a message quotes the row) and read as text."""
    lines = []
    for f in failures:
        where = position_text(message_position(dict(f), messages))
        lines.append(
            f"- turn {f['turn']} ({escape_markdown(f['role'])}) · {code_span(f['rule'])} · "
            f"{escape_markdown(f['kind'])}: {escape_markdown(f['message'])}"
            + ("" if where == "no position" else f" ({where})")
        )
    return lines
