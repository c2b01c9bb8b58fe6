"""How progress reads: done/total with a percentage, phases as words, time left."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from podium.jobs.cards import parse_card
from podium.jobs.progress import progress_short, progress_text, seconds_left
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


def test_time_left_never_grows_while_the_count_stands_still() -> None:
    """Before: the estimate was elapsed / done x remaining, so with the step unchanged it
    grew every second the tray refreshed (a slow step read as a receding finish)."""
    start = now() - timedelta(hours=1)
    job = _row(10, 30, "step 10") | {
        "started_at": start,
        "progress_at": start + timedelta(seconds=100),  # 10 s a step when step 10 came
    }
    left = [seconds_left(job, start + timedelta(seconds=s)) for s in (100, 150, 250, 299)]
    assert left == [200.0, 150.0, 50.0, 1.0]  # the last rate, counted down
    # Past the estimate with no new step: no number rather than one that grows.
    assert seconds_left(job, start + timedelta(seconds=400)) is None
    assert progress_text(job, start + timedelta(seconds=400)) == "10/30 (33%) · step 10"


def test_the_reporter_stamps_when_the_count_last_moved(jobs_home: Path) -> None:
    job_id = create_job(parse_card("---\nkind: test-steps\n---\n"), status="running")
    with JobReporter(job_id, get_job(job_id)["log_path"]) as reporter:
        reporter.progress(3, 10, "prompts")
        reporter.flush()
        moved = get_job(job_id)["progress_at"]
        assert moved is not None and moved.tzinfo is not None
        reporter.progress(3, 10, "still prompts")  # the same count: not a move
        reporter.phase("waiting for vLLM")
        reporter.flush()
        assert get_job(job_id)["progress_at"] == moved
        reporter.progress(4, 10, "prompts")
        reporter.flush()
        assert get_job(job_id)["progress_at"] > moved
