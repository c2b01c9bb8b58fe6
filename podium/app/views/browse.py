"""Browse page: pick a table and snapshot, page through rows, search and filter them,
read one sample as a conversation, and see the table's statistics.

Review acts here too: each row shows its annotations and the review filter keeps
unlabelled rows, a label's rows or mine; the open sample can be labelled, rated, noted,
edited (a message, a turn, the whole row), and shows its history; bulk actions work on
every row of the current filter after a confirmation with the count. Every edit is one
snapshot; "Train on this" opens the Train page on this snapshot, tag or label.

The URL holds the view (see `podium.app.browse_model`): it is read when it changes
(a pasted link, another page's link) and rewritten after every change here.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from podium.app import browse_model as bm
from podium.app import browse_panels, widgets
from podium.app import review_model as rm
from podium.app.pages import page_file
from podium.config import get_settings
from podium.errors import PodiumError
from podium.store.catalog import list_tables, load_table
from podium.store.query import Page, count_by, page
from podium.store.snapshots import list_snapshots
from podium.validate.report import malformed_ids, report_for

# Session-state keys. The widget keys hold the view; the others are this page's memory.
TABLE, SNAPSHOT, PAGE, SIZE = "browse.table", "browse.snapshot", "browse.page", "browse.size"
SEARCH, WHERE, SAMPLE = "browse.search", "browse.where", "browse.sample"
MALFORMED, MODE, GRID = "browse.malformed", "browse.mode", "browse.grid"
FILTER = "browse.filter."  # + column
ROW_KEYS = "browse.row_keys"  # sample keys of the grid's rows, for its selection callback
LAST_URL = "browse.last_url"  # the query string this page wrote last
SAVED = "browse.saved_view"  # the view to come back to after visiting another page
REVIEW, BRANCH = "browse.review", "browse.branch"  # review filter; branch edits go to


def _url() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params.keys()}


def _seed(view: bm.ViewState) -> None:
    ss = st.session_state
    ss[TABLE], ss[SNAPSHOT], ss[SAMPLE] = view.table, view.snapshot, view.sample
    ss[PAGE], ss[SIZE] = view.page, view.page_size
    ss[SEARCH], ss[WHERE], ss[MALFORMED] = view.search, view.where, view.malformed_only
    for column in bm.FILTER_COLUMNS:
        ss[FILTER + column] = list(view.filters.get(column, ()))


def _current() -> bm.ViewState:
    ss = st.session_state
    return bm.ViewState(
        table=ss.get(TABLE),
        snapshot=ss.get(SNAPSHOT),
        page=int(ss.get(PAGE) or 1),
        page_size=int(ss.get(SIZE) or bm.DEFAULT_PAGE_SIZE),
        search=ss.get(SEARCH) or "",
        where=ss.get(WHERE) or "",
        filters={c: tuple(ss[FILTER + c]) for c in bm.FILTER_COLUMNS if ss.get(FILTER + c)},
        sample=ss.get(SAMPLE),
        malformed_only=bool(ss.get(MALFORMED)),
    )


def _first_page() -> None:
    st.session_state[PAGE] = 1


def _table_changed() -> None:
    _seed(_current().for_table(st.session_state[TABLE]))


def _grid_selected() -> None:
    rows = st.session_state[GRID].selection.rows
    keys = st.session_state.get(ROW_KEYS) or []
    if rows and rows[0] < len(keys):
        st.session_state[SAMPLE] = keys[rows[0]]


@st.cache_data(max_entries=64, show_spinner=False)
def _counts(catalog_uri: str, table: str, column: str, snapshot: int | None) -> list:
    return count_by(table, column, snapshot_id=snapshot)


def _sync_from_url(tables: list[str]) -> None:
    """Seed the widgets from the URL when it changed outside this page's control.

    A run that follows a change made here (a widget moved since the last run) keeps it:
    the URL it comes with may predate the one the last run wrote, because the browser
    applies a rewritten URL only when that message arrives; the view is written back to
    the URL at the end of the run. A new URL with the widgets as they were (a link, the
    back button) is followed."""
    url = _url()
    ss = st.session_state
    changed_here = SAVED in ss and _current() != ss[SAVED]
    if TABLE in ss and (url == ss.get(LAST_URL) or changed_here):
        return
    asked = (url.get("snapshot") or [""])[-1]
    if asked and not asked.lstrip("-").isdigit() and url.get("table"):
        try:  # a tag or branch name in a link: the snapshot it names now
            url = {**url, "snapshot": [str(rm.resolve(url["table"][-1], asked))]}
        except PodiumError as exc:
            st.warning(str(exc))
            url = {k: v for k, v in url.items() if k != "snapshot"}
    if url or SAVED not in st.session_state:
        view, problems = bm.parse_query(url)
    else:
        view, problems = st.session_state[SAVED], []
    if view.table and view.table not in tables:
        problems.append(f"No table named {view.table}; showing {tables[0]} instead.")
        view = bm.ViewState(table=tables[0])
    _seed(view)
    for problem in problems:
        st.warning(problem)


def _write_url(view: bm.ViewState) -> None:
    st.session_state[SAVED] = view
    wanted = bm.to_query(view)
    if wanted != _url():
        st.query_params.from_dict(wanted)
    st.session_state[LAST_URL] = wanted


def _filters_sidebar(name: str, snapshot: int | None, columns: list[str]) -> None:
    for column in (c for c in bm.FILTER_COLUMNS if c in columns):
        options = bm.filter_options(_counts(get_settings().catalog_uri, name, column, snapshot))
        if not options:
            continue
        chosen = st.session_state.get(FILTER + column) or []
        dropped = [v for v in chosen if v not in options]
        if dropped:
            st.warning(f"No {column} {', '.join(dropped)} in this snapshot; filter dropped.")
            st.session_state[FILTER + column] = [v for v in chosen if v in options]
        st.multiselect(
            column.capitalize(),
            list(options),
            key=FILTER + column,
            format_func=lambda v, o=options: f"{v} ({o[v]:,})",
            on_change=_first_page,
        )
    st.text_input(
        "SQL condition",
        key=WHERE,
        placeholder="len(messages) > 2",
        help="Any DuckDB condition over this table's columns, e.g. "
        "`source = 'synthetic' AND len(messages) > 2`.",
        on_change=_first_page,
    )


def _malformed_toggle(name: str, sid: int | None) -> set[str] | None:
    """The 'malformed only' switch, offered when a validation report covers this snapshot;
    returns the ids to keep when it is on."""
    bad = malformed_ids(name, sid)
    if bad is None:
        if st.session_state.get(MALFORMED):
            st.warning(
                "No validation report covers this snapshot, so every row is shown. "
                "Validate it first (Validate page or `podium validate`)."
            )
        st.session_state[MALFORMED] = False
        return None
    on = st.toggle(
        f"Malformed only ({len(bad):,} rows)",
        key=MALFORMED,
        on_change=_first_page,
        help="Rows with a failing turn in this snapshot's validation report.",
    )
    return bad if on else None


def _read_sample(name: str, view: bm.ViewState, columns: list[str], sid: int | None) -> Page:
    position = bm.row_position(view.sample or "", "id" in columns)
    if position is not None:  # tables without ids: the n-th row of the same filters
        return page(
            name,
            offset=position,
            limit=1,
            search=view.search or None,
            where=view.where or None,
            filters=dict(view.filters) or None,
            snapshot_id=sid,
        )
    return page(name, ids=[view.sample or ""], limit=1, snapshot_id=sid)


def _sample_panel(name: str, view: bm.ViewState, columns: list[str], sid: int | None) -> None:
    found = _read_sample(name, view, columns, sid)
    if not found.rows:
        st.warning(f"No sample {view.sample} in {name} at snapshot {sid}.")
        return
    row = found.rows[0]
    st.subheader(f"Sample {view.sample}")
    if not bm.is_chat(found.columns):
        widgets.render_fields(bm.detail_fields(row, found.columns))
        return
    row_id = str(row.get("id"))
    browse_panels.failures_panel(name, sid, row_id)
    if row.get("system") and not any(m.get("role") == "system" for m in row["messages"] or []):
        widgets.render_conversation([bm.Turn("system", row["system"])])
    browse_panels.review_conversation(
        row.get("messages") or [],
        key=f"browse.turns.{row_id}",
        search=[view.search] if view.search else [],
        errors=browse_panels.error_locations(name, sid, row_id),
    )
    if "id" not in found.columns or row.get("id") is None:
        return
    key = f"browse.row.{row_id}.{sid}"
    annotate_tab, edit_tab, history_tab, fields_tab = st.tabs(
        ["Annotate", "Edit", "History", "Fields"]
    )
    with annotate_tab:
        browse_panels.annotate_panel(name, row_id, sid, key)
    with edit_tab:
        branch = st.session_state.get(BRANCH) or "main"
        browse_panels.edit_panel(name, row, sid, key, branch)
    with history_tab:
        browse_panels.history_panel(name, row_id)
    with fields_tab:
        widgets.render_fields(bm.detail_fields(row, found.columns))


def _rows_view(name: str, view: bm.ViewState, result: Page) -> None:
    grid_col, sample_col = st.columns([3, 2], gap="medium")
    keys = [bm.sample_key(r, view.offset + i) for i, r in enumerate(result.rows)]
    st.session_state[ROW_KEYS] = keys
    summary = bm.summarize_rows(result.rows, result.columns)
    if "id" in result.columns:
        notes = rm.annotations_by_row(name, [str(r.get("id")) for r in result.rows])
        # The review column goes right after the id, where a reviewer's eye starts.
        summary = [
            {
                "id": line.pop("id", None),
                "review": rm.annotation_text(notes.get(str(r.get("id")), [])),
                **line,
            }
            for line, r in zip(summary, result.rows, strict=True)
        ]
    with grid_col:
        st.caption(bm.row_range(result.offset, len(result.rows), result.total))
        if result.rows:
            st.dataframe(
                pd.DataFrame(summary),
                hide_index=True,
                key=GRID,
                on_select=_grid_selected,
                selection_mode="single-row",
            )
        elif view.search or view.where or view.filters or view.malformed_only:
            st.info("No rows match. Clear the search or filters to see more.")
        else:
            st.info("This snapshot has no rows.")
    with sample_col:
        labels = {
            k: bm.sample_choice_label(r, k, result.columns)
            for k, r in zip(keys, result.rows, strict=True)
        }
        if view.sample and view.sample not in labels:
            labels = {view.sample: view.sample, **labels}
        st.selectbox(
            "Open sample",
            [None, *labels],
            key=SAMPLE,
            format_func=lambda k: "Choose a row…" if k is None else labels[k],
            help="Or click a row in the table.",
        )
    if view.sample:  # the conversation gets the page's full width
        _sample_panel(name, view, result.columns, result.snapshot_id)


def _sidebar(tables: list[str]) -> tuple[str, int | None, list[str], set[str] | None]:
    """Table, snapshot, malformed switch and filters; returns what the query needs."""
    with st.sidebar:
        name = widgets.table_picker(tables, key=TABLE, on_change=_table_changed)
        assert name is not None  # tables is not empty
        snapshots = list_snapshots(load_table(name))
        asked = st.session_state.get(SNAPSHOT)
        if asked is not None and asked not in {s.snapshot_id for s in snapshots}:
            st.warning(f"Table {name} has no snapshot {asked}; showing the current one.")
        sid = widgets.snapshot_picker(snapshots, key=SNAPSHOT, on_change=_first_page)
        columns = page(name, limit=0, snapshot_id=sid).columns
        keep = _malformed_toggle(name, sid) if "id" in columns else None
        if "id" in columns:
            _review_sidebar(name, sid, snapshots)
        with st.expander("Filters", expanded=bool(_current().filters or _current().where)):
            _filters_sidebar(name, sid, columns)
    return name, sid, columns, keep


def _review_sidebar(name: str, sid: int | None, snapshots: list) -> None:
    """Review filter, the branch edits go to, and "Train on this"."""
    choices = rm.review_filters(name)
    if st.session_state.get(REVIEW) not in choices:
        st.session_state[REVIEW] = rm.ALL
    st.selectbox(
        "Review filter",
        choices,
        key=REVIEW,
        format_func=lambda c: {
            rm.ALL: "All rows",
            rm.UNLABELLED: "Unlabelled",
            rm.BY_ME: "By me",
        }.get(c, f"Labelled {c}"),
        on_change=_first_page,
    )
    branches = rm.branches(name)
    if st.session_state.get(BRANCH) not in branches:
        st.session_state[BRANCH] = "main"
    if len(branches) > 1:
        st.selectbox("Edits go to branch", branches, key=BRANCH)
    names = next((s.refs for s in snapshots if s.snapshot_id == sid), ())
    ref = next((n for n in names if n != "main"), None) or sid
    if st.button(f"Train on this ({ref})", key="browse.train", icon=":material/model_training:"):
        st.switch_page(page_file("train"), query_params=rm.train_params(name, ref))
    which = st.session_state.get(REVIEW)
    if which not in (rm.ALL, rm.UNLABELLED, rm.BY_ME) and st.button(
        f"Train on rows labelled {which}", key="browse.train_label"
    ):
        try:
            made = rm.labelled_snapshot(name, which, rm.current_user(), sid)
        except PodiumError as exc:
            st.error(str(exc))
        else:
            st.switch_page(page_file("train"), query_params=rm.train_params(name, made.name))


def _bulk_actions(name: str, view: bm.ViewState, sid: int | None, keep: set[str] | None) -> None:
    """Label every row of the current filter, or remove the ones failing a report,
    after a confirmation that names the count."""
    with st.expander("Bulk actions on the current filter"):
        user = rm.current_user()
        report = report_for(name, sid)
        c1, c2 = st.columns(2)
        label = c1.selectbox("Label", rm.review_filters(name)[3:], key="browse.bulk.label")
        failing = c2.checkbox(
            f"Only rows failing {report}" if report else "Only rows failing validation",
            key="browse.bulk.failing",
            disabled=report is None,
            help=None if report else "No validation report covers this snapshot.",
        )
        try:
            ids = rm.filter_ids(
                name,
                st.session_state.get(REVIEW) or rm.ALL,
                user,
                search=view.search or None,
                where=view.where or None,
                filters=dict(view.filters) or None,
                keep=keep,
                failing_report=report if failing else None,
                snapshot_id=sid,
            )
        except PodiumError as exc:
            st.error(str(exc))
            return
        sure = st.checkbox(
            rm.confirm_text("Yes, act on", ids), key="browse.bulk.sure", disabled=not ids
        )
        why = st.text_input("Why (kept in the snapshot)", key="browse.bulk.why")
        a, b = st.columns(2)
        branch = st.session_state.get(BRANCH) or "main"
        base = sid if branch == "main" else branch
        if a.button(
            f"Label {len(ids):,} rows {label}", key="browse.bulk.do_label", disabled=not sure
        ):
            browse_panels.act(lambda: rm.label_rows(name, ids, user, label, sid))
        if b.button(f"Remove {len(ids):,} rows", key="browse.bulk.do_remove", disabled=not sure):
            browse_panels.act(
                lambda: rm.delete_rows(name, ids, user, why=why, base=base, branch=branch)
            )


def _rows_of(name: str, view: bm.ViewState, sid: int | None, keep: set[str] | None) -> Page:
    which = st.session_state.get(REVIEW) or rm.ALL
    if which != rm.ALL:
        return rm.review_page(
            name,
            which,
            rm.current_user(),
            offset=view.offset,
            limit=view.page_size,
            search=view.search or None,
            where=view.where or None,
            filters=dict(view.filters) or None,
            keep=keep,
            snapshot_id=sid,
        )
    return page(
        name,
        offset=view.offset,
        limit=view.page_size,
        search=view.search or None,
        where=view.where or None,
        filters=dict(view.filters) or None,
        ids=keep,
        snapshot_id=sid,
    )


def main() -> None:
    st.title("Browse")
    tables = list_tables()
    if not tables:
        widgets.no_tables_message()
        return
    _sync_from_url(tables)
    if browse_panels.take_to_head():  # a save made a new snapshot, or a reload was asked
        st.session_state[SNAPSHOT] = None
    browse_panels.save_feedback()
    try:
        name, sid, _, keep = _sidebar(tables)
    except PodiumError as exc:
        st.error(str(exc))
        return
    search_col, size_col, page_col = st.columns([6, 1, 2], vertical_alignment="bottom")
    search_col.text_input(
        "Search messages",
        key=SEARCH,
        placeholder="Text inside any turn (case-insensitive)",
        on_change=_first_page,
    )
    size_col.selectbox("Rows per page", bm.PAGE_SIZES, key=SIZE, on_change=_first_page)
    view = _current()
    try:
        result = _rows_of(name, view, sid, keep)
        clamped = bm.with_page_in_range(view, result.total)
        if clamped.page != view.page:  # fewer rows than the link remembered
            st.session_state[PAGE] = clamped.page
            view = clamped
            result = _rows_of(name, view, sid, keep)
    except PodiumError as exc:  # e.g. a SQL condition that does not parse
        st.error(str(exc))
        _write_url(replace(view, snapshot=sid))
        return
    pages = bm.page_count(result.total, view.page_size)
    # No max_value: the browser would keep showing a number past the end that the widget
    # refused; the view clamps it above instead, and the box then shows the last page.
    page_col.number_input(f"Page (of {pages:,})", min_value=1, step=1, key=PAGE)
    widgets.table_next_steps(name, sid)  # the same table in Validate, Generate, Train
    mode = st.segmented_control(
        "View", ["Rows", "Statistics"], key=MODE, default="Rows", required=True
    )
    try:
        if mode == "Statistics":
            browse_panels.stats_panel(name, sid, view)
        else:
            _rows_view(name, view, result)
            if sid is not None and result.total and "id" in result.columns:
                _bulk_actions(name, view, sid, keep)
    except PodiumError as exc:
        st.error(str(exc))
    _write_url(replace(_current(), snapshot=sid))


main()
