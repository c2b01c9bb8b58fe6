"""Review page: work through a review queue, and compare, tag and branch snapshots.

Queue: start one on a table (or the rows a search/condition keeps; N rows, in order or
sampled), then review row by row. Keys: j / → next, k / ← previous, 1-3 the first three
labels, e edit. Progress ("143 of 500 reviewed") and claims live in the state database,
so a reload continues where it was and two reviewers never get the same row.
Snapshots: diff any two snapshots, tags or branches (rows added, removed, changed with
per-message text diffs), tag or branch a snapshot, fast-forward main to a branch, and
train on a tag; maintain the table (compaction, snapshot expiry, orphan files) as a job.
`?table=` picks the table. Logic: `queue.py` and `snapshots.py` here, and the row tools
Browse shares in `podium.app.rows`. A role that cannot write (a viewer) reads diffs and
history; a caption names the role needed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import streamlit as st

from podium.app import widgets
from podium.app.feedback import PodiumError, empty_state
from podium.app.forms import queue_form
from podium.app.page_tables import PageTables
from podium.app.pages import page_file
from podium.app.roles import allowed, current_user
from podium.app.rows import filters as row_filters
from podium.app.rows import panels as row_panels
from podium.app.rows import saves as rs
from podium.app.rows import snapshots as row_snapshots
from podium.app.safe_markdown import code_span, escape_markdown
from podium.app.shortcuts import keyboard_shortcuts
from podium.app.views.review import queue as review_queue
from podium.app.views.review import snapshots as review_snapshots

CURSOR, EDITING = "review.cursor", "review.editing"


def _new_queue(table: str) -> None:
    with st.form("review.new"):
        c1, c2, c3 = st.columns(3)
        size = c1.number_input("Rows", 1, 100_000, 50, key="review.new.size")
        name = c2.text_input("Queue name", "default", key="review.new.name")
        sampled = c3.toggle("Sampled (else in table order)", key="review.new.sampled")
        c1, c2, c3 = st.columns(3)
        search = c1.text_input("Only rows containing", key="review.new.search")
        where = c2.text_input("Only rows where (SQL)", key="review.new.where")
        seed = c3.number_input("Seed", 0, 2**31 - 1, 0, key="review.new.seed")
        if st.form_submit_button("Start queue"):
            try:
                q = review_queue.start_queue(
                    table,
                    int(size),
                    current_user(),
                    sampled=sampled,
                    seed=int(seed),
                    search=search,
                    where=where,
                    queue=name.strip() or "default",
                )
            except PodiumError as exc:
                st.error(escape_markdown(str(exc)))
            else:
                st.session_state["review.queue"] = q.name
                st.session_state.pop(CURSOR, None)
                st.rerun()


def _queue_tab(tables: PageTables) -> None:
    table = tables.name
    found = review_queue.queues_of(table)
    user = current_user()
    # Working through a queue claims rows, which is a reviewer's write.
    if not allowed(user, "annotate", "reviewing from a queue", "this table"):
        return
    with st.expander("Start a review queue", expanded=not found):
        _new_queue(table)
    if not found:
        return
    names = [q.name for q in found]
    if st.session_state.get("review.queue") not in names:
        st.session_state["review.queue"] = names[-1]
    name = st.selectbox(
        "Queue", names, key="review.queue", on_change=lambda: st.session_state.pop(CURSOR, None)
    )
    # First: reaching a row removed since the queue was made drops it from the queue.
    step = review_queue.queue_step(table, user, st.session_state.get(CURSOR), name)
    cursor = st.session_state[CURSOR] = step.cursor
    queue = review_queue.queue_of(table, name)
    progress = escape_markdown(f"{queue.progress} · {queue.description}")  # a search, a condition
    st.progress(queue.done / max(queue.size, 1), text=progress)
    row = step.row
    if row is None:
        st.success("Nothing left for you in this queue.")
        return
    if step.reviewed and not step.has_next:
        st.success("You have reached the end of this queue; Previous goes back over it.")
    keys = review_queue.label_keys(tables.table)
    keyboard_shortcuts(
        {
            "j": "Next",
            "ArrowRight": "Next",
            "k": "Previous",
            "ArrowLeft": "Previous",
            "e": "Edit",
            **{k: f"{k} {label}" for k, label in keys.items()},
        }
    )
    nav = st.columns([1, 1, 1, *([1.6] * len(keys)), 2])
    if nav[0].button("Previous", key="review.prev", disabled=cursor == 0):
        st.session_state[CURSOR] = max(0, cursor - 1)
        st.rerun()
    if nav[1].button("Next", key="review.next", disabled=not step.has_next):
        st.session_state[CURSOR] = cursor + 1
        st.rerun()
    if nav[2].button("Edit", key="review.edit", disabled=not user.can("edit")):
        st.session_state[EDITING] = not st.session_state.get(EDITING)
    row_id = str(row["id"])
    snapshot = review_queue.head_snapshot(tables.table)
    for col, (k, label) in zip(nav[3:], keys.items(), strict=False):
        if col.button(f"{k} {escape_markdown(label)}", key=f"review.key.{k}"):
            labelled = functools.partial(rs.label_rows, table, [row_id], user, label, snapshot)
            row_panels.act(functools.partial(_then_next, labelled, cursor + 1))
    st.subheader(f"Row {escape_markdown(row_id)} · {step.text}")
    notes = row_filters.annotations_by_row(tables.notes, [row_id]).get(row_id, [])
    st.caption(
        "Annotations: " + (escape_markdown(row_filters.annotation_text(notes)) or "none yet")
    )
    row_panels.system_prompt(row)
    row_panels.review_conversation(
        row.get("messages") or [],
        key=f"review.turns.{row_id}",
        errors=row_panels.error_locations(tables, snapshot, row),
    )
    if st.session_state.get(EDITING):
        row_panels.edit_panel(table, row, snapshot, f"review.row.{row_id}", "main")
    with st.expander("Rating, note and history"):
        row_panels.annotate_panel(tables, row_id, snapshot, f"review.row.{row_id}")
        row_panels.history_panel(tables, row_id)


def _then_next(save: Callable[[], rs.Saved], cursor: int) -> rs.Saved:
    """A label from the queue, then the next row (only once the label is saved)."""
    done = save()
    st.session_state[CURSOR] = cursor
    return done


def _picker(table: str, label: str, key: str, default: str | None) -> str | None:
    choices = review_snapshots.snapshot_choices(table)
    by_id = review_snapshots.snapshots_by_id(table)
    if st.session_state.get(key) is None and default in choices:
        st.session_state[key] = default
    return st.selectbox(
        label,
        choices,
        key=key,
        format_func=lambda c: review_snapshots.choice_label(table, c, by_id),
        accept_new_options=True,
        help="A snapshot id, a tag or a branch; type a name to use it.",
    )


def _snapshots_tab(tables: PageTables) -> None:
    table = tables.name
    user = current_user()
    choices = review_snapshots.snapshot_choices(table)
    ids = [c for c in choices if c.isdigit()]
    c1, c2 = st.columns(2)
    with c1:
        a = _picker(table, "From (A)", "review.diff.a", ids[1] if len(ids) > 1 else None)
    with c2:
        b = _picker(table, "To (B)", "review.diff.b", "main")
    if a and b:
        try:
            d = review_snapshots.diff(table, a, b)
        except PodiumError as exc:
            st.error(escape_markdown(str(exc)))
        else:
            st.markdown(f"**{escape_markdown(review_snapshots.diff_summary(d))}**")
            for step in d.authors:
                st.caption(
                    escape_markdown(
                        f"snapshot {step['snapshot_id']} · {step['action']} by "
                        f"{step['author'] or '?'}"
                        + (f" · {step['message']}" if step["message"] else "")
                    )
                )
            if d.added:
                st.markdown("Added: " + ", ".join(code_span(i) for i in d.added[:200]))
            if d.removed:
                st.markdown("Removed: " + ", ".join(code_span(i) for i in d.removed[:200]))
            for row in d.changed[:50]:
                with st.expander(escape_markdown(f"Changed {row.id} ({', '.join(row.columns)})")):
                    for m in row.messages:
                        head = f"message {m['index']} {m['status']}" + (
                            f" · role {m['role']}" if m.get("role") else ""
                        )
                        st.caption(escape_markdown(head))
                        st.code(m.get("diff") or m.get("text") or "", language="diff")
            if st.button(f"Train on {escape_markdown(b)}", key="review.train"):
                st.switch_page(
                    page_file("train"), query_params=row_snapshots.train_params(table, b)
                )
    st.divider()
    if not allowed(user, "edit", "making tags and branches", "snapshots and diffs"):
        return
    c1, c2, c3 = st.columns(3)
    with c1.form("review.tag"):
        tag_name = st.text_input("New tag (on B)", key="review.tag.name")
        if st.form_submit_button("Create tag"):
            _ref_action(lambda: review_snapshots.tag(table, tag_name, user, b), "Tagged")
    with c2.form("review.branch"):
        branch_name = st.text_input("New branch (from B)", key="review.branch.name")
        if st.form_submit_button("Create branch"):
            _ref_action(lambda: review_snapshots.branch(table, branch_name, user, b), "Branched")
    branches = row_snapshots.branches(tables.table)[1:]
    with c3.form("review.ff"):
        chosen = st.selectbox("Branch", branches, key="review.ff.branch")
        if st.form_submit_button("Fast-forward main", disabled=not branches):
            st.session_state["review.ff.ask"] = chosen
    merging = st.session_state.get("review.ff.ask")
    if merging in branches:
        question = review_snapshots.merge_question(table, merging)
        if widgets.ask_first("review.ff.ask", question, f"Yes, fast-forward main to {merging}"):
            _ref_action(lambda: review_snapshots.merge(table, merging, user), "Fast-forwarded")
    _maintenance(table, user)


def _maintenance(table: str, user: Any) -> None:
    st.subheader("Maintenance")
    st.caption(review_snapshots.table_health(table))
    if allowed(user, "run_job", "maintaining tables", "the table's health"):
        queue_form(
            "maintain",
            "review.maintain",
            fixed={"table": table, "all_tables": False},
            advanced=("compact", "expire", "remove_orphans", "force"),
        )


def _ref_action(do: Callable[[], Any], done: str) -> None:
    """Make a tag or branch or move main; on success, draw the page again with the
    outcome, so the pickers above list the new name at once."""
    try:
        ref = do()
    except PodiumError as exc:
        st.error(escape_markdown(str(exc)))
    else:
        st.session_state[row_panels.SAVED] = (
            "ok",
            f"{done}: {ref.name} → snapshot {ref.snapshot_id}.",
        )
        st.rerun()


def main() -> None:
    st.title("Review")
    st.caption(
        "Review queues, snapshot diffs, tags and branches. Every label is recorded with "
        "its author; every edit is a snapshot."
    )
    row_panels.take_to_head()
    row_panels.save_feedback()
    table = widgets.table_select("review.table", linked=st.query_params.get("table"))
    if table is None:
        empty_state("No tables yet.", "Run `podium demo` or `podium import FILE --out NS.NAME`.")
        return
    st.query_params["table"] = table
    tables = PageTables(table)  # each table this draw touches is loaded once
    try:
        # A table gone meanwhile says so here. Not a bare expression: Streamlit's magic
        # would draw the table's schema and snapshots at the top of the page.
        _ = tables.table
        # A segmented control, not tabs: the choice survives the reruns a save makes.
        mode = st.segmented_control(
            "View", ["Queue", "Snapshots"], key="review.mode", default="Queue", required=True
        )
        if mode == "Snapshots":
            _snapshots_tab(tables)
        else:
            _queue_tab(tables)
    except PodiumError as exc:
        st.error(escape_markdown(str(exc)))


main()
