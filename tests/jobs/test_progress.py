"""How progress reads: done/total with a percentage, phases as words, time left."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from podium.jobs.cards import parse_card
from podium.jobs.progress import progress_short, progress_text
from podium.jobs.queue import create_job, get_job, now
from podium.jobs.reporter import JobReporter


def _row(done: int | None, total: int | None, message: str = "", minutes: float = 2) -> dict:
    return {
        "status": "running",
        "started_at": now() - timedelta(minutes=minutes),
        "progress_done": done,
        "progress_total": total,
        "progress_message": message,
    }


def test_a_count_reads_as_done_of_total_with_percentage_and_time_left() -> None:
    at = now()
    job = _row(14, 30, "step 14", minutes=7)
    assert progress_short(job) == "14/30 47%"
    assert progress_text(job, at) == "14/30 (47%) · step 14 · about 8m00s left"
    assert progress_text(_row(310, None, "rows")) == "310 · rows"
    assert progress_text(_row(None, None)) == "-" and progress_short(_row(None, None)) == "-"


def test_a_phase_reads_as_words_and_keeps_the_last_count(jobs_home: Path) -> None:
    """Before: vLLM's start-up reported its seconds as the count ("25 starting vLLM")."""
    job_id = create_job(parse_card("---\nkind: test-steps\n---\n"), status="running")
    job = get_job(job_id)
    with JobReporter(job_id, job["log_path"]) as reporter:
        reporter.phase("starting vLLM for smollm2 (25s)")
        reporter.flush()
        first = get_job(job_id)
        assert first["progress_done"] is None
        assert progress_text(first) == "starting vLLM for smollm2 (25s)"
        reporter.progress(3, 10, "prompts")
        reporter.phase("evaluating")
        reporter.flush()
    later = get_job(job_id)
    assert (later["progress_done"], later["progress_total"]) == (3, 10)
    assert progress_text(later).startswith("3/10 (30%) · evaluating")
