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


def offer_base_model(key: str, missing: str = "No model registered yet.") -> None:
    """Say what is `missing`, then offer to set the base model up (operators), or follow
    the setup already queued; the page reruns with the model once the job succeeds."""
    job = bootstrap_in_flight()
    if job is not None:
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
        job_queued(job_id)
        watch_job(job_id)
