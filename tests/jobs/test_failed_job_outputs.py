"""A job that fails after its output landed records that output, pinned to the snapshot
it committed (so expiry keeps it), and its error says so: a re-run would write it again
(issue 44, point 4: the failed job recorded nothing and said to run it again)."""

from __future__ import annotations

from pathlib import Path

from podium.app.page_tables import PageTables
from podium.app.views.home.model import home_state
from podium.app.views.logbook.model import outputs_of
from podium.jobs.cards import parse_card
from podium.jobs.launch import run_in_process
from podium.jobs.logbook import outputs_text
from podium.jobs.partial import RESUMES
from podium.jobs.pins import job_snapshots
from podium.store.catalog.catalog import load_table


def test_a_job_that_fails_after_its_commit_pins_what_it_wrote(jobs_home: Path) -> None:
    card = "---\nkind: test-steps\nsteps: 2\ntable: ns.half\nwrite_first: true\nfail_at: 1\n---\n"

    job = run_in_process(parse_card(card))

    assert job["status"] == "failed"
    wrote = load_table("ns.half").current_snapshot().snapshot_id  # type: ignore[union-attr]
    assert job["outputs"] is not None
    assert job["outputs"]["tables"] == [{"name": "ns.half", "snapshot_id": wrote}]
    assert wrote in job_snapshots("ns.half")  # expiry keeps it
    assert job["error"] is not None and f"ns.half at snapshot {wrote}" in job["error"]
    assert "running it again may write that again" in job["error"]


def test_a_failed_resumable_job_leaves_its_table_partial_until_a_run_completes_it(
    jobs_home: Path,
) -> None:
    """A resumable job (a generation) keeps the batches it committed when it fails, so a
    re-run resumes: its record, the Logbook, Home and the table itself say the table is
    partial, until the run that completes it. Before: the failed job listed the table as
    if finished, said a re-run "may write that again", and the table said nothing."""
    card = (
        "---\nkind: test-steps-resumable\nsteps: 2\ntable: ns.resumed\nwrite_first: true\n"
        "fail_at: 1\n---\n"
    )

    job = run_in_process(parse_card(card))

    assert job["status"] == "failed"
    note = "failed at 1 of 2; running it again resumes"
    assert job["outputs"] is not None and job["outputs"]["summary"]["partial"] == note
    assert job["error"] is not None and f"; {RESUMES}." in job["error"]
    assert outputs_of(job).partial == note  # the Logbook's Outputs
    assert outputs_text(job) == f"ns.resumed (partial: {note})"
    assert PageTables("ns.resumed").partial == note  # Browse, from the table itself
    assert home_state().partial == {"ns.resumed": note}

    resumed = run_in_process(parse_card(card.replace("fail_at: 1\n", "")))

    assert resumed["status"] == "succeeded"
    assert PageTables("ns.resumed").partial is None
    assert home_state().partial == {}
    assert resumed["outputs"] is not None and "partial" not in resumed["outputs"]["summary"]


def test_a_failed_job_records_what_its_run_kept(jobs_home: Path) -> None:
    """What a run keeps (`Reporter.keep`: where its parts ran) is in its record however it
    ends, a failure that wrote nothing too (issue 49: a failed async run's placement was
    only in its log), and in a finished one's beside its own summary."""
    failed = run_in_process(parse_card("---\nkind: test-steps\nkeep: node-a\nfail_at: 1\n---\n"))
    finished = run_in_process(parse_card("---\nkind: test-steps\nkeep: node-b\n---\n"))

    assert failed["status"] == "failed" and failed["outputs"] is not None
    assert failed["outputs"]["summary"] == {"where": "node-a"}
    assert failed["outputs"]["tables"] == [] and failed["outputs"]["checkpoints"] == []
    assert finished["outputs"] is not None
    assert finished["outputs"]["summary"] == {"where": "node-b", "steps": 3}
