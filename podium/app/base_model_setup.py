"""Setting up the default base model from the browser, without Streamlit: whether a
page must offer it, the bootstrap job already under way, and queueing one (an
operator's action, like every job). The widget is `podium.app.base_model_panel`."""

from __future__ import annotations

from podium.identity import require
from podium.jobs.logbook import submit_config
from podium.jobs.queue import Job, active_jobs, get_job, list_jobs
from podium.models import list_models
from podium.store.state.users import acting_user

KIND = "bootstrap"


def base_model_missing() -> bool:
    """True while no base model is registered (the pages that need one offer it then)."""
    return not any(m.kind == "base" for m in list_models())


def bootstrap_in_flight() -> Job | None:
    """The queued or running bootstrap job, if any (a second click follows it instead
    of queueing another)."""
    return next((job for job in active_jobs() if job["kind"] == KIND), None)


def last_failed_bootstrap() -> Job | None:
    """The newest bootstrap job, when it failed (the page says why beside the button)."""
    newest = next((job for job in list_jobs(limit=50) if job["kind"] == KIND), None)
    return newest if newest is not None and newest["status"] == "failed" else None


def queue_bootstrap() -> str:
    """Queue the bootstrap job (or return the one already queued); needs run_job."""
    require(acting_user(), "run_job")
    if (job := bootstrap_in_flight()) is not None:
        return str(job["id"])
    return submit_config(KIND, {}, notes="Set up from the app.")


def setup_outcome(job_id: str) -> str | None:
    """What a page says once the setup it followed (job `job_id`) has ended well: the
    base model's name, registered by that job; None while it runs or when it did not
    succeed (the job's own panel says why)."""
    job = get_job(job_id)
    if job["status"] != "succeeded":
        return None
    bases = [m.label for m in list_models() if m.kind == "base"]
    if not bases:
        return None
    return f"The base model is set up: {', '.join(bases)} is registered (job {job_id})."
