"""The Browse page's view in session state and in the URL.

The widgets' keys hold the view (`current()` reads it back as a `ViewState`); the URL
holds it too, so a link opens the same rows. `sync_from_url` reads the URL when it
changed outside the page (a pasted link, another page's link, the back button) and
`write_url` rewrites it at the end of every run. Parsing and writing the query string
itself is `podium.app.views.browse.model`'s, without Streamlit.
"""

from __future__ import annotations

import streamlit as st

from podium.app.rows import filters as row_filters
from podium.app.rows import snapshots as row_snapshots
from podium.app.rows import view_state as vs
from podium.app.safe_markdown import escape_markdown
from podium.app.views.browse import model as bm
from podium.errors import PodiumError

# Session-state keys. The widget keys hold the view; the others are the page's memory.
TABLE, SNAPSHOT, PAGE, SIZE = "browse.table", "browse.snapshot", "browse.page", "browse.size"
SEARCH, WHERE, SAMPLE = "browse.search", "browse.where", "browse.sample"
MALFORMED, MODE = "browse.malformed", "browse.mode"
FILTER = "browse.filter."  # + column
SAMPLE_LABELS = "browse.sample_labels"  # every label the sample picker has shown, by key
ROW_KEYS = "browse.row_keys"  # sample keys of the grid's rows, for its selection callback
LAST_URL = "browse.last_url"  # the query string this page wrote, or was seeded from, last
SAVED = "browse.saved_view"  # the view to come back to after visiting another page
REVIEW, BRANCH = "browse.review", "browse.branch"  # review filter; branch edits go to


def _url() -> dict[str, list[str]]:
    return {k: st.query_params.get_all(k) for k in st.query_params.keys()}


def seed(view: vs.ViewState) -> None:
    """Set the widgets to `view` (before they are drawn in this run)."""
    ss = st.session_state
    ss[TABLE], ss[SNAPSHOT], ss[SAMPLE] = view.table, view.snapshot, view.sample
    ss[PAGE], ss[SIZE] = view.page, view.page_size
    ss[SEARCH], ss[WHERE], ss[MALFORMED] = view.search, view.where, view.malformed_only
    for column in vs.FILTER_COLUMNS:
        ss[FILTER + column] = list(view.filters.get(column, ()))


def current() -> vs.ViewState:
    """The view the widgets hold now."""
    ss = st.session_state
    return vs.ViewState(
        table=ss.get(TABLE),
        snapshot=ss.get(SNAPSHOT),
        page=int(ss.get(PAGE) or 1),
        page_size=int(ss.get(SIZE) or vs.DEFAULT_PAGE_SIZE),
        search=ss.get(SEARCH) or "",
        where=ss.get(WHERE) or "",
        filters={
            c: bm.filter_values(ss[FILTER + c]) for c in vs.FILTER_COLUMNS if ss.get(FILTER + c)
        },
        sample=bm.sample_of(ss.get(SAMPLE)),
        malformed_only=bool(ss.get(MALFORMED)),
    )


def clean() -> None:
    """Put back keys where a picker left its shown label (see `bm.sample_of`), before
    the widgets are drawn."""
    ss = st.session_state
    if ss.get(SAMPLE):
        ss[SAMPLE] = bm.sample_of(ss[SAMPLE])
    for column in vs.FILTER_COLUMNS:
        if ss.get(FILTER + column):
            ss[FILTER + column] = list(bm.filter_values(ss[FILTER + column]))


def clear_filter(name: str) -> None:
    """A chip's callback: drop one filter (search, where, malformed or a column's)."""
    ss = st.session_state
    if name == "search":
        ss[SEARCH] = ""
    elif name == "where":
        ss[WHERE] = ""
    elif name == "malformed":
        ss[MALFORMED] = False
    else:
        ss[FILTER + name] = []
    first_page()


def first_page() -> None:
    """A widget callback: a new search, filter or snapshot starts on page 1."""
    st.session_state[PAGE] = 1


def table_changed() -> None:
    seed(current().for_table(st.session_state[TABLE]))


def review_filter() -> str:
    """The review filter chosen in the sidebar (every row until one is)."""
    which: str = st.session_state.get(REVIEW) or row_filters.ALL
    return which


def edit_branch() -> str:
    """The branch the page's edits go to."""
    branch: str = st.session_state.get(BRANCH) or "main"
    return branch


def sync_from_url(tables: list[str]) -> None:
    """Seed the widgets from the URL when it changed outside this page's control.

    A run that follows a change made here (a widget moved since the last run) keeps it:
    the URL it comes with may predate the one the last run wrote, because the browser
    applies a rewritten URL only when that message arrives; the view is written back to
    the URL at the end of the run. A new URL with the widgets as they were (a link, the
    back button) is followed. The URL seeded from counts as this page's own until a run
    writes one: a page typed while the first run still draws (seconds at 10M rows)
    stops that run before its end, and the next one must keep it."""
    url = shown = _url()
    ss = st.session_state
    changed_here = SAVED in ss and current() != ss[SAVED]
    if TABLE in ss and (url == ss.get(LAST_URL) or changed_here):
        return
    asked = (url.get("snapshot") or [""])[-1]
    if asked and not asked.lstrip("-").isdigit() and url.get("table"):
        try:  # a tag or branch name in a link: the snapshot it names now
            url = {**url, "snapshot": [str(row_snapshots.resolve(url["table"][-1], asked))]}
        except PodiumError as exc:
            st.warning(escape_markdown(str(exc)))
            url = {k: v for k, v in url.items() if k != "snapshot"}
    if url or SAVED not in st.session_state:
        view, problems = vs.parse_query(url)
    else:
        view, problems = st.session_state[SAVED], []
    if view.table and view.table not in tables:
        problems.append(f"No table named {view.table}; showing {tables[0]} instead.")
        view = vs.ViewState(table=tables[0])
    seed(view)
    ss[LAST_URL] = shown
    for problem in problems:
        st.warning(escape_markdown(problem))


def write_url(view: vs.ViewState) -> None:
    """Remember `view` (for coming back from another page) and put it in the URL."""
    st.session_state[SAVED] = view
    wanted = vs.to_query(view)
    if wanted != _url():
        st.query_params.from_dict(wanted)
    st.session_state[LAST_URL] = wanted
