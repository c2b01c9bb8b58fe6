"""A job's live status on the page that queued it: status, progress, the error in the
one error format, and once it succeeded the links that carry its outputs to the next
page. Polls in a fragment, so the job runs in the worker and the page only watches."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from podium.app.feedback import show_error
from podium.app.job_tray_model import STATUS_ICONS
from podium.app.pages import page_file
from podium.app.safe_markdown import code_span, escape_markdown
from podium.jobs.logbook import progress_fraction, progress_text
from podium.jobs.logbook import table_links as table_links  # a next step's tables
from podium.jobs.queue import Job as Job  # what `watch_job` hands a next step
from podium.jobs.queue import get_job
from podium.jobs.tables import ACTIVE as ACTIVE  # queued, running, cancelling

REFRESH_SECONDS = 2.0
T = TypeVar("T")


def redrawn_while_active(
    state: Callable[[], T],
    draw: Callable[[], None],
    active: Callable[[T], bool],
    idle_every: float | None = None,
) -> None:
    """Draw `draw()` in a fragment redrawn every REFRESH_SECONDS while `active(state())`,
    else every `idle_every` s, by default never: a finished job's page stays still (it
    was a run of the server every 2 s a tab, for nothing). Once `state()` differs from
    what the page's own run read, the whole page reruns instead of the fragment, so the
    timer follows the job (one that ended stops its own) and so does whatever lies outside
    the fragment. It reruns before drawing: what the fragment drew would stand beside the
    page's new run's (two of each button) until that run ended."""
    shown = state()

    @st.fragment(run_every=REFRESH_SECONDS if active(shown) else idle_every)
    def live() -> None:
        if state() != shown:
            st.rerun()
        draw()

    live()


def watch_job(job_id: str, next_steps: Callable[[Job], None] | None = None) -> None:
    """Draw job `job_id`, refreshed until it finishes; `next_steps(job)` draws the links
    offered once it succeeded. The whole page reruns when the job ends, so what it wrote
    shows everywhere on it."""

    def draw() -> None:
        job = get_job(job_id)
        icon = STATUS_ICONS.get(job["status"], "")
        st.markdown(
            f"{icon} Job {code_span(job['id'])} ({escape_markdown(job['kind'])}) "
            f"**{escape_markdown(job['status'])}**"
        )
        if job["status"] in ACTIVE:
            st.progress(progress_fraction(job) or 0.0, text=escape_markdown(progress_text(job)))
        if job["error"]:
            show_error(job["error"])
        if job["status"] == "succeeded" and next_steps is not None:
            next_steps(job)
        st.page_link(
            page_file("logbook"),
            label="Details in the Logbook",
            icon=":material/history:",
            query_params={"job": job["id"]},
        )

    redrawn_while_active(lambda: job_active(job_id), draw, active=bool)


def job_active(job_id: str) -> bool:
    return get_job(job_id)["status"] in ACTIVE


def page_link(page: str, label: str, icon: str, **params: object) -> None:
    """A link to another page that carries `params` as its query string."""
    query = {k: str(v) for k, v in params.items() if v not in (None, "")}
    st.page_link(page_file(page), label=label, icon=icon, query_params=query)
