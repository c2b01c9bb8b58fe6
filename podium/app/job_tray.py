"""The job tray: the acting user's running and recent jobs in the sidebar of every page, with
live progress and a link to each job's Logbook entry. It polls the job table (a fragment,
so the page around it does not rerun): every 2 s while one of the user's jobs is queued or
running, every 10 s otherwise. Every tab of one user shares one read per second
(`job_tray_model.tray_jobs`); a page's own run reads afresh, so a job it queued shows at
once."""

from __future__ import annotations

import streamlit as st

from podium.app.job_tray_model import STATUS_ICONS, has_active, tray_items, tray_jobs
from podium.app.pages import page_file
from podium.app.safe_markdown import escape_markdown
from podium.jobs.queue import now
from podium.store.state.users import acting_user

REFRESH_SECONDS = 2.0  # while a job of the user's is queued or running
IDLE_REFRESH_SECONDS = 10.0  # otherwise: a job queued from the CLI shows within this


def job_tray() -> None:
    jobs = tray_jobs.fresh(acting_user().name)
    (_busy_tray if has_active(jobs) else _idle_tray)()


def _draw() -> None:
    items = tray_items(tray_jobs.get(acting_user().name), now())
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


@st.fragment(run_every=REFRESH_SECONDS)
def _busy_tray() -> None:
    _draw()


@st.fragment(run_every=IDLE_REFRESH_SECONDS)
def _idle_tray() -> None:
    _draw()
