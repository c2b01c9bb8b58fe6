"""Small Streamlit pieces any page can reuse.

- `render_conversation(turns)`: one chat bubble per turn (JSON pretty-printed, code
  highlighted, broken JSON shown verbatim with a note).
- `render_fields(fields)`: labelled values of a row that is not a conversation.
- `table_picker(tables, key=...)` and `snapshot_picker(snapshots, key=...)`: the
  selectboxes for choosing what to read; both keep their value in `st.session_state[key]`
  so a page can seed them from a URL.
- `browse_link(table, snapshot=, sample=)`: a link into the Browse page.
- `no_tables_message()`: what to say when the catalog is empty.

What they show comes from Streamlit-free functions (`podium.app.chat_markdown`,
`podium.app.rows`), which carry the tests of the logic.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import streamlit as st

from podium.app.chat_markdown import render_turn, render_value
from podium.app.pages import page_file
from podium.app.recent import saw
from podium.app.rows.turns import Turn
from podium.app.rows.view_state import ViewState, snapshot_label, to_query
from podium.app.safe_markdown import escape_markdown, neutralize_images
from podium.app.table_choices import CONVERSATIONS, default_of, pick, table_choices
from podium.store.read.snapshots import SnapshotInfo

BROWSE_PAGE = page_file("browse")

ROLE_AVATARS = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "gpt": "assistant",
    "system": ":material/settings:",
    "tool": ":material/build:",
    "function": ":material/build:",
}


def render_conversation(turns: Iterable[Turn | dict[str, Any]]) -> None:
    """Each turn as a chat message; `turns` are `Turn`s or {"role", "content"} dicts."""
    for turn in turns:
        role, content = (
            (turn.role, turn.content)
            if isinstance(turn, Turn)
            else (str(turn.get("role") or "unknown"), turn.get("content"))
        )
        rendered = render_turn(content)
        with st.chat_message(role, avatar=ROLE_AVATARS.get(role.lower(), ":material/person:")):
            st.caption(escape_markdown(role))
            st.markdown(rendered.markdown)
            if rendered.note:
                st.caption(f":warning: {escape_markdown(rendered.note)}")


def write_answer(chunks: Iterable[str]) -> str:
    """A model's answer as it streams in, drawn as Markdown without images (a
    prompt-injected answer could carry data out in an image URL); returns the whole
    text. Not st.write_stream: it draws what it is given, images and all."""
    spot, text = st.empty(), ""
    for chunk in chunks:
        text += chunk
        spot.markdown(neutralize_images(text) + "▌")
    spot.markdown(neutralize_images(text))
    return text


def render_fields(fields: Iterable[tuple[str, Any]]) -> None:
    """Label and value, one field after another (long values get their own block)."""
    for name, value in fields:
        st.markdown(f"**{escape_markdown(name)}**")
        st.markdown(render_value(value))


def no_tables_message() -> None:
    st.info(
        "The catalog has no tables yet. Load the demo datasets with `podium demo`, or "
        "import your own with `podium import data.jsonl --out NS.NAME` "
        "(JSONL, Parquet or a saved Hugging Face dataset), then reload this page."
    )


def table_picker(
    tables: Sequence[str],
    *,
    key: str,
    label: str = "Table",
    on_change: Callable[[], None] | None = None,
) -> str | None:
    """A selectbox over catalog tables; an unknown value in session state is replaced
    by the most recently written non-internal table, so a stale link cannot break the
    widget and the default is never an internal table that happens to sort first."""
    if not tables:
        return None
    if st.session_state.get(key) not in tables:
        st.session_state[key] = default_of(tables)
    return st.selectbox(label, list(tables), key=key, on_change=on_change)


def table_select(
    key: str,
    *,
    label: str = "Table",
    groups: Collection[str] | None = CONVERSATIONS,
    linked: str | None = None,
    exclude: Collection[str] = (),
    on_change: Callable[[], None] | None = None,
) -> str | None:
    """A table picker over the `groups` of kinds a page can read, most recent first;
    "Show all tables" adds the internal ones and every other kind. `linked` (a URL's
    table) is chosen once when it arrives, even when it would otherwise be hidden."""
    choices = table_choices()
    by_name = {c.name: c for c in choices}
    show_internal = bool(st.session_state.get(key + ".internal"))
    # Asking for internal tables shows every table, whatever its kind.
    names = [
        c.name for c in pick(choices, None if show_internal else groups, show_internal, exclude)
    ]
    if linked in by_name and linked not in names:
        names.insert(0, linked)
    if linked in names and st.session_state.get(key + ".linked") != linked:
        st.session_state[key] = st.session_state[key + ".linked"] = linked
    if not names:
        return None
    if st.session_state.get(key) not in names:
        st.session_state[key] = names[0]
    chosen: str = st.selectbox(
        label,
        names,
        key=key,
        format_func=lambda n: by_name[n].label if n in by_name else n,
        on_change=on_change,
    )
    saw("table", chosen)  # what Compare starts a new comparison on
    st.checkbox(
        "Show all tables",
        key=key + ".internal",
        help="Comparison tables, votes, validation reports and the vibes log.",
    )
    return chosen


def snapshot_picker(
    snapshots: Sequence[SnapshotInfo],
    *,
    key: str,
    label: str = "Snapshot",
    on_change: Callable[[], None] | None = None,
    names: Mapping[int, Sequence[str]] | None = None,
) -> int | None:
    """A selectbox over a table's snapshots, newest first, defaulting to the current one;
    `names` ({id: ['cleaned (tag)']}, `view_state.ref_names`) label tagged snapshots.

    Returns None only for a table without snapshots. Time travel is choosing an older one.
    """
    if not snapshots:
        st.selectbox(label, ["no snapshots (empty table)"], disabled=True)
        return None
    by_id = {s.snapshot_id: s for s in snapshots}
    ids = [s.snapshot_id for s in reversed(snapshots)]  # list_snapshots is oldest first
    if st.session_state.get(key) not in by_id:
        st.session_state[key] = next((s.snapshot_id for s in snapshots if s.current), ids[0])
    chosen = st.selectbox(
        label,
        ids,
        key=key,
        format_func=lambda sid: snapshot_label(by_id[sid], (names or {}).get(sid, ())),
        on_change=on_change,
        help="Every write makes a new snapshot; pick an older one to see the table as it was. "
        "Times are UTC.",
    )
    return chosen


def browse_link(
    table: str,
    *,
    snapshot: int | None = None,
    sample: str | None = None,
    search: str = "",
    label: str | None = None,
) -> None:
    """A link that opens the Browse page on `table` (and a snapshot, a sample, a search).

    Uses st.page_link, so it works wherever the Browse page is mounted; for plain text
    links use `podium.app.rows.view_state.browse_url`.
    A `label` is Markdown: data in it goes through `podium.app.safe_markdown`.
    """
    query = to_query(ViewState(table=table, snapshot=snapshot, sample=sample, search=search))
    st.page_link(
        BROWSE_PAGE,
        label=label or escape_markdown(f"{table} · {sample}" if sample else table),
        icon=":material/table_view:",
        query_params=query,
    )


def table_next_steps(table: str, snapshot: int | None) -> None:
    """Links that carry this table and snapshot to the pages that use it next."""
    query = {"table": table, **({"snapshot": str(snapshot)} if snapshot is not None else {})}
    steps = (
        ("validate", "Validate this table", ":material/rule:"),
        ("generate", "Generate from these prompts", ":material/auto_awesome:"),
        ("train", "Train on this table", ":material/model_training:"),
    )
    for column, (page, label, icon) in zip(st.columns(len(steps)), steps, strict=True):
        with column:
            st.page_link(page_file(page), label=label, icon=icon, query_params=query)


def ask_first(key: str, question: str, yes: str, preview: str = "") -> bool:
    """After a destructive button set `st.session_state[key]`, ask `question` with
    `yes` and "Keep it"; True once `yes` is clicked. One click never destroys.
    Both are plain text (they name rows, jobs and tables), never Markdown; `preview`
    (a unified diff of what will change) is shown under the question as code."""
    if not st.session_state.get(key):
        return False
    with st.container(border=True):
        st.warning(escape_markdown(question), icon=":material/warning:")
        if preview:
            st.code(preview, language="diff")
        c1, c2 = st.columns(2)
        if c1.button(escape_markdown(yes), key=f"{key}.yes", type="primary"):
            st.session_state.pop(key, None)
            return True
        if c2.button("Keep it", key=f"{key}.no"):
            st.session_state.pop(key, None)
            st.rerun()
    return False
