"""Job records: submit, claim, change status, cancel, find stale ones.

Every status change is one conditional UPDATE (`... WHERE status IN (...)`), so two
workers, the CLI and the app can act on the same job without locks: whoever changes
the row first wins, the others see zero rows updated.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, overload

from sqlalchemy import Engine, RowMapping, insert, select, update

from podium.config import get_settings
from podium.errors import InvalidInput, NotFound, PermissionDenied
from podium.identity import User, require
from podium.jobs.cards import Card, table_refs
from podium.jobs.environment import capture, warn_differences
from podium.jobs.preflight import checked_card
from podium.jobs.record import Job as Job  # re-exported: the queue hands jobs out
from podium.jobs.tables import ACTIVE, FINISHED, db, job_events, jobs
from podium.processes import PidFile, find, kill_orphaned_group
from podium.store.state.users import acting_user


def now() -> datetime:
    return datetime.now(UTC)


@overload
def as_utc(value: datetime) -> datetime: ...
@overload
def as_utc(value: None) -> None: ...
def as_utc(value: datetime | None) -> datetime | None:
    """SQLite hands datetimes back naive; they were written as UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def job_dir(job_id: str) -> Path:
    return get_settings().home / "jobs" / job_id


def new_job_id(kind: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", kind.lower())[:16].strip("-") or "job"
    return f"{now():%Y%m%d-%H%M%S}-{slug}-{secrets.token_hex(2)}"  # also a directory name


def create_job(card: Card, *, status: str = "queued", user: User | None = None) -> str:
    """Record a job for `card` (after its preflight, unless `checked_card` ran it already:
    inputs pinned, the kind's checks), submitted by `user` (default: whoever is acting),
    who must be allowed to run jobs."""
    user = user or acting_user()
    require(user, "run_job")
    card = checked_card(card)
    config = card.config
    pinned = Card(card.kind, config, card.notes, capture(config))
    drift = warn_differences(card.environment, pinned.environment or {})
    job_id = new_job_id(card.kind)
    log_path = job_dir(job_id) / "log.txt"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.touch()
    if drift:  # the job's own log says why its results may differ
        log_path.write_text("environment differs from the card's: " + "; ".join(drift) + "\n")
    at = now()
    values: dict[str, Any] = {
        "id": job_id,
        "kind": card.kind,
        "status": status,
        "card": pinned.text(),
        "config": config.model_dump_json(),
        "inputs": json.dumps([str(ref) for ref in table_refs(config)]),
        "created_at": at,
        "attempt": 0,
        "log_path": str(log_path),
        "submitted_by": user.name,
    }
    if status == "running":
        values.update(
            started_at=at, heartbeat_at=at, launcher="foreground", host=socket.gethostname()
        )
    eng = db()
    with eng.begin() as conn:
        conn.execute(insert(jobs).values(**values))
        conn.execute(insert(job_events).values(job_id=job_id, at=at, status=status))
    return job_id


def get_job(job_id: str, eng: Engine | None = None) -> Job:
    """The job with this id, or with this unique id prefix."""
    eng = eng or db()
    with eng.connect() as conn:
        row = conn.execute(select(jobs).where(jobs.c.id == job_id)).first()
        if row is None and job_id:
            rows = conn.execute(
                select(jobs).where(jobs.c.id.startswith(job_id, autoescape=True)).limit(2)
            ).all()
            if len(rows) == 1:
                row = rows[0]
            elif len(rows) > 1:
                raise InvalidInput(f"Job id prefix {job_id!r} matches several jobs; give more.")
    if row is None:
        raise NotFound(f"No job {job_id!r}. List jobs with `podium jobs`.")
    return _as_job(row._mapping)


def list_jobs(
    limit: int = 200, status: str | None = None, submitted_by: str | None = None
) -> list[Job]:
    """Jobs, newest first; a running job whose process is gone is marked first."""
    fail_dead_jobs()
    query = select(jobs).order_by(jobs.c.created_at.desc(), jobs.c.id.desc()).limit(limit)
    if status:
        query = query.where(jobs.c.status == status)
    if submitted_by:
        query = query.where(jobs.c.submitted_by == submitted_by)
    with db().connect() as conn:
        return [_as_job(row._mapping) for row in conn.execute(query)]


def active_jobs() -> list[Job]:
    """Every user's queued and running jobs, oldest first (what a queued job waits for)."""
    query = select(jobs).where(jobs.c.status.in_(ACTIVE)).order_by(jobs.c.created_at, jobs.c.id)
    with db().connect() as conn:
        return [_as_job(row._mapping) for row in conn.execute(query)]


def _as_job(row: RowMapping) -> Job:
    return Job(
        id=row["id"],
        kind=row["kind"],
        status=row["status"],
        card=row["card"],
        config=row["config"],
        inputs=json.loads(row["inputs"] or "[]"),
        created_at=as_utc(row["created_at"]),
        started_at=as_utc(row["started_at"]),
        finished_at=as_utc(row["finished_at"]),
        heartbeat_at=as_utc(row["heartbeat_at"]),
        launcher=row["launcher"],
        host=row["host"],
        worker_pid=row["worker_pid"],
        pgid=row["pgid"],
        attempt=row["attempt"],
        progress_done=row["progress_done"],
        progress_total=row["progress_total"],
        progress_message=row["progress_message"],
        progress_at=as_utc(row["progress_at"]),
        error=row["error"],
        outputs=json.loads(row["outputs"]) if row["outputs"] else None,
        log_path=row["log_path"],
        submitted_by=row["submitted_by"],
    )


def job_json(job: Job) -> dict[str, Any]:
    """A job as plain JSON values (for --json and the app)."""
    out = dict(job)
    for key, value in out.items():
        if isinstance(value, datetime):
            out[key] = value.isoformat()
    out["config"] = json.loads(job["config"])
    return out


def transition(
    job_id: str,
    to: str,
    *,
    when: tuple[str, ...] = ACTIVE,
    message: str | None = None,
    eng: Engine | None = None,
    **fields: Any,
) -> bool:
    """Set status `to` if the job is in one of `when`; False if someone got there first."""
    eng = eng or db()
    at = now()
    if to in FINISHED:
        fields.setdefault("finished_at", at)
    if to == "running":
        fields.setdefault("heartbeat_at", at)
    with eng.begin() as conn:
        done = conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id, jobs.c.status.in_(when))
            .values(status=to, **fields)
        ).rowcount
        if done:
            conn.execute(
                insert(job_events).values(job_id=job_id, at=at, status=to, message=message)
            )
    return bool(done)


def claim_next(
    worker_pid: int, launcher: str, exclude_kinds: tuple[str, ...] | list[str] = ()
) -> Job | None:
    """Take the oldest queued job for this worker (of a kind not in `exclude_kinds`: a
    full heavy lane excludes training), or None if there is none."""
    eng = db()
    while True:
        query = select(jobs.c.id, jobs.c.attempt).where(jobs.c.status == "queued")
        if exclude_kinds:
            query = query.where(jobs.c.kind.not_in(list(exclude_kinds)))
        with eng.connect() as conn:
            row = conn.execute(query.order_by(jobs.c.created_at, jobs.c.id).limit(1)).first()
        if row is None:
            return None
        claimed = transition(
            row.id,
            "running",
            when=("queued",),
            message=f"claimed by worker {worker_pid} on {socket.gethostname()}",
            eng=eng,
            started_at=now(),
            worker_pid=worker_pid,
            host=socket.gethostname(),
            launcher=launcher,
            attempt=row.attempt + 1,
            pgid=None,
        )
        if claimed:
            return get_job(row.id, eng)


def set_fields(job_id: str, **fields: Any) -> None:
    with db().begin() as conn:
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(**fields))


def heartbeat(job_id: str, eng: Engine | None = None) -> str | None:
    """Mark the job alive; returns its status (None if it vanished)."""
    eng = eng or db()
    with eng.begin() as conn:
        conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id, jobs.c.status.in_(("running", "cancelling")))
            .values(heartbeat_at=now())
        )
        return conn.execute(select(jobs.c.status).where(jobs.c.id == job_id)).scalar()


def submitters() -> list[str]:
    """Everyone who has submitted a job, for the logbook's filter."""
    with db().connect() as conn:
        query = select(jobs.c.submitted_by).where(jobs.c.submitted_by.is_not(None)).distinct()
        return sorted(conn.execute(query).scalars())


def may_cancel(user: User, job: Job) -> bool:
    """Operators cancel their own jobs; admins anyone's."""
    return user.can("run_job") and (job.get("submitted_by") == user.name or user.role == "admin")


def require_may_steer(user: User, job: Job, verb: str) -> None:
    """Refuse `user` acting on a job (cancel, scale) they did not submit, unless admin;
    the role first, through the one check every action takes."""
    require(user, "run_job")
    if not may_cancel(user, job):
        raise PermissionDenied(
            f"{user.name} cannot {verb} job {job['id']}: it was submitted by "
            f"{job.get('submitted_by') or 'an unknown user'}, and only they or an admin may."
        )


def request_cancel(job_id: str, user: User | None = None) -> str:
    """Ask a job to stop; returns the status it moved to."""
    job = get_job(job_id)
    require_may_steer(user or acting_user(), job, "cancel")
    if transition(job["id"], "cancelled", when=("queued",), message="cancelled before start"):
        return "cancelled"
    if transition(job["id"], "cancelling", when=("running",), message="cancel requested"):
        return "cancelling"
    status: str = get_job(job["id"])["status"]
    if status == "cancelling":
        return status
    raise InvalidInput(f"Job {job['id']} has already finished ({status}); nothing to cancel.")


def stale_jobs(stale_after: float | None = None) -> list[Job]:
    """Running jobs whose heartbeat is older than the stale threshold."""
    stale_after = get_settings().stale_after_seconds if stale_after is None else stale_after
    cutoff = now() - timedelta(seconds=stale_after)
    with db().connect() as conn:
        rows = conn.execute(
            select(jobs).where(
                jobs.c.status.in_(("running", "cancelling")), jobs.c.heartbeat_at < cutoff
            )
        ).all()
    return [_as_job(row._mapping) for row in rows]


def process_file(job_id: str) -> Path:
    """Where the process running a job on this host records its pid and start time."""
    return job_dir(job_id) / f"process-{socket.gethostname()}"


def record_process(job_id: str) -> None:
    """Called by the process that runs a job, when it starts (pid + start time)."""
    PidFile(process_file(job_id)).write(os.getpid())


def fail_dead_jobs() -> list[str]:
    """Mark running jobs whose recorded process on this host is gone (SIGKILL, OOM, a
    crash) as failed, with the reason, at once: the worker's heartbeat check needs a
    worker and 30 s. A job without a process record here (another host, a Ray job, one
    just starting) is left to the heartbeat. Returns the ids it marked."""
    with db().connect() as conn:
        rows = conn.execute(select(jobs).where(jobs.c.status.in_(("running", "cancelling"))))
        live = [_as_job(row._mapping) for row in rows]
    marked = []
    for job in live:
        record = PidFile(process_file(job["id"])).read()
        if record is None or find(record) is not None:
            continue
        reason = (
            f"its process (pid {record.pid}) is gone: killed or crashed without reporting "
            "an outcome; see its log"
        )
        resumable = job["launcher"] != "foreground" and _resumable_kind(job["kind"])
        recover(job, reason, resumable)
        _stop_rays_leftovers(job, record.pid)
        marked.append(job["id"])
    return marked


def _stop_rays_leftovers(job: Job, pid: int) -> None:
    """A dead job's private Ray leaves its dashboard and runtime-env agents (~100 MB each)
    in the job's process group for good; a foreground job has no worker to stop them. Only
    a group the dead process led (its id is not reused while anything is left in it), and
    only if all that is left is Ray's: a shell's `podium run ... | tee` shares the group."""
    if job.get("pgid") == pid:
        kill_orphaned_group(pid, "ray")


def _resumable_kind(kind: str) -> bool:
    from podium.jobs.kinds import get_kind

    try:
        return bool(get_kind(kind).resumable)
    except Exception:  # noqa: BLE001 - a plugin kind this process cannot see
        return False


def recover(job: Job, reason: str, resumable: bool) -> str:
    """Fail (or requeue, if its kind can resume) a job whose process is gone."""
    fields = {"worker_pid": None, "pgid": None}
    if job["status"] == "cancelling":
        transition(job["id"], "cancelled", when=("cancelling",), message=reason, **fields)
        return "cancelled"
    if resumable:
        transition(
            job["id"],
            "queued",
            when=("running",),
            message=f"{reason}; requeued to resume",
            heartbeat_at=None,
            **fields,
        )
        return "queued"
    transition(job["id"], "failed", when=("running",), message=reason, error=reason, **fields)
    return "failed"
