"""Starting jobs: queue a card, run it in the foreground, or only write it.

Commands that start a job build the kind's config and call `run_or_write_card`; the UI
calls `submit`. Both pin input tables to snapshots first, so the stored card is exactly
what ran; the kind's preflight runs once for either (`preflight.checked_card`).
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel

from podium.errors import PodiumError
from podium.jobs.cards import Card, write_card
from podium.jobs.console import ConsoleReporter
from podium.jobs.execute import ReporterFactory, execute_job
from podium.jobs.preflight import checked_card
from podium.jobs.queue import Job, create_job, set_fields
from podium.jobs.reporter import JobReporter
from podium.terminal_text import safe_console


class JobFailed(PodiumError):
    """A foreground job ended failed or cancelled; the message says where its log is."""

    exit_code = 1


def submit(card: Card) -> str:
    """Queue `card` for a worker; returns the job id."""
    return create_job(card, status="queued")


def run_in_process(card: Card, reporter_factory: ReporterFactory = JobReporter) -> Job:
    """Run `card` in this process, recorded like any job, and return its final record.

    For pages and commands that show progress their own way: pass a JobReporter
    subclass (e.g. one that also moves an st.progress bar). Never raises for a job
    that fails; read `job["status"]` and `job["error"]`.
    """
    job_id = create_job(card, status="running")
    set_fields(job_id, worker_pid=os.getpid(), pgid=os.getpgrp())
    return execute_job(job_id, reporter_factory)


def run_foreground(card: Card, quiet: bool = False) -> Job:
    """Run `card` here with a progress bar; raises JobFailed unless it succeeds.

    A card that names another launcher (`launcher: ray`) runs there and is followed.
    """
    elsewhere = getattr(card.config, "launcher", None)
    if elsewhere and elsewhere != "local":
        from podium.jobs.follow import run_on

        job = run_on(card, elsewhere, say=safe_console(stderr=True, quiet=quiet).print)
    else:
        job = run_in_process(card, ConsoleReporter if not quiet else _quiet_reporter)
    if job["status"] != "succeeded":
        reason = (job["error"] or job["status"]).splitlines()[0]
        raise JobFailed(f"job {job['id']} {job['status']}: {reason}\nlog: {job['log_path']}")
    return job


def _quiet_reporter(*args: object, **kwargs: object) -> ConsoleReporter:
    reporter = ConsoleReporter(*args, **kwargs)  # type: ignore[arg-type]
    reporter.console.quiet = True
    return reporter


def run_or_write_card(
    kind: str,
    config: BaseModel,
    card: Path | str | None = None,
    foreground: bool = True,
    notes: str = "",
) -> Job | str | Path:
    """What a command that starts a job does with its config.

    The kind's preflight runs first, and only here (inputs pinned, models resolved,
    rules checked): the checked card is what is written, queued or run. `card` given:
    write the card there, print where, run nothing; returns the path. Else run in the
    foreground with a progress bar (returns the finished job) or, with
    `foreground=False`, queue it for a worker (returns the job id).
    """
    job_card = checked_card(Card(kind, config, notes))
    console = safe_console(stderr=True)
    if card is not None:
        path = write_card(kind, job_card.config, card, notes)
        console.print(f"wrote run card {path}; run it with `podium run {path}`", highlight=False)
        return path
    if not foreground:
        job_id = submit(job_card)
        console.print(f"queued job {job_id}; a worker will run it (`podium worker`)")
        return job_id
    job = run_foreground(job_card)
    console.print(f"job {job['id']} succeeded", highlight=False)
    return job
