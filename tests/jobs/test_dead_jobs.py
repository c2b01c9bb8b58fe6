"""I7: a job whose process was SIGKILLed is marked failed, with the reason, by the next
`podium jobs` (or Logbook) listing, with no worker running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import cli_fork
from jobs_helpers import group_alive, wait_for

from podium.jobs.queue import fail_dead_jobs, get_job, list_jobs

PODIUM = [sys.executable, "-m", "podium.cli"]


def test_sigkilled_foreground_job_is_marked_failed_by_podium_jobs(
    jobs_home: Path, tmp_path: Path
) -> None:
    card = tmp_path / "slow.md"
    card.write_text("---\nkind: test-steps\nsteps: 2000\nsleep: 0.05\nhelper: true\n---\n")
    # Its own group, as a shell's job control gives it; the helper stands in for the
    # agents of an async RL job's private Ray, which outlived a SIGKILLed run.
    proc = subprocess.Popen(
        [*PODIUM, "run", str(card)], stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        job = wait_for(lambda: (js := list_jobs()) and js[0]["progress_done"] and js[0], 120)
        assert job["status"] == "running" and group_alive(proc.pid)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # `podium jobs show ID` says it at once too (it said "running" until a listing).
    show = cli_fork.run([*PODIUM, "jobs", "show", job["id"]], capture_output=True, text=True)
    assert (
        "status   failed" in show.stdout and f"its process (pid {proc.pid}) is gone" in show.stdout
    )
    listing = cli_fork.run([*PODIUM, "jobs", "--json"], capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    (shown,) = json.loads(listing.stdout)
    assert shown["id"] == job["id"] and shown["status"] == "failed"
    assert f"its process (pid {proc.pid}) is gone" in shown["error"]
    assert get_job(job["id"])["status"] == "failed"
    wait_for(lambda: not group_alive(proc.pid), timeout=15)


def test_a_live_job_is_left_running(jobs_home: Path, tmp_path: Path) -> None:
    card = tmp_path / "slow.md"
    card.write_text("---\nkind: test-steps\nsteps: 2000\nsleep: 0.05\n---\n")
    proc = subprocess.Popen([*PODIUM, "run", str(card)], stderr=subprocess.DEVNULL)
    try:
        job = wait_for(lambda: (js := list_jobs()) and js[0]["progress_done"] and js[0], 120)
        assert fail_dead_jobs() == []
        assert get_job(job["id"])["status"] == "running"
        assert os.path.exists(jobs_home / "jobs" / job["id"])
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
