"""Logbook page: every job with status, progress, duration and kind; one job's card,
inputs and outputs (links into Browse), live log tail, metrics and samples; cancel,
re-run from the card, and a "new job" form generated from a kind's config model.

Everything shown comes from `podium.jobs.logbook` and `podium.jobs.queue`.
"""

from __future__ import annotations

import streamlit as st

from podium.app import widgets
from podium.app.forms import queue_form
from podium.jobs import logbook as lb
from podium.jobs.logs import log_tail
from podium.jobs.queue import Job, get_job, list_jobs, request_cancel
from podium.jobs.tables import ACTIVE
from podium.store.catalog import list_tables

SELECT = "logbook.select"  # the job selectbox
GOTO = "logbook.goto"  # a job to select on the next run (just queued or re-run)
STATUS_ICONS = {
    "queued": ":material/schedule:",
    "running": ":material/play_circle:",
    "cancelling": ":material/pending:",
    "succeeded": ":material/check_circle:",
    "failed": ":material/error:",
    "cancelled": ":material/cancel:",
}


def new_job_form() -> None:
    with st.expander("New job", icon=":material/add:"):
        kinds = lb.kind_names()
        kind = st.selectbox("Kind", kinds, key="logbook.new.kind")
        try:
            lb.kind_model(kind)  # a kind whose module cannot load here is named, not crashed on
        except ImportError as exc:
            st.error(f"The {kind!r} kind cannot be loaded here: {exc}")
            return
        job_id = queue_form(kind, f"logbook.new.{kind}", tables=list_tables())
        if job_id is not None:
            st.session_state[GOTO] = job_id
            st.success(f"Queued job {job_id}; a worker (`podium worker`) will run it.")


def job_table(jobs: list[Job]) -> None:
    st.dataframe(
        lb.job_rows(jobs),
        hide_index=True,
        column_config={
            "progress": st.column_config.ProgressColumn("progress", min_value=0, max_value=1),
        },
    )


def job_detail(job_id: str) -> None:
    job = get_job(job_id)
    st.subheader(f"{job['kind']} · {job['id']}")
    cols = st.columns(4)
    cols[0].markdown(f"{STATUS_ICONS.get(job['status'], '')} **{job['status']}**")
    cols[1].caption(f"duration {lb.duration_text(job)}")
    cols[2].caption(f"attempt {job['attempt']} · {job['launcher'] or 'not started'}")
    with cols[3]:
        actions(job)
    fraction = lb.progress_fraction(job)
    if fraction is not None:
        st.progress(fraction, text=lb.progress_text(job))
    if job["error"]:
        st.error(job["error"].split("\n--- log tail ---")[0])
    links = lb.table_links(job)
    for column, title in zip(st.columns(2), ("inputs", "outputs"), strict=True):
        with column:
            st.markdown(f"**{title.capitalize()}**")
            for name, snapshot in links[title]:
                widgets.browse_link(name, snapshot=snapshot, label=f"{name}@{snapshot}")
            if not links[title]:
                st.caption("none")
    st.markdown("**Run card**")
    st.code(job["card"], language="markdown")
    live_panel(job["id"])
    with st.expander("Status history"):
        st.dataframe(lb.events(job["id"]), hide_index=True)


def actions(job: Job) -> None:
    active = job["status"] in ACTIVE
    if active and st.button("Cancel", key="logbook.cancel", icon=":material/stop:"):
        request_cancel(job["id"])
        st.rerun()
    if st.button("Re-run from card", key="logbook.rerun", icon=":material/replay:"):
        st.session_state[GOTO] = lb.rerun(job["id"])
        st.rerun()


@st.fragment(run_every=2)
def live_panel(job_id: str) -> None:
    """Log tail, metrics and samples, refreshed while the page is open."""
    st.markdown("**Log**")
    st.code(log_tail(get_job(job_id)["log_path"], 40) or "(empty)", language="log")
    metrics = lb.metrics_frame(job_id)
    if not metrics.empty:
        st.markdown("**Metrics**")
        st.line_chart(metrics)
    samples = lb.samples(job_id)
    if samples:
        st.markdown("**Samples**")
        st.dataframe(samples, hide_index=True)


st.title("Logbook")
new_job_form()
jobs = list_jobs()
if not jobs:
    st.info("No jobs yet. Queue one above, or run `podium run CARD.md` / `podium submit CARD.md`.")
else:
    job_table(jobs)
    ids = [j["id"] for j in jobs]
    goto = st.session_state.pop(GOTO, None)
    if goto in ids:
        st.session_state[SELECT] = goto
    elif st.session_state.get(SELECT) not in ids:
        linked = st.query_params.get("job")
        st.session_state[SELECT] = linked if linked in ids else ids[0]
    chosen = st.selectbox("Job", ids, key=SELECT)
    st.query_params["job"] = chosen
    job_detail(chosen)
