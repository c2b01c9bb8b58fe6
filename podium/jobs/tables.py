"""The SQL tables that hold job state, beside the Iceberg catalog.

`jobs` is one row per run (its card, status, progress, heartbeat and outcome);
`job_events` keeps every status change; `job_metrics` and `job_samples` hold what a
running job reports; `job_requests` what people ask of a running job besides a cancel
(`podium jobs scale`: a replica count), which the job reads and answers. Logs are plain
files under `$PODIUM_HOME/jobs/<id>/log.txt`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, DateTime, Engine, Float, Integer, Row, String, Table, Text, select

from podium.store.state.state import METADATA, engine

# queued -> running -> succeeded | failed | cancelled; running -> cancelling -> cancelled.
STATUSES = ("queued", "running", "cancelling", "succeeded", "failed", "cancelled")
ACTIVE = ("queued", "running", "cancelling")
FINISHED = ("succeeded", "failed", "cancelled")
WARNING = "warning"  # a job event that is no status change: what the job warned about

jobs = Table(
    "podium_jobs",
    METADATA,
    Column("id", String(64), primary_key=True),
    Column("kind", String(64), nullable=False),
    Column("status", String(16), nullable=False, index=True),
    Column("card", Text, nullable=False),  # the pinned run card, enough to re-run exactly
    Column("config", Text, nullable=False),  # JSON of the validated config
    Column("inputs", Text, nullable=False, default="[]"),  # JSON list of "table@snapshot"
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("started_at", DateTime(timezone=True)),
    Column("finished_at", DateTime(timezone=True)),
    Column("heartbeat_at", DateTime(timezone=True)),
    Column("launcher", String(16)),
    Column("host", String(255)),
    Column("worker_pid", Integer),
    Column("pgid", Integer),
    Column("attempt", Integer, nullable=False, default=0),
    Column("progress_done", Integer),
    Column("progress_total", Integer),
    Column("progress_message", Text),
    Column("progress_at", DateTime(timezone=True)),  # when progress_done last changed
    Column("error", Text),
    Column("outputs", Text),  # JSON of JobOutputs, output tables pinned to snapshots
    Column("log_path", Text, nullable=False),
    # The user who queued it (podium.identity); jobs from before identities have none.
    Column("submitted_by", String(255), index=True),
)


def _per_job(name: str, *columns: Column[Any]) -> Table:
    """A table of what a job writes as it runs: a row id, the job's id, then `columns`."""
    return Table(
        name,
        METADATA,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("job_id", String(64), nullable=False, index=True),
        *columns,
    )


def _at() -> Column[Any]:
    """When the row was written."""
    return Column("at", DateTime(timezone=True), nullable=False)


job_events = _per_job(
    "podium_job_events",
    _at(),
    Column("status", String(16), nullable=False),
    Column("message", Text),
)
job_metrics = _per_job(
    "podium_job_metrics",
    Column("step", Integer, nullable=False),
    Column("name", String(255), nullable=False),
    Column("value", Float, nullable=False),
    _at(),
)
job_samples = _per_job(
    "podium_job_samples",
    Column("step", Integer, nullable=False),
    Column("values", Text, nullable=False),  # JSON object
    _at(),
)
job_requests = _per_job(
    "podium_job_requests",
    Column("what", String(32), nullable=False),  # "replicas"
    Column("value", Integer, nullable=False),
    Column("requested_by", String(255), nullable=False),
    _at(),
    # The job's answer ("done" or "refused"), what it did in words, and when.
    Column("outcome", String(16)),
    Column("note", Text),
    Column("answered_at", DateTime(timezone=True)),
)


def db() -> Engine:
    """The state database with the job tables in it."""
    return engine()


def rows_of_job(
    table: Table, job_id: str, columns: Sequence[str], *, last: int | None = None
) -> list[Row[Any]]:
    """`columns` of a job's rows in `table` (its events, metrics or samples) in the order
    they were written; with `last`, only the last so many."""
    query = select(*(table.c[name] for name in columns)).where(table.c.job_id == job_id)
    if last is not None:
        query = query.order_by(table.c.id.desc()).limit(last)
    else:
        query = query.order_by(table.c.id)
    with db().connect() as conn:
        rows = list(conn.execute(query).all())
    return rows[::-1] if last is not None else rows


def last_metrics(job_id: str) -> dict[str, float]:
    """Each metric's last reported value."""
    return {name: value for _, name, value in metric_rows(job_id)}


def warnings_of(job_id: str) -> list[str]:
    """What the job warned about, in order (`JobReporter.warn`)."""
    rows = rows_of_job(job_events, job_id, ("status", "message"))
    return [str(r.message or "") for r in rows if r.status == WARNING]


def metric_rows(job_id: str) -> list[tuple[int, str, float]]:
    """Every metric a job reported, as (step, name, value), in the order reported."""
    rows = rows_of_job(job_metrics, job_id, ("step", "name", "value"))
    return [(int(r.step), str(r.name), float(r.value)) for r in rows]
