"""The job tray: the acting user's running and recent jobs in the sidebar of every page, with
live progress and a link to each job's Logbook entry. It polls the job table every few
seconds (a fragment, so the page around it does not rerun)."""

from __future__ import annotations

import streamlit as st

from podium.app.job_tray_model import STATUS_ICONS, tray_items
from podium.app.pages import page_file
from podium.app.safe_markdown import escape_markdown
from podium.jobs.queue import list_jobs, now
from podium.store.state.users import acting_user

REFRESH_SECONDS = 2.0


@st.fragment(run_every=REFRESH_SECONDS)
def job_tray() -> None:
    user = acting_user()
    items = tray_items(list_jobs(limit=30, submitted_by=user.name), now())
    st.markdown("**Your jobs**")
    if not items:
        st.caption("No jobs yet: what you queue on any page shows here.")
        return
    for item in items:
        st.page_link(
            page_file("logbook"),
            label=escape_markdown(item.label),  # kind, status and progress message
            icon=STATUS_ICONS.get(item.status, ":material/work:"),
            query_params={"job": item.job_id},
        )
        if item.active:
            st.progress(item.progress or 0.0)
