"""A job as the queue hands it out: one row of `podium_jobs` (tables.py), typed.

Its own module, importing nothing of Podium, so that what receives a job (launchers,
plugins' launchers, pages) can name the type without importing the queue.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict


class Job(TypedDict):
    """A row of `podium_jobs` (tables.py) as the queue hands it out: times in UTC, the
    JSON of `inputs` and `outputs` decoded (`config` stays the JSON text it was stored as)."""

    id: str
    kind: str
    status: str  # one of tables.ACTIVE or tables.FINISHED
    card: str  # the pinned run card, enough to re-run exactly
    config: str  # JSON of the validated config
    inputs: list[str]  # "table@snapshot" of every input
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    launcher: str | None
    host: str | None
    worker_pid: int | None
    pgid: int | None
    attempt: int
    progress_done: int | None
    progress_total: int | None
    progress_message: str | None
    progress_at: datetime | None  # when progress_done last changed
    error: str | None
    outputs: dict[str, Any] | None  # JobOutputs as JSON, output tables pinned to snapshots
    log_path: str
    submitted_by: str | None  # None: queued before identities
