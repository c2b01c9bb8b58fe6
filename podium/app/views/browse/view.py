"""Browse page: pick a table and snapshot, page through rows, search and filter them,
read one sample as a conversation, and see the table's statistics.

Review acts here too: each row shows its annotations and the review filter keeps
unlabelled rows, a label's rows or mine; the open sample can be labelled, rated, noted,
edited (a message, a turn, the whole row), and shows its history; bulk actions work on
every row of the current filter after a confirmation with the count. Every edit is one
snapshot; "Train on this" opens the Train page on this snapshot, tag or label.

The URL holds the view (`podium.app.views.browse.state`): it is read when it changes (a
pasted link, another page's link) and rewritten after every change here. The sidebar
(table, snapshot, filters, review filter) is `podium.app.views.browse.sidebar`. Controls for
writes the user's role does not allow are not offered; a caption names the role.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import pandas as pd
import streamlit as st

from podium.app import widgets
from podium.app.feedback import PodiumError
from podium.app.page_tables import PageTables
from podium.app.recent import saw
from podium.app.roles import allowed, current_user
from podium.app.rows import filters as row_filters
from podium.app.rows import panels as row_panels
from podium.app.rows import saves as rs
from podium.app.rows import view_state as vs
from podium.app.safe_markdown import escape_markdown
from podium.app.scroll import ERROR_MARK, scroll_once
from podium.app.views.browse import model as bm
from podium.app.views.browse import state as bs
from podium.app.views.browse.sidebar import sidebar, signal_order
from podium.app.views.browse.signal_panel import act_on_signals, duplicate_beside

SCROLLED = "browse.scrolled_to"  # the sample whose error the page last scrolled to


def _grid_selected(grid: str) -> None:
    rows = st.session_state[grid].selection.rows
    keys = st.session_state.get(bs.ROW_KEYS) or []
    if rows and rows[0] < len(keys):
        st.session_state[bs.SAMPLE] = keys[rows[0]]


def _counted(result: bm.Page) -> int:
    # Browse asks for counted pages (the default): the page box and caption need it.
    assert result.total is not None
    return result.total


def _sample_panel(
    tables: PageTables, view: vs.ViewState, columns: list[str], sid: int | None
) -> None:
    name = tables.name
    found = bm.read_sample(name, view, columns, sid)
    if not found.rows:
        st.warning(
            f"No sample {escape_markdown(view.sample)} in {escape_markdown(name)} "
            f"at snapshot {escape_markdown(sid)}."
        )
        return
    row = found.rows[0]
    st.subheader(f"Sample {escape_markdown(view.sample)}")
    if not bm.is_chat(found.columns):
        widgets.render_fields(bm.detail_fields(row, found.columns))
        return
    row_id = str(row.get("id"))
    row_panels.failures_panel(tables, sid, row)
    row_panels.signals_panel(tables, sid, row)
    duplicate_beside(tables, sid, row)
    row_panels.system_prompt(row)
    errors = row_panels.error_locations(tables, sid, row)
    row_panels.review_conversation(
        row.get("messages") or [],
        key=f"browse.turns.{row_id}",
        search=[view.search] if view.search else [],
        errors=errors,
    )
    opened = (name, sid, row_id)
    if errors and st.session_state.get(SCROLLED) != opened:
        # Opened (from Validate's link, or a click) below the rows: show the error itself.
        st.session_state[SCROLLED] = opened
        scroll_once(selector=ERROR_MARK)
    if "id" not in found.columns or row.get("id") is None:
        return
    key = f"browse.row.{row_id}.{sid}"
    annotate_tab, edit_tab, history_tab, fields_tab = st.tabs(
        ["Annotate", "Edit", "History", "Fields"]
    )
    with annotate_tab:
        row_panels.annotate_panel(tables, row_id, sid, key)
    with edit_tab:
        row_panels.edit_panel(name, row, sid, key, bs.edit_branch())
    with history_tab:
        row_panels.history_panel(tables, row_id)
    with fields_tab:
        widgets.render_fields(bm.detail_fields(row, found.columns))


def _rows_view(tables: PageTables, view: vs.ViewState, result: bm.Page) -> None:
    # The picker and the row count share a line above the grid, which gets the page's
    # width (beside the picker it had three fifths, and its answers were cut short).
    range_col, sample_col = st.columns([3, 2], gap="medium", vertical_alignment="bottom")
    keys = [bm.sample_key(r, view.offset + i) for i, r in enumerate(result.rows)]
    st.session_state[bs.ROW_KEYS] = keys
    summary = bm.summarize_rows(result.rows, result.columns)
    if "id" in result.columns:
        notes = row_filters.annotations_by_row(
            tables.notes, [str(r.get("id")) for r in result.rows]
        )
        # The review column goes right after the id, where a reviewer's eye starts.
        summary = [
            {
                "id": line.pop("id", None),
                "review": row_filters.annotation_text(notes.get(str(r.get("id")), [])),
                **line,
            }
            for line, r in zip(summary, result.rows, strict=True)
        ]
    range_col.caption(bm.row_range(result.offset, len(result.rows), _counted(result)))
    with sample_col:
        labels = {
            k: bm.sample_choice_label(r, k, result.columns)
            for k, r in zip(keys, result.rows, strict=True)
        }
        # A label once shown stays the same (a picker whose labels change under it
        # hands back the old label as its value).
        seen = st.session_state.setdefault(bs.SAMPLE_LABELS, {})
        seen.update(labels)
        if view.sample and view.sample not in labels:
            labels = {view.sample: seen.get(view.sample, view.sample), **labels}
        st.selectbox(
            "Open sample",
            [None, *labels],
            key=bs.SAMPLE,
            format_func=lambda k: "Choose a row…" if k is None else labels[k],
            help="Or click a row in the table.",
        )
    if result.rows:
        grid, ticked = bm.grid_state(keys, view.sample)
        st.dataframe(
            pd.DataFrame(summary),
            hide_index=True,
            key=grid,
            on_select=functools.partial(_grid_selected, grid),
            selection_mode="single-row",
            selection_default={"selection": {"rows": ticked}},
            column_config={
                c: st.column_config.Column(width=w)
                for c, w in bm.grid_widths(list(summary[0])).items()
            },
        )
    elif view.search or view.where or view.filters or view.malformed_only:
        st.info("No rows match. Clear the search or filters to see more.")
    else:
        st.info("This snapshot has no rows.")
    if view.sample:  # the conversation gets the page's full width
        _sample_panel(tables, view, result.columns, result.snapshot_id)


def _bulk_actions(
    tables: PageTables, view: vs.ViewState, sid: int | None, keep: set[str] | None
) -> None:
    """Label every row of the current filter, or remove the ones failing a report,
    after a confirmation that names the count."""
    name = tables.name
    with st.expander("Bulk actions on the current filter"):
        user = current_user()
        if not allowed(user, "annotate", "labelling or removing rows in bulk"):
            return
        covering = tables.report(sid)
        report = bm.name_of(covering) if covering is not None else None
        c1, c2 = st.columns(2)
        label = c1.selectbox(
            "Label", row_filters.review_filters(tables.table)[3:], key="browse.bulk.label"
        )
        failing = c2.checkbox(
            f"Only rows failing {report}" if report else "Only rows failing validation",
            key="browse.bulk.failing",
            disabled=report is None,
            help=None if report else "No validation report covers this snapshot.",
        )
        which = bs.review_filter()
        shown = view.row_filter()
        narrowed = row_filters.Narrowing(
            search=shown["search"],
            where=shown["where"],
            filters=shown["filters"],
            keep=keep,
            failing_report=covering if failing else None,
            snapshot_id=sid,
        )
        try:  # the ids themselves are read only when a button is pressed
            count = row_filters.filter_count(tables, which, user, **narrowed)
        except PodiumError as exc:
            st.error(escape_markdown(str(exc)))
            return

        def ids() -> list[str]:
            return row_filters.filter_ids(tables, which, user, **narrowed)

        sure = st.checkbox(
            row_filters.confirm_text("Yes, act on", count),
            key="browse.bulk.sure",
            disabled=not count,
        )
        why = st.text_input("Why (kept in the snapshot)", key="browse.bulk.why")
        a, b = st.columns(2)
        branch = bs.edit_branch()
        base = sid if branch == "main" else branch
        if a.button(
            f"Label {count:,} rows {label}",
            key="browse.bulk.do_label",
            disabled=not sure or label is None,
        ):
            row_panels.act(lambda: rs.label_rows(name, ids(), user, label or "", sid))
        if b.button(
            f"Remove {count:,} rows",
            key="browse.bulk.do_remove",
            disabled=not sure or not user.can("edit"),
        ):
            row_panels.act(
                lambda: rs.delete_rows(name, ids(), user, why=why, base=base, branch=branch)
            )


def _filter_chips(view: vs.ViewState) -> None:
    """The filters narrowing the rows, wherever they were set (a link, the sidebar),
    each with a button that clears it."""
    chips = bm.active_filters(view)
    if not chips:
        return
    row = st.container(horizontal=True, vertical_alignment="center")
    row.caption("Filters:")
    for chip in chips:
        row.button(
            escape_markdown(chip.text),
            key=f"browse.clear.{chip.name}",
            icon=":material/close:",
            help="Clear this filter",
            on_click=bs.clear_filter,
            args=(chip.name,),
        )


def main() -> None:
    st.title("Browse")
    tables = bm.list_tables()
    if not tables:
        widgets.no_tables_message()
        return
    bs.sync_from_url(tables)
    bs.clean()
    if row_panels.take_to_head():  # a save made a new snapshot, or a reload was asked
        st.session_state[bs.SNAPSHOT] = None
    row_panels.save_feedback()
    try:
        at_hand, sid, keep, snapshots = sidebar(tables)
    except PodiumError as exc:
        st.error(escape_markdown(str(exc)))
        return
    name = at_hand.name
    saw("table", name)  # what Compare starts a new comparison on
    older = bm.older_snapshot_note(snapshots, sid)
    if older:
        st.warning(escape_markdown(older), icon=":material/history:")
    if partial := at_hand.partial:  # the job writing it stopped part-way
        st.warning(escape_markdown(f"Partial: {partial}"), icon=":material/timelapse:")
    search_col, size_col, page_col = st.columns([6, 1, 2], vertical_alignment="bottom")
    search_col.text_input(
        "Search messages",
        key=bs.SEARCH,
        placeholder="Text inside any turn (case-insensitive)",
        on_change=bs.first_page,
    )
    size_col.selectbox("Rows per page", vs.PAGE_SIZES, key=bs.SIZE, on_change=bs.first_page)
    view = bs.current()
    _filter_chips(view)
    try:
        order = signal_order(at_hand, sid)
        result = bm.rows_of(at_hand, view, sid, keep, bs.review_filter(), current_user(), order)
        clamped = bm.with_page_in_range(view, _counted(result))
        if clamped.page != view.page:  # fewer rows than the link remembered
            st.session_state[bs.PAGE] = clamped.page
            view = clamped
            result = bm.rows_of(at_hand, view, sid, keep, bs.review_filter(), current_user(), order)
    except PodiumError as exc:  # e.g. a SQL condition that does not parse
        st.error(escape_markdown(str(exc)))
        bs.write_url(replace(view, snapshot=sid))
        return
    pages = bm.page_count(_counted(result), view.page_size)
    # No max_value: the browser would keep showing a number past the end that the widget
    # refused; the view clamps it above instead, and the box then shows the last page.
    page_col.number_input(f"Page (of {pages:,})", min_value=1, step=1, key=bs.PAGE)
    widgets.table_next_steps(name, sid)  # the same table in Validate, Generate, Train
    mode = st.segmented_control(
        "View", ["Rows", "Statistics"], key=bs.MODE, default="Rows", required=True
    )
    try:
        if mode == "Statistics":
            row_panels.stats_panel(name, sid, view)
        else:
            _rows_view(at_hand, view, result)
            if sid is not None and result.total and "id" in result.columns:
                _bulk_actions(at_hand, view, sid, keep)
                act_on_signals(at_hand, sid, snapshots)
    except PodiumError as exc:
        st.error(escape_markdown(str(exc)))
    bs.write_url(replace(bs.current(), snapshot=sid))


main()
