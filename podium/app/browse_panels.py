"""The Browse page's two heavier panels: table statistics with charts, and a sample's
validation failures. Layout only; the numbers come from `podium.store.stats`,
`podium.validate.report` and `podium.app.browse_model`."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from podium.app import browse_model as bm
from podium.config import get_settings
from podium.errors import PodiumError
from podium.store.query import page
from podium.store.stats import TableStats, table_stats
from podium.validate.report import report_for


@st.cache_data(max_entries=32, show_spinner="Computing statistics…")
def _cached_stats(
    catalog_uri: str, table: str, snapshot: int | None, filters_json: str
) -> TableStats:
    """Stats of the rows passing the view's search and filters. A snapshot never
    changes, so catalog, table, snapshot and filters name the result for good; it is a
    few hundred bytes (the length distribution comes back binned)."""
    return table_stats(table, snapshot, **bm.stats_filters(filters_json))


def stats_panel(name: str, sid: int | None, view: bm.ViewState | None = None) -> None:
    try:
        key = bm.stats_filters_key(view) if view else bm.stats_filters_key(bm.ViewState())
        stats = _cached_stats(get_settings().catalog_uri, name, sid, key)
        histogram = stats.length_bins
    except PodiumError as exc:
        st.info(str(exc))
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
        st.bar_chart(pd.DataFrame(stats.turn_counts), x="turns", y="rows")
        if stats.sources:
            st.markdown("**Sources**")
            sources = pd.DataFrame(stats.sources).fillna({"source": "(none)"})
            st.bar_chart(sources, x="source", y="rows", horizontal=True)


def failures_panel(name: str, sid: int | None, sample: str) -> None:
    report = report_for(name, sid)
    if report is None:
        return
    failures = page(report, ids=[sample], limit=1000).rows
    if not failures:
        st.caption(f":white_check_mark: Passed validation ({report}).")
        return
    lines = []
    for f in failures:
        where = f"line {f['line']}, column {f['column']}" if f.get("line") is not None else ""
        lines.append(
            f"- turn {f['turn']} ({f['role']}) · `{f['rule']}` · {f['kind']}: "
            f"{f['message']}" + (f" ({where})" if where else "")
        )
    st.markdown(f"**Validation failures** ({report})\n" + "\n".join(lines))
