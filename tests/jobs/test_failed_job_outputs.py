"""A job that fails after its output landed records that output, pinned to the snapshot
it committed (so expiry keeps it), and its error says so: a re-run would write it again
(issue 44, point 4: the failed job recorded nothing and said to run it again)."""

from __future__ import annotations

from pathlib import Path

from podium.jobs.cards import parse_card
from podium.jobs.launch import run_in_process
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
