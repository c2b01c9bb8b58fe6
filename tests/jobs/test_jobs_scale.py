"""`podium jobs scale ID --replicas N`: what it stores for a running async GRPO job, and
what it refuses (nothing stored then). The job's side, a real run that scales, is
tests/async_rl/test_async_scale.py."""

from __future__ import annotations

import getpass
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import insert

from podium.cli import app
from podium.config import reset_settings
from podium.errors import InvalidInput, PermissionDenied
from podium.identity import User
from podium.jobs.queue import new_job_id, now
from podium.jobs.scale import DONE, MAX_REPLICAS, answer_request, latest_request
from podium.jobs.tables import db, jobs
from podium.store.state.users import grant

ASYNC = {"rollout": "async", "replicas": 1}


def a_job(
    status: str = "running",
    kind: str = "grpo",
    config: dict[str, Any] | None = None,
    by: str | None = None,
) -> str:
    """A job record as the worker leaves it while the job runs (no process behind it)."""
    job_id = new_job_id(kind)
    with db().begin() as conn:
        conn.execute(
            insert(jobs).values(
                id=job_id,
                kind=kind,
                status=status,
                card=f"---\nkind: {kind}\n---\n",
                config=json.dumps(ASYNC if config is None else config),
                inputs="[]",
                created_at=now(),
                attempt=0,
                log_path="log.txt",
                submitted_by=by or getpass.getuser(),
            )
        )
    return job_id


def scale(job_id: str, replicas: int) -> Result:
    return CliRunner().invoke(app, ["jobs", "scale", job_id, "--replicas", str(replicas)])


def test_a_running_async_job_gets_the_request_with_its_author(jobs_home: Path) -> None:
    job_id = a_job()
    result = scale(job_id, 2)
    assert result.exit_code == 0, result.output
    assert "asked for 2 replicas (it has 1)" in result.output
    request = latest_request(job_id)
    assert request is not None
    assert (request.replicas, request.requested_by, request.outcome) == (2, getpass.getuser(), None)

    shown = CliRunner().invoke(app, ["jobs", "show", job_id, "--json"])
    asked = json.loads(shown.output)["requests"]
    assert [(r["what"], r["value"], r["outcome"]) for r in asked] == [("replicas", 2, None)]

    # Once the job has answered, it has 2: asking again changes nothing, fewer is refused.
    answer_request(request.id, DONE, "replica(s) [1] joined at version(s) [1]")
    again = scale(job_id, 2)
    assert again.exit_code == 0 and "has 2 replicas already" in again.output
    down = scale(job_id, 1)
    assert isinstance(down.exception, InvalidInput)
    assert "scaling down is not supported yet" in str(down.exception)
    answered = latest_request(job_id)
    assert answered is not None and (answered.id, answered.outcome) == (request.id, DONE)


@pytest.mark.parametrize(
    ("job", "replicas", "says"),
    [
        ({"status": "queued"}, 2, "is queued; only a running job can be scaled"),
        ({"status": "succeeded"}, 2, "is succeeded; only a running job can be scaled"),
        ({"config": {"rollout": "sync"}}, 2, "is a grpo (rollout sync) job: only async GRPO"),
        ({"kind": "sft", "config": {}}, 2, "is a sft job: only async GRPO jobs"),
        ({}, 0, "--replicas 0: a job runs 1 to"),
        ({}, MAX_REPLICAS + 1, f"a job runs 1 to {MAX_REPLICAS} replicas"),
        ({"config": {"rollout": "async", "replicas": 3}}, 2, "has 3 replicas; scaling down"),
    ],
)
def test_what_cannot_be_scaled_is_refused_and_nothing_stored(
    jobs_home: Path, job: dict[str, Any], replicas: int, says: str
) -> None:
    job_id = a_job(**job)
    result = scale(job_id, replicas)
    assert isinstance(result.exception, InvalidInput), result.output
    assert says in str(result.exception)
    assert latest_request(job_id) is None


def test_only_the_submitter_or_an_admin_may_scale(
    jobs_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    admin = User(name="boss@example.org", role="admin", source="config")
    monkeypatch.setenv("PODIUM_ADMINS", admin.name)
    monkeypatch.setenv("PODIUM_USER", "op2@example.org")
    reset_settings()
    grant(admin, "op1@example.org", "operator")
    grant(admin, "op2@example.org", "operator")
    job_id = a_job(by="op1@example.org")

    result = scale(job_id, 2)
    assert isinstance(result.exception, PermissionDenied)
    assert "op2@example.org cannot scale job" in str(result.exception)
    assert latest_request(job_id) is None

    monkeypatch.setenv("PODIUM_USER", admin.name)
    reset_settings()
    assert scale(job_id, 2).exit_code == 0
    request = latest_request(job_id)
    assert request is not None and request.requested_by == admin.name


class ClusterWithoutRoom:
    """The Ray module as the scale-out sees it when every CPU is taken."""

    @staticmethod
    def available_resources() -> dict[str, float]:
        return {"CPU": 0.0, "memory": 1e9}


def test_a_job_whose_cluster_has_no_room_refuses_and_says_why(jobs_home: Path) -> None:
    """The job's side (trainers.async_rl.scale) reads the request, finds no seat for the
    new replica, starts nothing and answers refused: a replica Ray cannot place would
    wait forever. The job goes on; the count it has stays, so asking again is allowed."""
    from train_fixtures import RecordingReporter

    from trainers.async_rl.placement import plan_placement
    from trainers.async_rl.pool import Pool
    from trainers.async_rl.scale import ScaleOut

    job_id = a_job()
    assert scale(job_id, 2).exit_code == 0
    shape = type("Card", (), {"learner_ranks": 1, "replicas": 1})
    pool = Pool(ClusterWithoutRoom, "tiny", tag="t", placement=plan_placement(shape, "cpu"))
    pool.actors[0] = object()
    warned: list[str] = []
    reporter = RecordingReporter()
    reporter.warn = warned.append  # type: ignore[method-assign]
    run = type("Run", (), {"pool": pool, "reporter": reporter, "stop": threading.Event()})()

    scale_out = ScaleOut(run, job_id, poll_s=0.05)  # type: ignore[arg-type]
    scale_out.start()
    try:
        deadline = time.monotonic() + 30
        while (answered := latest_request(job_id)) is not None and answered.outcome is None:
            assert time.monotonic() < deadline, "the request was never answered"
            time.sleep(0.05)
    finally:
        run.stop.set()
        scale_out.join()

    assert answered is not None and answered.outcome == "refused"
    assert "need 1 CPU(s) and the Ray cluster has 0 free" in str(answered.note)
    assert warned and "scale to 2 replicas refused" in warned[0]
    assert sorted(pool.actors) == [0]  # nothing started
    assert scale(job_id, 2).exit_code == 0  # the job still has 1: ask again later
