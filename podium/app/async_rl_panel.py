"""The async GRPO panel, drawn on the Train page (live) and in the Logbook (the run card):
the reward curve, each replica's weight version, the staleness histogram, the time of
every weight sync and the seconds it kept a replica from generating, its checksum
verdict, and a link to the rollouts table. Layout only; everything it shows is
`podium.app.async_rl_model.AsyncView`."""

from __future__ import annotations

import streamlit as st

from podium.app import widgets
from podium.app.async_rl_model import AsyncView
from podium.app.charts import bar_chart, line_chart
from podium.app.safe_markdown import escape_markdown


def async_panel(view: AsyncView, *, reward: bool = True) -> None:
    """Draw `view`; `reward=False` where the page already charts the reward."""
    st.markdown("**Async RL**")
    st.caption(view.headline())
    charts = [("Reward", view.reward)] if reward else []
    charts += [("Weight versions", view.versions)]
    charts += [("Sync seconds", view.sync_seconds)]
    charts += [("Replica idle seconds per push", view.idle_seconds)]
    shown = [(title, frame) for title, frame in charts if not frame.empty]
    for row in range(0, len(shown), 2):
        for col, (title, frame) in zip(st.columns(2), shown[row : row + 2], strict=False):
            col.markdown(f"**{title}**")
            col.altair_chart(line_chart(frame), width="stretch")
    if view.staleness.empty:
        st.caption("Staleness: no sample trained yet.")
    else:
        st.markdown("**Staleness**")
        st.caption(
            "Lag of each trained sample: the learner step that trained on it minus the "
            f"version of the weights that generated it (at most {view.max_staleness})."
        )
        st.caption(view.staleness_text())
        st.altair_chart(bar_chart(view.staleness, "lag", "samples"), width="stretch")
    if view.syncs:
        st.markdown("**Weight syncs**")
        if view.sync_failed:
            st.error("A replica's weights differ from the learner's (see checksums).")
        st.dataframe(view.sync_rows(), hide_index=True)
    else:
        st.caption("Weight syncs: listed with their checksum verdicts when the run ends.")
    if view.rollouts:
        widgets.browse_link(view.rollouts, label=f"Rollouts: {escape_markdown(view.rollouts)}")
        note = view.rollouts_note
        st.caption(escape_markdown(note[:1].upper() + note[1:] + "."))
