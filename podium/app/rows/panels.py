"""The row panels Browse and Review draw: table statistics with charts, a sample's
validation failures, and reviewing one row (conversation with marks, annotations,
edits, history); a role that cannot write sees a caption naming the role needed instead
of the controls. Layout only; the numbers and saves come from `podium.store.read.stats`,
`podium.validate.report` and the other `podium.app.rows` modules."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from podium.app import charts, widgets
from podium.app.chat_markdown import review_turn
from podium.app.page_tables import PageTables
from podium.app.roles import allowed, current_user
from podium.app.rows import filters as row_filters
from podium.app.rows import history as row_history
from podium.app.rows import pending
from podium.app.rows import saves as rs
from podium.app.rows import turns as row_turns
from podium.app.rows import view_state as vs
from podium.app.safe_markdown import code_span, escape_markdown
from podium.app.widgets import ROLE_AVATARS
from podium.config import get_settings
from podium.errors import PodiumError
from podium.review import annotations as ann
from podium.review.changes import EditConflict
from podium.signals import evidence as signal_evidence
from podium.store.catalog.catalog import name_of
from podium.store.read.query import page
from podium.store.read.stats import TableStats, table_stats
from podium.store.schema import ROLES
from podium.validate.failure_text import error_marks


@st.cache_data(max_entries=32, show_spinner="Computing statistics…")
def _cached_stats(
    catalog_uri: str, table: str, snapshot: int | None, filters_json: str
) -> TableStats:
    """Stats of the rows passing the view's search and filters. A snapshot never
    changes, so catalog, table, snapshot and filters name the result for good; it is a
    few hundred bytes (the length distribution comes back binned)."""
    return table_stats(table, snapshot, **vs.stats_filters(filters_json))


def stats_panel(name: str, sid: int | None, view: vs.ViewState | None = None) -> None:
    try:
        key = vs.stats_filters_key(view) if view else vs.stats_filters_key(vs.ViewState())
        stats = _cached_stats(get_settings().catalog_uri, name, sid, key)
        histogram = stats.length_bins
    except PodiumError as exc:
        st.info(escape_markdown(str(exc)))
        return
    a, b, c = st.columns(3)
    a.metric("Rows", f"{stats.rows:,}")
    b.metric("Turns", f"{stats.turns:,}")
    c.metric("Turns per sample", stats.mean_turns)
    if stats.rows == 0:
        return  # nothing to chart
    left, right = st.columns(2)
    with left:
        st.markdown("**Sample length (characters)**")
        hist = pd.DataFrame(histogram)
        if not hist.empty:
            hist["end"] = hist["to"] + 1  # bars span whole lengths: [from, to + 1)
            st.altair_chart(
                alt.Chart(hist)
                .mark_bar()
                .encode(
                    x=alt.X("from:Q", title="characters", bin="binned"),
                    x2="end:Q",
                    y=alt.Y("samples:Q", title="samples"),
                    tooltip=[alt.Tooltip("label:N", title="characters"), "samples:Q"],
                )
            )
        st.markdown("**Characters by role**")
        st.dataframe(pd.DataFrame(stats.by_role), hide_index=True)
    with right:
        st.markdown("**Turns per sample**")
        st.altair_chart(charts.bar_chart(pd.DataFrame(stats.turn_counts), "turns", "rows"))
        if stats.sources:
            st.markdown("**Sources**")
            sources = pd.DataFrame(stats.sources).fillna({"source": "(none)"})
            st.altair_chart(charts.bar_chart(sources, "source", "rows", horizontal=True))


def signals_panel(tables: PageTables, sid: int | None, row: Mapping[str, Any]) -> None:
    """What the signals current for `sid` say about the row: spans found (secrets
    masked), the eval row a span matches, the other members of its cluster."""
    found = signal_evidence.evidence(tables.table, sid, dict(row))
    if not found:
        return
    with st.expander(f"Signals ({', '.join(signal for signal, _ in found)})"):
        for signal, lines in found:
            st.markdown(
                f"**{escape_markdown(signal)}**\n"
                + "\n".join(f"- {escape_markdown(line)}" for line in lines)
            )


def failures_panel(tables: PageTables, sid: int | None, row: Mapping[str, Any]) -> None:
    """The row's failures in the report covering `sid`, at the line and column Validate
    shows (in the whole message, not in the fenced block a rule checked)."""
    covering = tables.report(sid)
    if covering is None:
        return
    report = name_of(covering)
    failures = page(report, ids=[str(row.get("id"))], limit=1000).rows
    if not failures:
        st.caption(f":white_check_mark: Passed validation ({escape_markdown(report)}).")
        return
    lines = row_turns.failure_lines(failures, list(row.get("messages") or []))
    st.markdown(f"**Validation failures** ({escape_markdown(report)})\n" + "\n".join(lines))


# ---- reviewing one row: conversation, annotations, edits, history ----


def system_prompt(row: Mapping[str, Any]) -> None:
    """The row's `system` column as the first turn, unless its messages hold one."""
    system = row_turns.system_turn(row)
    if system is not None:
        widgets.render_conversation([system])


def review_conversation(
    messages: Sequence[Mapping[str, Any]],
    *,
    key: str,
    search: Sequence[str] = (),
    errors: Mapping[int, list[tuple[int | None, int | None]]] | None = None,
) -> None:
    """Each turn with search hits and validation errors marked, code numbered, and long
    turns folded until "Show all" (per turn; `key` names the row). A long conversation
    is drawn a page of turns at a time, with a pager above it."""
    shown = row_turns.turn_page(len(messages), st.session_state.get(f"{key}.turn_page"))
    if shown.pages > 1:
        pager, where = st.columns([1, 3], vertical_alignment="bottom")
        pager.number_input(
            f"Page of turns (1-{shown.pages:,})",
            min_value=1,
            max_value=shown.pages,
            step=1,
            key=f"{key}.turn_page",
        )
        where.caption(shown.caption)
    for i in range(shown.start, shown.stop):
        m = messages[i]
        role = str(m.get("role") or "unknown")
        show_all = bool(st.session_state.get(f"{key}.all.{i}"))
        turn = review_turn(
            m.get("content"), search=search, errors=(errors or {}).get(i, ()), show_all=show_all
        )
        with st.chat_message(role, avatar=ROLE_AVATARS.get(role.lower(), ":material/person:")):
            st.caption(escape_markdown(role))
            for seg in turn.segments:
                if seg.kind == "code":
                    st.code(seg.text, language=seg.language or None, line_numbers=seg.numbered)
                elif seg.kind == "html":
                    st.html(seg.text)  # escaped data with <mark> around escaped spans
                else:
                    st.markdown(seg.text)
            if turn.note:
                st.caption(f":warning: {escape_markdown(turn.note)}")
            if turn.folded or show_all:
                st.toggle("Show all", key=f"{key}.all.{i}")


def error_locations(
    tables: PageTables, sid: int | None, row: Mapping[str, Any]
) -> dict[int, list[tuple[int | None, int | None]]]:
    """{turn: [(line, column)]} of the row's failures in the report covering `sid`, in
    the whole message (what `review_conversation` marks)."""
    report = tables.report(sid)
    if report is None:
        return {}
    failures = page(name_of(report), ids=[str(row.get("id"))], limit=1000).rows
    return error_marks(failures, list(row.get("messages") or []))


def annotate_panel(tables: PageTables, row_id: str, sid: int | None, key: str) -> None:
    """Label buttons (keys 1-3 on the Review page), a rating and a note for one row."""
    name = tables.name
    user = current_user()
    notes = row_filters.annotations_by_row(tables.notes, [row_id]).get(row_id, [])
    st.caption(
        "Annotations: " + (escape_markdown(row_filters.annotation_text(notes)) or "none yet")
    )
    if not allowed(user, "annotate", "labels, ratings and notes"):
        return
    labels = ann.label_set(tables.table)
    cols = st.columns(len(labels) + 1)
    for n, (col, label) in enumerate(zip(cols, labels, strict=False)):
        shown = escape_markdown(f"{n + 1} {label}" if n < row_filters.LABEL_KEYS else label)
        if col.button(shown, key=f"{key}.label.{label}"):
            act(functools.partial(rs.label_rows, name, [row_id], user, label, sid))
    with st.form(f"{key}.note", border=False):
        c1, c2 = st.columns([1, 4])
        rating = c1.number_input("Rating (1-5; 0 none)", 0, 5, 0, key=f"{key}.rating")
        note = c2.text_input("Note", key=f"{key}.note_text")
        if st.form_submit_button("Save rating and note"):
            if rating:
                act(lambda: rs.rate_row(name, row_id, user, int(rating), sid))
            if note.strip():
                act(lambda: rs.note_row(name, row_id, user, note, sid))


def edit_panel(name: str, row: Mapping[str, Any], sid: int | None, key: str, branch: str) -> None:
    """Edit a message's content or role, add or remove a turn, or delete the row; each
    asks first (an edit with a preview of the change) and is one snapshot made on `sid`
    (a conflict explains itself and offers a reload)."""
    user = current_user()
    if not allowed(user, "edit", "editing or removing rows"):
        return
    messages = list(row.get("messages") or [])
    base = sid if branch == "main" else branch

    def save(change: Callable[..., rs.Saved], *args: Any, **fields: Any) -> None:
        """A `rows.saves` change of this table by this user, on this base and branch."""
        act(lambda: change(name, *args, user, base=base, branch=branch, **fields))

    with st.form(f"{key}.edit"):
        index = st.selectbox(
            "Message",
            list(range(len(messages))),
            format_func=lambda i: f"{i} · {messages[i].get('role')}",
            key=f"{key}.edit.index",
        )
        current = messages[index] if messages else {}
        role = st.selectbox(
            "Role", ROLES, index=_role_index(current.get("role")), key=f"{key}.edit.role.{index}"
        )
        content = st.text_area(
            "Content", current.get("content") or "", height=200, key=f"{key}.edit.content.{index}"
        )
        why = st.text_input("Why (kept in the snapshot)", key=f"{key}.edit.why")
        if st.form_submit_button("Save edit"):
            _ask(
                f"{key}.edit.ask",
                lambda: pending.edit_asked(row, index, content=content, role=role, why=why),
            )
    with st.form(f"{key}.turn"):
        c1, c2 = st.columns([1, 3])
        new_role = c1.selectbox("New turn's role", ROLES, index=2, key=f"{key}.turn.role")
        new_content = c2.text_area("New turn's content", key=f"{key}.turn.content", height=100)
        why_turn = st.text_input("Why", key=f"{key}.turn.why")
        if st.form_submit_button("Add turn at the end"):
            _ask(
                f"{key}.edit.ask",
                lambda: pending.turn_asked(row, role=new_role, content=new_content, why=why_turn),
            )
    asked: pending.PendingEdit | None = st.session_state.get(f"{key}.edit.ask")
    if asked is not None and asked.row_id == str(row["id"]):
        if widgets.ask_first(f"{key}.edit.ask", asked.question, asked.yes, asked.preview):
            if asked.index is None:
                save(
                    rs.insert_turn,
                    row,
                    role=asked.role,
                    content=asked.content,
                    at=None,
                    why=asked.why,
                )
            else:
                save(
                    rs.edit_message,
                    row,
                    asked.index,
                    content=asked.content,
                    role=asked.role,
                    why=asked.why,
                )
    remove_panel(messages, row, key, save)


def _ask(key: str, asked: Callable[[], pending.PendingEdit]) -> None:
    """Keep the edit to ask about under `key`; a bad edit is said at once instead."""
    try:
        st.session_state[key] = asked()
    except PodiumError as exc:
        st.session_state.pop(key, None)
        st.error(escape_markdown(str(exc)), icon=":material/edit_note:")


def remove_panel(
    messages: Sequence[Mapping[str, Any]],
    row: Mapping[str, Any],
    key: str,
    save: Callable[..., None],
) -> None:
    """Remove a turn or delete the row: plain buttons, not a form's (a form submits on
    Enter with its first button, so Enter in "Why" removed turn 0), each asking a
    question that names what goes; a missing reason is said before anything is asked."""
    with st.container(border=True, key=f"{key}.remove.box"):
        c1, c2 = st.columns([1, 3])
        gone = c1.selectbox(
            "Turn",
            list(range(len(messages))),
            format_func=lambda i: f"{i} · {messages[i].get('role')}",
            key=f"{key}.remove.index",
        )
        why = c2.text_input("Why", key=f"{key}.remove.why")
        a, b = st.columns(2)
        one_turn = a.button("Remove turn", key=f"{key}.remove.turn", disabled=not messages)
        whole_row = b.button("Delete row", key=f"{key}.remove.row")
        if one_turn or whole_row:
            try:
                asked = row_history.removal(row, gone if one_turn else None, why)
                st.session_state[f"{key}.remove.ask"] = asked
            except PodiumError as exc:
                st.session_state.pop(f"{key}.remove.ask", None)
                st.error(escape_markdown(str(exc)), icon=":material/edit_note:")
    pending: row_history.Removal | None = st.session_state.get(f"{key}.remove.ask")
    if pending is None or pending.row_id != str(row["id"]):
        return
    if widgets.ask_first(f"{key}.remove.ask", pending.question, pending.yes):
        if pending.turn is None:
            save(rs.delete_rows, [pending.row_id], why=pending.why)
        else:
            save(rs.drop_turn, row, pending.turn, why=pending.why)


def _role_index(role: Any) -> int:
    return ROLES.index(role) if role in ROLES else 0


def history_panel(tables: PageTables, row_id: str) -> None:
    rows = row_history.history_rows(tables, row_id)
    if not rows:
        st.caption("No changes or annotations yet.")
        return
    st.markdown(
        "\n".join(
            f"- {escape_markdown(r['when'])} · **{escape_markdown(r['what'])}** by "
            f"{code_span(r['author'])}"
            + (f" · {escape_markdown(r['detail'])}" if r["detail"] else "")
            + (f" · snapshot {code_span(r['snapshot'])}" if r["snapshot"] else "")
            for r in rows
        )
    )


SAVED = "review.saved"  # the last save's confirmation or error, shown after the rerun
TO_HEAD = "review.to_head"  # the page moves its snapshot picker to the newest snapshot


def act(save: Callable[[], rs.Saved]) -> None:
    """Run a save; remember its outcome for the rerun that shows the new snapshot."""
    try:
        done = save()
    except EditConflict as exc:
        st.session_state[SAVED] = ("conflict", str(exc))
    except PodiumError as exc:
        st.session_state[SAVED] = ("error", str(exc))
    else:
        st.session_state[SAVED] = ("ok", done.text)
        st.session_state[TO_HEAD] = done.snapshot_id is not None
    st.rerun()


def _reload() -> None:
    st.session_state[TO_HEAD] = True


def save_feedback() -> None:
    """The last save's outcome; after a conflict, a button to reload the newest snapshot.

    Always one container, empty on most runs: a message that came and went shifted what
    follows it, and Streamlit took Browse's tabs for new ones and opened the first (an
    edit's question was then hidden in the Edit tab)."""
    box = st.container()
    outcome = st.session_state.pop(SAVED, None)
    if outcome is None:
        return
    kind, text = outcome
    if kind == "ok":
        box.success(escape_markdown(text))
        return
    box.error(escape_markdown(text))
    if kind == "conflict":
        box.button(
            "Reload the newest snapshot", key="review.reload", type="primary", on_click=_reload
        )


def take_to_head() -> bool:
    """Whether the last save or a reload asked to show the newest snapshot (asked once)."""
    return bool(st.session_state.pop(TO_HEAD, False))
