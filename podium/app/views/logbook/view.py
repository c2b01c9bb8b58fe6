"""Logbook page: every job with status, progress, duration and kind; one job's status,
progress, error, outputs, log tail, metrics and samples, all refreshed live; cancel,
re-run from the card, re-run with changes (the card's values in the New job form), open
an output (a table in Browse, a checkpoint in Compare against its base), an async GRPO
run's replicas, staleness histogram, weight syncs and rollouts table
(`podium.app.async_rl_model`), and a "new job" form generated from a kind's config
model. `?job=ID` opens a job.

Everything shown comes from `podium.jobs.logbook` and `podium.jobs.queue`.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from podium.app import charts, widgets
from podium.app.async_rl_model import async_view, other_metrics
from podium.app.async_rl_panel import async_panel
from podium.app.feedback import empty_state, show_error
from podium.app.forms import queue_form
from podium.app.job_panel import page_link, redrawn_while_active
from podium.app.job_tray import IDLE_REFRESH_SECONDS as IDLE_SECONDS
from podium.app.job_tray_model import STATUS_ICONS, has_active
from podium.app.roles import current_user
from podium.app.safe_markdown import code_span, escape_markdown
from podium.app.scroll import scroll_once
from podium.app.views.logbook import model

SELECT = "logbook.select"  # the job selectbox
GOTO = "logbook.goto"  # a job to select on the next run (just queued or re-run)
EDIT = "logbook.edit_job"  # a job whose card fills the New job form
KIND = "logbook.new.kind"
CANCEL_YES = "Yes, cancel the job"


def new_job_form() -> None:
    if not current_user().can("run_job"):
        return  # viewers and reviewers read the logbook; the queue refuses them anyway
    edit = st.session_state.get(EDIT)
    prefill: dict[str, Any] = {}
    if edit:
        job = model.get_job(edit)
        st.session_state[KIND] = job["kind"]
        prefill = json.loads(job["config"] or "{}")
    with st.expander("New job", icon=":material/add:", expanded=bool(edit)):
        if edit:
            st.caption(f"The values of job {code_span(edit)}; change what you need and queue it.")
        kind = st.selectbox("Kind", model.kind_names(), key=KIND)
        try:
            model.kind_model(kind)  # a kind whose module cannot load here is named, not crashed on
        except ImportError as exc:
            show_error(f"The {kind!r} kind cannot be loaded here: {exc}")
            return
        key = f"logbook.new.{kind}" + (f".{edit}" if edit else "")
        job_id = queue_form(kind, key, tables=model.list_tables(), values=prefill)
        if job_id is not None:
            st.session_state[GOTO] = job_id
            st.session_state.pop(EDIT, None)


def job_table(submitted_by: str | None) -> None:
    """Every job, redrawn every 2 s while one is queued or running and every 10 s
    otherwise (as the tray: a job queued from the CLI shows within that)."""
    redrawn_while_active(
        lambda: has_active(model.list_jobs(submitted_by=submitted_by)),
        lambda: _table(submitted_by),
        active=bool,
        idle_every=IDLE_SECONDS,
    )


def _table(submitted_by: str | None) -> None:
    jobs = model.list_jobs(submitted_by=submitted_by)
    st.dataframe(
        [
            {**row, "submitted by": j["submitted_by"]}
            for row, j in zip(model.job_rows(jobs), jobs, strict=True)
        ],
        hide_index=True,
        column_config={
            "progress": st.column_config.ProgressColumn("progress", min_value=0, max_value=1),
        },
    )


def job_detail(job_id: str) -> None:
    """Everything about one job that changes while it runs, redrawn every 2 s while it
    is queued or running; a finished job's is drawn once (its status, once changed,
    reruns the page: the history below the fragment then shows it too)."""
    redrawn_while_active(
        lambda: model.get_job(job_id)["status"], lambda: _detail(job_id), model.ACTIVE.__contains__
    )


def _detail(job_id: str) -> None:
    job = model.get_job(job_id)
    st.subheader(f"{escape_markdown(job['kind'])} · {escape_markdown(job['id'])}")
    cols = st.columns(4)
    status = escape_markdown(job["status"])
    cols[0].markdown(f"{STATUS_ICONS.get(job['status'], '')} **{status}**")
    cols[1].caption(f"duration {escape_markdown(model.duration_text(job))}")
    cols[2].caption(
        f"submitted by {escape_markdown(job['submitted_by'] or 'unknown')} · attempt "
        f"{job['attempt']} · {escape_markdown(job['launcher'] or 'not started')}"
    )
    question = st.container()  # a question a button asks, full width under the buttons
    with cols[3]:
        actions(job, question)
    fraction = model.progress_fraction(job)
    if fraction is not None:
        st.progress(fraction, text=escape_markdown(model.progress_text(job)))
    if job["error"]:
        show_error(job["error"].split("\n--- log tail ---")[0])
    for warning in model.warnings_of(job_id):  # said while it runs: a run that cannot learn
        st.warning(escape_markdown(warning), icon=":material/warning:")
    outputs(job)
    if said := model.reproducibility(job):
        st.caption(escape_markdown(said))
    st.markdown("**Log**")
    st.code(model.readable_tail(job["log_path"], 40) or "(empty)", language="log")
    metrics = model.metrics_frame(job_id)
    if (rl := async_view(job, metrics)) is not None:
        async_panel(rl)  # replicas, staleness, syncs and rollouts: the run card pins them
        metrics = other_metrics(metrics)
    if not metrics.empty:
        st.markdown("**Metrics**")
        panels = charts.metric_panels(metrics)
        for row in range(0, len(panels), 3):
            for col, (title, data) in zip(st.columns(3), panels[row : row + 3], strict=False):
                col.caption(escape_markdown(title))
                col.altair_chart(charts.line_chart(data), width="stretch")
    samples = model.samples(job_id)
    if samples:
        st.markdown("**Samples**")
        st.dataframe(samples, hide_index=True)


def outputs(job: model.Job) -> None:
    shown = model.outputs_of(job)
    inputs_col, outputs_col = st.columns(2)
    with inputs_col:
        st.markdown("**Inputs**")
        for name, snapshot in shown.inputs:
            widgets.browse_link(
                name, snapshot=snapshot, label=escape_markdown(f"{name}@{snapshot}")
            )
        if not shown.inputs:
            st.caption("none")
    with outputs_col:
        st.markdown("**Outputs**")
        for name, snapshot in shown.tables:
            widgets.browse_link(
                name, snapshot=snapshot, label=escape_markdown(f"{name}@{snapshot}")
            )
        if shown.partial:
            st.warning(f"Partial: {escape_markdown(shown.partial)}", icon=":material/timelapse:")
        state = "registered, partial" if shown.partial else "registered"
        for checkpoint in shown.checkpoints:
            st.markdown(f":material/model_training: checkpoint {code_span(checkpoint)} ({state})")
            # On the prompts it was trained on: a table known to hold user turns.
            page_link(
                "compare",
                f"Compare {escape_markdown(checkpoint)} with {escape_markdown(shown.base)}",
                ":material/compare:",
                models=shown.compare_models(checkpoint),
                table=shown.trained_on,
            )
        if shown.empty_text:
            st.caption(shown.empty_text)


def actions(job: model.Job, question_spot: DeltaGenerator) -> None:
    user = current_user()
    if not user.can("run_job"):
        return
    just_asked = (
        job["status"] in model.ACTIVE
        and model.may_cancel(user, job)
        and st.button("Cancel", key="logbook.cancel", icon=":material/stop:")
    )
    if just_asked:
        st.session_state["logbook.cancel.ask"] = job["id"]
    if st.session_state.get("logbook.cancel.ask") not in (None, job["id"]):
        st.session_state.pop("logbook.cancel.ask")  # asked about another job
    question = f"Cancel job {job['id']} ({job['kind']}, {job['status']})? This cannot be undone."
    # Under the button at the page's full width (a quarter column made it tall enough to
    # end below the fold), and scrolled into view on the run that asked.
    with question_spot:
        if widgets.ask_first("logbook.cancel.ask", question, CANCEL_YES):
            model.request_cancel(job["id"])
            st.rerun()  # the header above was drawn before the click
        if just_asked:
            scroll_once(button=CANCEL_YES)
    # Re-run is for a finished job (this one has not run yet); a changed copy is not.
    if job["status"] not in model.ACTIVE and st.button(
        "Re-run",
        key="logbook.rerun",
        icon=":material/replay:",
        help="Its card again; a succeeded job's outputs get new names (<out>__rerun_<n>)",
    ):
        st.session_state[GOTO] = model.rerun(job["id"])
        st.rerun()
    if st.button("Re-run with changes", key="logbook.edit", icon=":material/edit:"):
        st.session_state[EDIT] = job["id"]
        st.rerun()


st.title("Logbook")
new_job_form()
jobs = model.list_jobs()
if not jobs:
    empty_state("No jobs yet.", "Queue one above, or run `podium submit CARD.md`.")
else:
    everyone = "everyone"
    who = st.selectbox("Submitted by", [everyone, *model.submitters()], key="logbook.submitter")
    job_table(None if who == everyone else who)
    ids = [j["id"] for j in jobs]
    goto = st.session_state.pop(GOTO, None)
    linked = st.query_params.get("job")
    if goto in ids:
        st.session_state[SELECT] = goto
    elif linked in ids and st.session_state.get(SELECT + ".linked") != linked:
        st.session_state[SELECT] = st.session_state[SELECT + ".linked"] = linked
    elif st.session_state.get(SELECT) not in ids:
        st.session_state[SELECT] = ids[0]
    chosen = st.selectbox("Job", ids, key=SELECT)
    st.query_params["job"] = chosen
    st.session_state[SELECT + ".linked"] = chosen
    job_detail(chosen)
    with st.expander("Run card and status history"):
        job = model.get_job(chosen)
        st.code(job["card"], language="markdown")
        st.dataframe(model.events(chosen), hide_index=True)
