"""The job queue in the state database: submit, claim, cancel, stale recovery."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest

from podium.errors import InvalidInput, NotFound
from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.logbook import events
from podium.jobs.queue import (
    claim_next,
    get_job,
    list_jobs,
    now,
    recover,
    request_cancel,
    set_fields,
    stale_jobs,
)


def _card(steps: int = 2) -> object:
    return parse_card(f"---\nkind: test-steps\nsteps: {steps}\n---\nnote\n")


def test_submit_records_pinned_card_and_log(jobs_home: Path) -> None:
    job_id = submit(_card(5))
    job = get_job(job_id)
    assert job["status"] == "queued" and job["kind"] == "test-steps"
    assert parse_card(job["card"]).config.steps == 5 and job["card"].endswith("note\n")
    assert Path(job["log_path"]).is_file() and str(jobs_home) in job["log_path"]
    assert get_job(job_id[:-1])["id"] == job_id  # unique prefix
    with pytest.raises(NotFound):
        get_job("no-such-job")
    assert [e["status"] for e in events(job_id)] == ["queued"]


def test_claims_are_exclusive_across_threads(jobs_home: Path) -> None:
    ids = {submit(_card()) for _ in range(8)}
    claimed: list[str] = []
    lock = threading.Lock()

    def claimer() -> None:
        while (job := claim_next(threading.get_ident() % 100000, "local")) is not None:
            with lock:
                claimed.append(job["id"])

    threads = [threading.Thread(target=claimer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == sorted(ids)  # each job claimed once, none lost
    assert all(j["status"] == "running" and j["attempt"] == 1 for j in list_jobs())
    assert claim_next(1, "local") is None


def test_cancel_queued_running_and_finished(jobs_home: Path) -> None:
    queued = submit(_card())
    assert request_cancel(queued) == "cancelled"
    assert claim_next(1, "local") is None  # a cancelled job never starts

    running = submit(_card())
    claim_next(1, "local")
    assert request_cancel(running) == "cancelling"
    assert request_cancel(running) == "cancelling"
    with pytest.raises(InvalidInput, match="already finished"):
        request_cancel(queued)


def test_stale_running_job_fails_or_requeues(jobs_home: Path) -> None:
    plain = submit(_card())
    claim_next(1, "local")
    resumable = submit(parse_card("---\nkind: test-steps-resumable\n---\n"))
    claim_next(1, "local")
    old = now() - timedelta(seconds=60)
    for job_id in (plain, resumable):
        set_fields(job_id, heartbeat_at=old)
    assert {j["id"] for j in stale_jobs(stale_after=30)} == {plain, resumable}
    assert stale_jobs(stale_after=120) == []

    assert recover(get_job(plain), "worker died", resumable=False) == "failed"
    assert recover(get_job(resumable), "worker died", resumable=True) == "queued"
    assert get_job(plain)["error"] == "worker died"
    assert get_job(resumable)["status"] == "queued"
    assert claim_next(2, "local")["attempt"] == 2  # the resumed job runs again
    assert [e["status"] for e in events(resumable)] == ["queued", "running", "queued", "running"]
