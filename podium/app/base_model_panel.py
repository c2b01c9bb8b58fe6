"""Where a page needs a model and none is registered: a button that sets up the default
base model as a job (`podium models bootstrap` in the worker), and its live progress.
Home and every page that needs a model draw it instead of naming a shell command.
Logic: `podium.app.base_model_setup`."""

from __future__ import annotations

import streamlit as st

from podium.app.base_model_setup import (
    bootstrap_in_flight,
    last_failed_bootstrap,
    queue_bootstrap,
    setup_outcome,
)
from podium.app.feedback import empty_state, job_queued, show_error
from podium.app.job_panel import watch_job
from podium.errors import PodiumError
from podium.store.state.users import acting_user

LABEL = "Set up the base model"
WHAT = (
    "The default base model is SmolLM2-135M-Instruct, shipped with Podium: converted once "
    "(about 90 s and 1.5 GB of memory) and registered."
)


FOLLOWED = "base_model.followed"  # the setup job this session watched, for its outcome


def offer_base_model(key: str, missing: str = "No model registered yet.") -> None:
    """Say what is `missing`, then offer to set the base model up (operators), or follow
    the setup already queued; the page reruns with the model once the job succeeds, and
    `setup_done` says so there."""
    job = bootstrap_in_flight()
    if job is not None:
        st.session_state[FOLLOWED] = job["id"]
        if st.session_state.pop(f"{key}.queued", None) == job["id"]:
            job_queued(job["id"])  # queued by the click that reran the page
        st.info(f"{missing} The base model is being set up.", icon=":material/info:")
        watch_job(job["id"])
        return
    if not acting_user().can("run_job"):
        empty_state(missing, f"An operator can set it up: {LABEL} on Home.")
        return
    st.info(f"{missing} {WHAT}", icon=":material/info:")
    if (failed := last_failed_bootstrap()) is not None:
        show_error(f"The last setup (job {failed['id']}) failed: {failed['error'] or 'no reason'}")
    if st.button(LABEL, key=key, icon=":material/download:", type="primary"):
        try:
            job_id = queue_bootstrap()  # checks the role again
        except PodiumError as exc:
            show_error(exc)
            return
        st.session_state[f"{key}.queued"] = job_id
        # Again from the top: what the page drew above it (Home's count of jobs) now
        # includes the job, and the panel follows it.
        st.rerun()


def setup_done() -> None:
    """Once the setup this session followed has succeeded, say so (once): the panel that
    followed it is gone by then, since a base model is registered."""
    followed = st.session_state.get(FOLLOWED)
    if followed is None:
        return
    done = setup_outcome(str(followed))
    if done is not None:
        st.session_state.pop(FOLLOWED, None)
        st.success(done, icon=":material/check_circle:")
