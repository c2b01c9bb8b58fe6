"""Run one job on a launch backend from this process and follow it to the end.

    podium generate ... --launcher ray        # or `launcher: ray` in a card + `podium run`

The job is recorded and claimed like any queued job, launched on the backend, and
watched by the worker's own loop (heartbeats, cancel, a process that died without an
outcome), so its Logbook entry reads exactly as if `podium worker` had run it. Ctrl-C
here asks for a cancel and stops the job on the backend.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

from podium.errors import InvalidInput
from podium.jobs.cards import Card
from podium.jobs.launchers import get_launcher
from podium.jobs.queue import Job, create_job, get_job, now, request_cancel, transition
from podium.jobs.worker import Worker

POLL_S = 1.0


def claim(job_id: str, launcher: str) -> Job:
    """Mark this queued job running for `launcher` (no other worker takes it then)."""
    job = get_job(job_id)
    claimed = transition(
        job_id,
        "running",
        when=("queued",),
        message=f"launched from {socket.gethostname()} pid {os.getpid()} on {launcher}",
        started_at=now(),
        worker_pid=os.getpid(),
        host=socket.gethostname(),
        launcher=launcher,
        attempt=job["attempt"] + 1,
        pgid=None,
    )
    if not claimed:
        raise InvalidInput(f"Job {job_id} is no longer queued; a worker took it.")
    return get_job(job_id)


def run_on(
    card: Card,
    launcher_name: str,
    say: Callable[[str], None] = print,
    on_progress: Callable[[Job], None] | None = None,
) -> Job:
    """Record `card`, run it on `launcher_name`, follow it; returns the final record."""
    launcher = get_launcher(launcher_name)
    job_id = create_job(card, status="queued")
    job = claim(job_id, launcher.name)
    worker = Worker(launcher=launcher, poll=POLL_S, say=say)
    try:
        worker.running[job_id] = launcher.launch(job)
    except Exception as exc:
        transition(job_id, "failed", error=f"could not launch: {exc}", message=str(exc))
        raise
    try:
        while worker.running:
            worker.watch()
            if on_progress is not None:
                on_progress(get_job(job_id))
            worker.stop_event.wait(POLL_S)
    except KeyboardInterrupt:
        say(f"job {job_id}: cancelling")
        request_cancel(job_id)
        worker.watch()  # sees `cancelling` and stops the job on the backend
    return get_job(job_id)
