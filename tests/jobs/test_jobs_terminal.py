"""`podium jobs` at 80 columns and `podium jobs watch`, through the real CLI."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import cli_fork
from jobs_helpers import podium

from podium.jobs.cards import Card, parse_card
from podium.jobs.launch import run_foreground, submit
from podium.jobs.queue import request_cancel
from podium.store.write.demo import DEMO_TABLES
from podium.validate.job import ValidateConfig


def test_jobs_fit_one_line_each_at_80_columns(jobs_home: Path) -> None:
    """Before: the progress message wrapped each finished validation over three lines."""
    DEMO_TABLES["demo.json_sft"]()
    done = [
        run_foreground(Card("validate", ValidateConfig(table={"name": "demo.json_sft"},
                                                       rules=["json"])), quiet=True)
        for _ in range(2)
    ]  # fmt: skip
    queued = submit(parse_card("---\nkind: test-steps\nsteps: 2\n---\n"))
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "jobs"],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="80"),
        check=True,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert all(len(line) <= 80 for line in lines), proc.stdout
    rows = [line for line in lines if line.split()[0].startswith("20") and " is " not in line]
    assert len(rows) == 3, proc.stdout  # one line per job: nothing wrapped
    by_id = {row.split()[0]: row.split()[1:] for row in rows}
    assert by_id[queued] == ["test-steps", "queued", "-", "-"]
    for job in done:  # before: a bare "100%" (and a bare "14" with no total)
        total = f"{job['progress_total']:,}"
        assert by_id[job["id"]][:4] == ["validate", "succeeded", f"{total}/{total}", "100%"]
    # under the table, why the queued job has not started
    assert f"{queued} is waiting for a worker" in proc.stdout


def test_watch_follows_a_job_to_its_end_and_exits_by_outcome(jobs_home: Path) -> None:
    ok = run_foreground(parse_card("---\nkind: test-steps\nsteps: 2\n---\n"), quiet=True)
    shown = podium("jobs", "watch", ok["id"])
    assert f"job {ok['id']} succeeded" in shown.stdout
    assert "2/2 (100%)" in shown.stderr  # the bar, full, and the count it stands for

    waiting = submit(parse_card("---\nkind: test-steps\nsteps: 2\n---\n"))
    threading.Timer(1.5, request_cancel, args=(waiting,)).start()
    cancelled = podium("jobs", "watch", waiting, "--poll", "0.2", check=False)
    assert cancelled.returncode == 1 and f"job {waiting} cancelled" in cancelled.stdout


def test_the_status_column_is_never_cut_at_80_columns(jobs_home: Path) -> None:
    """Before: a long kind and a long count squeezed the status to "succee…"."""
    from datetime import timedelta

    from podium.jobs.queue import now, set_fields, transition

    started = now() - timedelta(hours=2, minutes=3)
    for status in ("succeeded", "cancelling"):
        job_id = submit(parse_card("---\nkind: test-steps-heavy\nsteps: 2\n---\n"))
        transition(job_id, "running", started_at=started)
        set_fields(job_id, progress_done=123_456, progress_total=123_456)
        if status == "succeeded":
            transition(job_id, "succeeded")
        else:
            transition(job_id, "cancelling")
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "jobs"],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="80"),
        check=True,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert all(len(line) <= 80 for line in lines), proc.stdout
    rows = [line.split() for line in lines if line.split()[0].startswith("20")]
    assert sorted(row[2] for row in rows) == ["cancelling", "succeeded"], proc.stdout
