"""The Browse page's sidebar: table and snapshot, the 'malformed only' switch, the
filters on current signals, the review filter and edit branch, "Train on this", and the
column filters and SQL condition. Everything chosen here lives in the widgets' session state
(`podium.app.views.browse.state`), which the page reads back as its view."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import streamlit as st
from pyiceberg.table import Table

from podium.app import widgets
from podium.app.page_tables import PageTables
from podium.app.pages import BROWSE_IDS, BROWSE_SIGNALS, page_file
from podium.app.roles import allowed, current_user
from podium.app.rows import filters as row_filters
from podium.app.rows import snapshots as row_snapshots
from podium.app.rows import view_state as vs
from podium.app.safe_markdown import escape_markdown
from podium.app.views.browse import model as bm
from podium.app.views.browse import state as bs
from podium.config import get_settings
from podium.errors import PodiumError
from podium.review.refs import refs_of
from podium.signals import values as signal_values
from podium.store.read.query import count_by, page
from podium.store.read.snapshots import SnapshotInfo, list_snapshots
from podium.validate.report import failing_ids_in


@st.cache_data(max_entries=64, show_spinner=False)
def _counts(
    catalog_uri: str, table: str, column: str, snapshot: int | None
) -> list[tuple[Any, int]]:
    return count_by(table, column, snapshot_id=snapshot)


def sidebar(
    tables: list[str],
) -> tuple[PageTables, int | None, set[str] | None, list[SnapshotInfo]]:
    """Table, snapshot, malformed switch and filters; returns the chosen table (with the
    tables beside it, each loaded once for this draw), the snapshot, the ids the
    malformed switch keeps (None: every row) and the table's snapshots."""
    with st.sidebar:
        picked = widgets.table_picker(tables, key=bs.TABLE, on_change=bs.table_changed)
        assert picked is not None  # tables is not empty
        at_hand = PageTables(picked)
        name = at_hand.name
        snapshots = list_snapshots(at_hand.table)
        asked = st.session_state.get(bs.SNAPSHOT)
        if asked is not None and asked not in {s.snapshot_id for s in snapshots}:
            st.warning(
                f"Table {escape_markdown(name)} has no snapshot {escape_markdown(asked)}; "
                "showing the current one."
            )
        names = vs.ref_names(refs_of(at_hand.table))  # a tag made since shows at once
        sid = widgets.snapshot_picker(
            snapshots, key=bs.SNAPSHOT, on_change=bs.first_page, names=names
        )
        columns = page(name, limit=0, snapshot_id=sid).columns
        keep = _malformed_toggle(at_hand, sid) if "id" in columns else None
        if "id" in columns:
            keep = _signal_filter(at_hand, sid, keep)
            keep = _handed_ids(at_hand, keep)
            _review_sidebar(at_hand, sid, snapshots)
        else:  # a sort by a signal orders rows by id
            st.session_state[SORT] = None
        with st.expander("Filters", expanded=bool(bs.current().filters or bs.current().where)):
            _filters(name, sid, columns)
    return at_hand, sid, keep, snapshots


def _count_label(options: Mapping[str, int], value: str) -> str:
    return f"{value} ({options[value]:,})"


def _filters(name: str, snapshot: int | None, columns: list[str]) -> None:
    for column in (c for c in vs.FILTER_COLUMNS if c in columns):
        options = bm.filter_options(_counts(get_settings().catalog_uri, name, column, snapshot))
        if not options:
            continue
        chosen = st.session_state.get(bs.FILTER + column) or []
        dropped = [v for v in chosen if v not in options]
        if dropped:
            st.warning(
                f"No {column} {escape_markdown(', '.join(dropped))} in this snapshot; "
                "filter dropped."
            )
            st.session_state[bs.FILTER + column] = [v for v in chosen if v in options]
        st.multiselect(
            column.capitalize(),
            list(options),
            key=bs.FILTER + column,
            format_func=functools.partial(_count_label, options),
            on_change=bs.first_page,
        )
    st.text_input(
        "SQL condition",
        key=bs.WHERE,
        placeholder="len(messages) > 2",
        help="Any DuckDB condition over this table's columns, e.g. "
        "`source = 'synthetic' AND len(messages) > 2`.",
        on_change=bs.first_page,
    )


def _malformed_toggle(at_hand: PageTables, sid: int | None) -> set[str] | None:
    """The 'malformed only' switch, offered when a validation report covers this snapshot;
    returns the ids to keep when it is on."""
    report = at_hand.report(sid)
    if report is None:
        if st.session_state.get(bs.MALFORMED):
            st.warning(
                "No validation report covers this snapshot, so every row is shown. "
                "Validate it first (Validate page or `podium validate`)."
            )
        st.session_state[bs.MALFORMED] = False
        return None
    bad = failing_ids_in(report)
    on = st.toggle(
        f"Malformed only ({len(bad):,} rows)",
        key=bs.MALFORMED,
        on_change=bs.first_page,
        help="Rows with a failing turn in this snapshot's validation report.",
    )
    return bad if on else None


SIGNALS = BROWSE_SIGNALS


@st.cache_data(ttl=10, max_entries=64, show_spinner=False)
def signal_facets(
    catalog_uri: str, table: str, snapshot: int | None, _loaded: Table
) -> tuple[list[str], list[signal_values.Facet]]:
    # `_loaded` (not hashed) is the page's own load of `table`: one load per page run
    return signal_values.stale_notes(_loaded, snapshot), signal_values.facets(_loaded, snapshot)


SORT = "browse.signals.sort"  # "SIGNAL:desc" or "SIGNAL:asc"; None: table order


@st.cache_data(ttl=10, max_entries=64, show_spinner=False)
def _sortable(catalog_uri: str, table: str, snapshot: int | None, _loaded: Table) -> list[str]:
    return signal_values.sort_choices(_loaded, snapshot)


@st.cache_data(ttl=60, max_entries=4, show_spinner=False)
def _ordered(
    catalog_uri: str, table: str, snapshot: int | None, sort: str, _loaded: Table
) -> list[str]:
    # a few entries only: at 10M rows an order is 10M ids
    signal, _, direction = sort.partition(":")
    return signal_values.ordered_ids(_loaded, snapshot, signal, descending=direction == "desc")


def _sort_label(choice: str | None) -> str:
    if choice is None:
        return "Table order"
    signal, _, direction = choice.partition(":")
    what = signal_values.SORTABLE[signal][1]
    return f"{what}, " + ("high to low" if direction == "desc" else "low to high")


def signal_order(at_hand: PageTables, sid: int | None) -> list[str] | None:
    """The ids in the order the Signals section's sort chose (None: table order)."""
    sort = st.session_state.get(SORT)
    if not sort:
        return None
    return _ordered(get_settings().catalog_uri, at_hand.name, sid, sort, at_hand.table)


def _signal_filter(at_hand: PageTables, sid: int | None, keep: set[str] | None) -> set[str] | None:
    """Filters on the signals current for this snapshot (each with its row count), a
    sort by one, and a note naming the stale ones; returns the ids to keep."""
    uri = get_settings().catalog_uri
    stale, found = signal_facets(uri, at_hand.name, sid, at_hand.table)
    sortable = _sortable(uri, at_hand.name, sid, at_hand.table)
    sorts = [f"{s}:{d}" for s in sortable for d in ("desc", "asc")]
    if st.session_state.get(SORT) not in sorts:
        st.session_state[SORT] = None
    if not stale and not found and not sorts:
        return keep
    options = {f"{f.signal}={f.value}": f for f in found}
    chosen = [c for c in st.session_state.get(SIGNALS) or [] if c in options]
    st.session_state[SIGNALS] = chosen
    with st.expander("Signals", expanded=bool(chosen or st.session_state[SORT])):
        if sorts:
            st.selectbox(
                "Sort by",
                [None, *sorts],
                key=SORT,
                format_func=_sort_label,
                on_change=bs.first_page,
                help="Rows the signal has a value for, by that value.",
            )
        for note in stale:
            st.caption(escape_markdown(note))
        if options:
            st.multiselect(
                "Rows with",
                list(options),
                key=SIGNALS,
                format_func=lambda k: f"{options[k].label} ({options[k].rows:,})",
                on_change=bs.first_page,
                help="Rows the signals computed for this snapshot name (podium signals run).",
            )
    return signal_values.narrowed(at_hand.table, sid, [options[c] for c in chosen], keep)


def _handed_ids(at_hand: PageTables, keep: set[str] | None) -> set[str] | None:
    """`keep` narrowed to the rows another page handed over by id (the Map's selection
    of more rows than a link holds), while they are for this table, with a button that
    lets them go."""
    handed = st.session_state.get(BROWSE_IDS) or {}
    if handed.get("table") != at_hand.name:
        return keep
    ids: set[str] = handed["ids"]
    st.caption(f"Only the {len(ids):,} rows selected on the Map.")
    if st.button("Show every row again", key="browse.ids.clear", on_click=bs.first_page):
        st.session_state.pop(BROWSE_IDS, None)
        st.rerun()
    return ids if keep is None else keep & ids


_FILTER_NAMES = {
    row_filters.ALL: "All rows",
    row_filters.UNLABELLED: "Unlabelled",
    row_filters.BY_ME: "By me",
}


def _review_sidebar(at_hand: PageTables, sid: int | None, snapshots: list[SnapshotInfo]) -> None:
    """Review filter, the branch edits go to, and "Train on this"."""
    name = at_hand.name
    choices = row_filters.review_filters(at_hand.table)
    if st.session_state.get(bs.REVIEW) not in choices:
        st.session_state[bs.REVIEW] = row_filters.ALL
    st.selectbox(
        "Review filter",
        choices,
        key=bs.REVIEW,
        format_func=lambda c: _FILTER_NAMES.get(c, f"Labelled {c}"),
        on_change=bs.first_page,
    )
    user = current_user()
    branches = row_snapshots.branches(at_hand.table)
    if st.session_state.get(bs.BRANCH) not in branches:
        st.session_state[bs.BRANCH] = "main"
    if len(branches) > 1 and user.can("edit"):
        st.selectbox("Edits go to branch", branches, key=bs.BRANCH)
    names = next((s.refs for s in snapshots if s.snapshot_id == sid), ())
    ref = next((n for n in names if n != "main"), None) or sid
    if st.button(
        f"Train on this ({escape_markdown(ref)})",
        key="browse.train",
        icon=":material/model_training:",
    ):
        st.switch_page(page_file("train"), query_params=row_snapshots.train_params(name, ref))
    which = bs.review_filter()
    if which in (row_filters.ALL, row_filters.UNLABELLED, row_filters.BY_ME):
        return
    # Training on a label first writes a branch holding only those rows.
    label = escape_markdown(which)  # a label of this table: data
    if allowed(user, "edit", f"training on rows labelled {label}") and st.button(
        f"Train on rows labelled {label}", key="browse.train_label"
    ):
        try:
            made = row_snapshots.labelled_snapshot(name, which, user, sid)
        except PodiumError as exc:
            st.error(escape_markdown(str(exc)))
        else:
            st.switch_page(
                page_file("train"), query_params=row_snapshots.train_params(name, made.name)
            )
