"""What the job tray shows, without Streamlit: running jobs first, then recent ones,
each with a one-line label, its progress and where to open it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from podium.jobs.logbook import progress_fraction, progress_text
from podium.jobs.queue import Job
from podium.jobs.tables import ACTIVE

RECENT = timedelta(hours=24)
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


def tray_items(jobs: list[Job], at: datetime, shown: int = 6) -> list[TrayItem]:
    """Active jobs (oldest first: the one running now leads), then jobs that finished in
    the last day, newest first; at most `shown` in all."""
    active = sorted((j for j in jobs if j["status"] in ACTIVE), key=lambda j: j["created_at"])
    recent = [
        j
        for j in jobs
        if j["status"] not in ACTIVE and (j["finished_at"] or j["created_at"]) >= at - RECENT
    ]
    items = []
    for job in (active + recent)[:shown]:
        detail = progress_text(job)
        items.append(
            TrayItem(
                job_id=job["id"],
                kind=job["kind"],
                status=job["status"],
                label=f"{job['kind']} · {job['status']}"
                + ("" if detail == "-" else f" · {detail}"),
                progress=progress_fraction(job),
                active=job["status"] in ACTIVE,
            )
        )
    return items
