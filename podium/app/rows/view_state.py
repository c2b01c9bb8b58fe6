"""A view of a table's rows and its URL, without Streamlit.

The URL query string is the view: `?table=demo.chat&snapshot=123&page=3&sample=abc`
reopens the same rows and the same sample, so a link can be pasted into a bug report or
built by another page (`browse_url`, or `podium.app.widgets.browse_link` inside the app).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict
from urllib.parse import urlencode

from podium.store.read.snapshots import SnapshotInfo

PAGE_SIZES = (10, 25, 50, 100)


DEFAULT_PAGE_SIZE = 25


FILTER_COLUMNS = ("split", "source", "tags")


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


def snapshot_label(info: SnapshotInfo, names: Sequence[str] = ()) -> str:
    """The one label of a snapshot in every picker: '2026-11-22 03:10:05 · 1,200 rows
    (current)', after the tags and branches that name it ('cleaned (tag) · ...'). Short
    enough for a sidebar; no raw id (a picker that takes ids shows the one typed)."""
    when = info.committed_at[:19].replace("T", " ")
    text = f"{when} · {info.total_rows:,} rows" + (" (current)" if info.current else "")
    return " · ".join([*names, text])


def ref_names(refs: Iterable[Any]) -> dict[int, list[str]]:
    """{snapshot id: ['cleaned (tag)', ...]}: the tags and branches (not main, which is
    'current') naming each snapshot, for `snapshot_label`."""
    out: dict[int, list[str]] = {}
    for ref in refs:
        if ref.name != "main":
            out.setdefault(ref.snapshot_id, []).append(f"{ref.name} ({ref.kind})")
    return out


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
