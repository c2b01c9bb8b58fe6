"""A job's log holds what the job said, not library chatter: no Alembic plugin lines, no
line per HTTP request, no tqdm redraws."""

from __future__ import annotations

from pathlib import Path

from jobs_helpers import podium

from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.queue import get_job


def test_job_log_is_free_of_library_chatter(jobs_home: Path) -> None:
    job_id = submit(parse_card("---\nkind: test-noisy\nrequests: 3\n---\n"))
    podium("worker", "--once", "--poll", "0.2")
    job = get_job(job_id)
    assert job["status"] == "succeeded", job["error"]
    log = Path(job["log_path"]).read_text()
    assert "made 3 requests" in log  # what the job said stays
    assert "alembic" not in log, log  # before: nine "setup plugin" / "Context impl" lines
    assert "HTTP Request" not in log, log  # before: one line per request
    assert "requests:" not in log and "it/s" not in log, log  # before: tqdm's bar
