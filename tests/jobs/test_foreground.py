"""`podium run` in-process: progress recorded, and a cancel from elsewhere stops it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from jobs_helpers import wait_for

from podium.jobs.cards import Card, parse_card
from podium.jobs.launch import JobFailed, run_foreground
from podium.jobs.logbook import outputs_text
from podium.jobs.partial import partial_note
from podium.jobs.queue import list_jobs, request_cancel
from podium.store.catalog.catalog import load_table


def test_foreground_job_is_recorded_and_cancellable(jobs_home: Path) -> None:
    card = parse_card("---\nkind: test-steps\nsteps: 400\nsleep: 0.05\ntable: ns.fg\n---\n")
    errors: list[BaseException] = []

    def run() -> None:
        try:
            run_foreground(card, quiet=True)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    job = wait_for(lambda: (jobs := list_jobs()) and jobs[0]["progress_done"] and jobs[0])
    assert job["status"] == "running" and job["launcher"] == "foreground"
    assert request_cancel(job["id"]) == "cancelling"
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], JobFailed)
    assert f"job {job['id']} cancelled" in str(errors[0])
    (final,) = list_jobs()
    assert final["status"] == "cancelled" and final["progress_done"] < 400


def test_cancelled_job_lists_the_table_it_left_as_partial(jobs_home: Path) -> None:
    """Before: a cancelled job read "Outputs: none" though its table was written (issue 45)."""
    card = parse_card(
        "---\nkind: test-steps\nsteps: 400\nsleep: 0.05\ntable: ns.left\nwrite_first: true\n---\n"
    )
    thread = threading.Thread(target=_run_quietly, args=(card,))
    thread.start()
    job = wait_for(lambda: (jobs := list_jobs()) and jobs[0]["progress_done"] and jobs[0])
    request_cancel(job["id"])
    thread.join(timeout=30)
    (final,) = list_jobs()
    assert final["status"] == "cancelled"
    (table,) = final["outputs"]["tables"]
    assert table["name"] == "ns.left" and table["snapshot_id"] is not None
    note = final["outputs"]["summary"]["partial"]
    assert note == f"cancelled at {final['progress_done']} of 400"
    assert outputs_text(final) == f"ns.left (partial: {note})"
    assert partial_note(load_table("ns.left").properties) == note  # on the table itself


def _run_quietly(card: Card) -> None:
    try:
        run_foreground(card, quiet=True)
    except JobFailed:
        pass  # the cancel


def test_foreground_failure_raises_job_failed(jobs_home: Path) -> None:
    with pytest.raises(JobFailed, match="planted failure at step 0"):
        run_foreground(parse_card("---\nkind: test-steps\nfail_at: 0\n---\n"), quiet=True)
    assert list_jobs()[0]["status"] == "failed"
