"""A failed job's progress line says why it failed, in one line, instead of the last
phase it reported (the tray read "starting 1 vLLM replica(s)" after the job had died)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from podium.jobs.cards import parse_card
from podium.jobs.launch import JobFailed, run_foreground
from podium.jobs.progress import progress_text
from podium.jobs.queue import list_jobs


def test_a_failed_job_shows_failed_and_its_cause_not_its_last_phase(jobs_home: Path) -> None:
    card = parse_card("---\nkind: test-steps\nsteps: 3\nfail_at: 2\n---\n")
    with pytest.raises(JobFailed):
        run_foreground(card, quiet=True)
    (job,) = list_jobs()
    assert job["status"] == "failed"
    line = progress_text(job, datetime.now(UTC))
    assert "failed: planted failure at step 2" in line
    assert "step 2 ·" not in line and "\n" not in line
