"""Browse's "Act on signals" panel: keep one row per cluster, remove contaminated rows
or rows with private data, redact private data, label the rows a Signals filter chose.
Each is previewed (how many rows, which ones, a sample), then written as one snapshot
with its author after a confirm; the choices and writes are
`podium.app.views.browse.signal_acts`'s. And an opened near-duplicate beside its
canonical row."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from podium.app.page_tables import PageTables
from podium.app.roles import allowed, current_user
from podium.app.rows import filters as row_filters
from podium.app.rows import panels as row_panels
from podium.app.rows import saves as rs
from podium.app.safe_markdown import escape_markdown
from podium.app.views.browse import signal_acts as sa
from podium.app.views.browse import state as bs
from podium.app.views.browse.duplicate_pair import duplicate_pair
from podium.app.views.browse.sidebar import SIGNALS, signal_facets
from podium.config import get_settings
from podium.errors import PodiumError
from podium.store.read.snapshots import SnapshotInfo

KEY = "browse.act."
PREVIEWED = KEY + "previewed"  # (table, snapshot, act key, the preview's result)


def _write(act: sa.SignalAct, name: str, why: str, label: str | None, tags: str) -> rs.Saved:
    result = act.run(
        name,
        preview=False,
        why=why,
        label=label,
        tags=[t.strip() for t in tags.split(",") if t.strip()],
        branch=bs.edit_branch(),
    )
    st.session_state.pop(PREVIEWED, None)
    moved = None if act.labels else result["snapshot_id"]
    return rs.Saved(sa.done_text(act, result), moved)


def act_on_signals(tables: PageTables, sid: int | None, snapshots: list[SnapshotInfo]) -> None:
    """The panel, under the rows, for the signals current for `sid`."""
    name = tables.name
    stale, found = signal_facets(get_settings().catalog_uri, name, sid, tables.table)
    if not stale and not found:
        return
    chosen = set(st.session_state.get(SIGNALS) or [])
    acts = sa.offered(
        sorted({f.signal for f in found}), [f for f in found if f"{f.signal}={f.value}" in chosen]
    )
    with st.expander("Act on signals"):
        head = next((s.snapshot_id for s in snapshots if s.current), None)
        if not acts:
            st.caption("No signal is current for this snapshot; run them again to act on them.")
            return
        if sid != head:
            st.caption("This is an older snapshot: a signal acts only on the current one.")
            return
        user = current_user()
        if not allowed(user, "annotate", "acting on signals"):
            return
        by_key = {a.key: a for a in acts}
        picked = st.selectbox(
            "Action", list(by_key), key=KEY + "which", format_func=lambda k: by_key[k].title
        )
        act = by_key[picked or acts[0].key]
        if act.needs == "edit" and not allowed(user, "edit", act.title.lower()):
            return
        if st.button("Preview", key=KEY + "preview", icon=":material/visibility:"):
            try:
                result = act.run(name, preview=True)
            except PodiumError as exc:  # a stale signal, a table moved on since
                st.error(escape_markdown(str(exc)))
                return
            st.session_state[PREVIEWED] = (name, sid, act.key, result)
        shown = st.session_state.get(PREVIEWED)
        if not shown or shown[:3] != (name, sid, act.key):
            st.caption("Preview it first: nothing is written until you confirm.")
            return
        result = shown[3]
        st.markdown(escape_markdown(sa.summary(act, result)))
        if not result["rows"]:
            return
        more = (
            f" and {result['rows'] - len(result['ids']):,} more"
            if result["rows"] > len(result["ids"])
            else ""
        )
        st.caption(escape_markdown(f"Rows: {', '.join(result['ids'])}{more}"))
        st.markdown(
            "\n".join(
                f"- {escape_markdown(line)}" for line in sa.sample(act, name, sid, result["ids"])
            )
        )
        sure = st.checkbox(
            escape_markdown(f"Yes, {act.title.lower()}: {rs.rows_text(result['rows'])}"),
            key=KEY + "sure." + act.key,
        )
        if act.labels:
            c1, c2 = st.columns(2)
            label = c1.selectbox(
                "Label", [None, *row_filters.review_filters(tables.table)[3:]], key=KEY + "label"
            )
            tags = c2.text_input("Tags (comma-separated)", key=KEY + "tags")
            if st.button(f"Label {result['rows']:,} rows", key=KEY + "do_label", disabled=not sure):
                row_panels.act(lambda: _write(act, name, "", label, tags))
            return
        why = st.text_input("Why (kept in the snapshot)", key=KEY + "why")
        if st.button(
            f"{act.title}: {result['rows']:,} rows",
            key=KEY + "do",
            disabled=not sure,
            type="primary",
        ):
            row_panels.act(lambda: _write(act, name, why, None, ""))


def duplicate_beside(tables: PageTables, sid: int | None, row: Mapping[str, Any]) -> None:
    """An opened copy beside its cluster's canonical row, the differing words marked."""
    pair = duplicate_pair(tables.table, sid, row)
    if pair is None:
        return
    with st.expander(f"Beside its canonical row {escape_markdown(pair.canonical)} ({pair.signal})"):
        ours, theirs = st.columns(2)
        ours.markdown(f"**This row** ({escape_markdown(row.get('id'))})")
        ours.html(pair.row_html)
        theirs.markdown(f"**Canonical row** ({escape_markdown(pair.canonical)})")
        theirs.html(pair.canonical_html)
