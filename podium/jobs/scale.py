"""Scale a running async GRPO job's generation replicas (`podium jobs scale ID --replicas N`).

The command stores the request (`podium_job_requests`, with who asked); the running job
polls it (`trainers.async_rl.scale`), starts the new replicas, joins each with the
learner's current weights and answers the request (`answer_request`), so `podium jobs
show` and the job's log say what became of it.

    request_replicas("20261127-...", 2)   # refused: not running, not async grpo, N < 1,
                                          # N > MAX_REPLICAS, fewer than it has
    latest_request(job_id)                # what the job reads
    answer_request(request.id, "done", "replica 1 joined at version 3")
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, select, update

from podium.errors import InvalidInput
from podium.identity import User
from podium.jobs.queue import Job, get_job, now, require_may_steer
from podium.jobs.tables import db, job_requests
from podium.store.state.users import acting_user

REPLICAS = "replicas"
# More vLLM servers than this for one job is a typo, not a plan (each is a GPU or a core).
MAX_REPLICAS = 64
DONE, REFUSED = "done", "refused"


@dataclass(frozen=True)
class ScaleRequest:
    id: int
    job_id: str
    replicas: int
    requested_by: str
    outcome: str | None  # None while the job has not answered; DONE or REFUSED
    note: str | None


def _config(job: Job) -> dict[str, Any]:
    config = json.loads(job["config"] or "{}")
    return config if isinstance(config, dict) else {}


def replicas_now(job: Job) -> int:
    """The replicas the job has: its card's, grown by every request it answered done."""
    count = int(_config(job).get("replicas") or 1)
    query = (
        select(job_requests.c.value)
        .where(
            job_requests.c.job_id == job["id"],
            job_requests.c.what == REPLICAS,
            job_requests.c.outcome == DONE,
        )
        .order_by(job_requests.c.id)
    )
    with db().connect() as conn:
        for value in conn.execute(query).scalars():
            count = max(count, int(value))
    return count


def request_replicas(job_id: str, replicas: int, user: User | None = None) -> str:
    """Ask running async GRPO job `job_id` to grow to `replicas` generation replicas;
    what was asked, in words. Only its submitter or an admin may."""
    job = get_job(job_id)
    user = user or acting_user()
    require_may_steer(user, job, "scale")
    config = _config(job)
    if job["kind"] != "grpo" or config.get("rollout") != "async":
        what = job["kind"] if job["kind"] != "grpo" else f"grpo (rollout {config.get('rollout')})"
        raise InvalidInput(
            f"Job {job['id']} is a {what} job: only async GRPO jobs (kind grpo, rollout: "
            "async) have generation replicas to scale."
        )
    if job["status"] != "running":
        hint = (
            "it has not started: cancel it and submit its card with the replicas you want"
            if job["status"] == "queued"
            else "rerun it with the replicas you want"
        )
        raise InvalidInput(
            f"Job {job['id']} is {job['status']}; only a running job can be scaled ({hint})."
        )
    if not 1 <= replicas <= MAX_REPLICAS:
        raise InvalidInput(
            f"--replicas {replicas}: a job runs 1 to {MAX_REPLICAS} replicas; give a count "
            "in that range."
        )
    have = replicas_now(job)
    if replicas < have:
        raise InvalidInput(
            f"Job {job['id']} has {have} replicas; scaling down is not supported yet (a "
            "replica's slots would have to drain first). Ask for more, or cancel and rerun "
            "it with fewer."
        )
    if replicas == have:
        return f"job {job['id']} has {have} replicas already; nothing to do"
    with db().begin() as conn:
        conn.execute(
            insert(job_requests).values(
                job_id=job["id"],
                what=REPLICAS,
                value=replicas,
                requested_by=user.name,
                at=now(),
            )
        )
    return (
        f"job {job['id']}: asked for {replicas} replicas (it has {have}); it starts the new "
        f"ones and joins them with its current weights. Follow with `podium jobs logs "
        f"{job['id']} -f`."
    )


def latest_request(job_id: str) -> ScaleRequest | None:
    """The newest replica-count request for `job_id` (a newer one supersedes the rest)."""
    query = (
        select(job_requests)
        .where(job_requests.c.job_id == job_id, job_requests.c.what == REPLICAS)
        .order_by(job_requests.c.id.desc())
        .limit(1)
    )
    with db().connect() as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    return ScaleRequest(
        id=int(row.id),
        job_id=str(row.job_id),
        replicas=int(row.value),
        requested_by=str(row.requested_by),
        outcome=row.outcome,
        note=row.note,
    )


def answer_request(request_id: int, outcome: str, note: str) -> None:
    """The job's answer to a request: DONE or REFUSED, and what it did, in words."""
    with db().begin() as conn:
        conn.execute(
            update(job_requests)
            .where(job_requests.c.id == request_id)
            .values(outcome=outcome, note=note, answered_at=now())
        )


def requests_of(job_id: str) -> list[dict[str, object]]:
    """Every request made of a job, oldest first, with its answer (for `jobs show`)."""
    query = select(job_requests).where(job_requests.c.job_id == job_id).order_by(job_requests.c.id)
    with db().connect() as conn:
        rows = conn.execute(query).all()
    return [
        {
            "what": r.what,
            "value": r.value,
            "requested_by": r.requested_by,
            "at": r.at.isoformat() if r.at else None,
            "outcome": r.outcome,
            "note": r.note,
        }
        for r in rows
    ]
