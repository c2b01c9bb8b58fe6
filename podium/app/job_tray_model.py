"""What the job tray shows, without Streamlit: running jobs first, then recent ones,
each with a one-line label, its progress and where to open it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from podium.app.shared_read import SharedRead
from podium.jobs.lanes import waiting_reason
from podium.jobs.progress import progress_fraction, progress_text
from podium.jobs.queue import Job, list_jobs
from podium.jobs.tables import ACTIVE

RECENT = timedelta(hours=24)
TRAY_JOBS = 30  # read for the tray (it shows `tray_items`' `shown` of them)
SHARED_SECONDS = 1.0  # how long one read of a user's jobs serves every tab of that user
STATUS_ICONS = {
    "queued": ":material/schedule:",
    "running": ":material/play_circle:",
    "cancelling": ":material/pending:",
    "succeeded": ":material/check_circle:",
    "failed": ":material/error:",
    "cancelled": ":material/cancel:",
}


@dataclass(frozen=True)
class TrayItem:
    job_id: str
    kind: str
    status: str
    label: str
    progress: float | None
    active: bool
    waiting: str | None = None  # why a queued job has not started (already in `label`)


def tray_items(
    jobs: list[Job], at: datetime, shown: int = 6, everyone_active: list[Job] | None = None
) -> list[TrayItem]:
    """Active jobs (oldest first: the one running now leads), then jobs that finished in
    the last day, newest first; at most `shown` in all. A queued job says
    what it waits for, from `everyone_active` (every user's queued and running jobs,
    `podium.jobs.queue.active_jobs()`; default: the active ones among `jobs`)."""
    active = sorted((j for j in jobs if j["status"] in ACTIVE), key=lambda j: j["created_at"])
    pool = everyone_active if everyone_active is not None else active
    recent = [
        j
        for j in jobs
        if j["status"] not in ACTIVE and (j["finished_at"] or j["created_at"]) >= at - RECENT
    ]
    items = []
    for job in (active + recent)[:shown]:
        detail = progress_text(job, at)
        waiting = waiting_reason(job, pool)
        if waiting:
            detail = waiting
        items.append(
            TrayItem(
                job_id=job["id"],
                kind=job["kind"],
                status=job["status"],
                label=f"{job['kind']} · {job['status']}"
                + ("" if detail == "-" else f" · {detail}"),
                progress=progress_fraction(job),
                active=job["status"] in ACTIVE,
                waiting=waiting,
            )
        )
    return items


def _users_jobs(user: str) -> list[Job]:
    return list_jobs(limit=TRAY_JOBS, submitted_by=user)


# The tray polls in every tab: ten tabs of one user every 2 s read the job table once a
# second between them, not five times.
tray_jobs: SharedRead[str, list[Job]] = SharedRead(SHARED_SECONDS, _users_jobs)


def has_active(jobs: list[Job]) -> bool:
    """Whether any of `jobs` is queued or running (the tray then polls faster)."""
    return any(j["status"] in ACTIVE for j in jobs)
