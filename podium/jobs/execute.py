"""Run one recorded job in this process: `python -m podium.jobs.execute JOB_ID`.

The worker's launch backend starts this in a new process group with stdout and stderr
going to the job's log; `podium run` calls `execute_job` in its own process. Either way
the job's stored card is parsed again, the kind's `run(config, reporter)` is called
with lineage set, and the outcome (outputs pinned to snapshots, or the error and the
log's tail) is written to the job's row.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from podium.errors import Cancelled, PodiumError, outage_message
from podium.jobs.cards import card_environment, parse_card
from podium.jobs.environment import lineage_properties
from podium.jobs.kinds import get_kind
from podium.jobs.logs import log_tail
from podium.jobs.partial import (
    RESUMES,
    cancelled_outputs,
    clear_partial,
    failed_note,
    mark_partial,
    outputs_json,
    record_left,
)
from podium.jobs.plugins import load_plugins
from podium.jobs.queue import Job, get_job, record_process, recover, transition
from podium.jobs.reporter import JobReporter
from podium.processes import kill_own_group
from podium.reporting import JobOutputs, quiet_libraries
from podium.store.catalog.commit_outcome import landed_mark, landed_since
from podium.store.schema import PROP_LINEAGE_PREFIX

ReporterFactory = Callable[..., JobReporter]

log = logging.getLogger("podium")

EXIT_CODES = {"succeeded": 0, "failed": 1, "cancelled": 3, "queued": 4}
_LIVE = ("running", "cancelling")


class Stopped(Cancelled):
    """SIGTERM from the worker: a cancel if one was requested, else a shutdown."""


def lineage_for(job: Job) -> dict[str, str]:
    return {
        f"{PROP_LINEAGE_PREFIX}job_id": job["id"],
        f"{PROP_LINEAGE_PREFIX}kind": job["kind"],
        f"{PROP_LINEAGE_PREFIX}card": job["card"],
        f"{PROP_LINEAGE_PREFIX}inputs": json.dumps(job["inputs"]),
        **lineage_properties(card_environment(job["card"])),
    }


def execute_job(job_id: str, reporter_factory: ReporterFactory = JobReporter) -> Job:
    """Run a job that is already marked running; returns its final record."""
    load_plugins()
    job = get_job(job_id)
    if job["status"] != "running":
        return job
    try:
        kind = get_kind(job["kind"])
    except PodiumError as exc:  # e.g. a plugin kind this process cannot see
        transition(job["id"], "failed", when=_LIVE, error=str(exc), message=str(exc))
        return get_job(job["id"])
    record_process(job["id"])  # so `podium jobs` can tell when this process is gone
    mark = landed_mark()  # the snapshots this job commits are the ones after this
    reporter = reporter_factory(job["id"], job["log_path"], lineage_for(job))
    reporter.on_stopped = record_left  # recorded before a stop's cleanup, which may not end
    with reporter:
        reporter.log(f"job {job['id']} ({kind.name}) attempt {job['attempt']} pid {os.getpid()}")
        try:
            config = parse_card(job["card"], source=f"card of job {job['id']}").config
            outputs = kind.runner()(config, reporter)
        except Stopped as exc:
            reporter.flush()
            if get_job(job["id"])["status"] == "cancelling":
                reporter.log("cancelled: stopped by the worker")
                _cancel(job, reporter, "stopped by the worker", landed_since(mark))
            else:  # not a cancel: the worker is shutting down
                outcome = recover(get_job(job["id"]), str(exc), kind.resumable)
                reporter.log(f"{exc} -> {outcome}")
        except (Cancelled, KeyboardInterrupt) as exc:
            reporter.flush()
            reporter.log(f"cancelled: {exc or 'interrupted'}")
            _cancel(job, reporter, str(exc) or "interrupted", landed_since(mark))
        except BaseException as exc:
            reporter.flush()
            # An outage (the database or object store gone mid-run) in the CLI's words,
            # which a foreground run echoes: its cause's first line and what to do.
            detail = (
                str(exc)
                if isinstance(exc, PodiumError)
                else outage_message(exc) or traceback.format_exc()
            )
            reporter.log(f"failed: {detail}")
            _fail(job, exc, reporter, landed_since(mark), resumable=kind.resumable)
            if not isinstance(exc, Exception):
                raise
        else:
            _succeed(job, reporter, outputs, landed_since(mark))
    return get_job(job["id"])


# A database that went away (a restart, a failover) after the job's output landed: its
# outcome is recorded once it is back, for this long, rather than lost.
RECORD_RETRY_S = 60.0


def _succeed(
    job: Job, reporter: JobReporter, outputs: JobOutputs | None, landed: list[tuple[str, int]]
) -> None:
    """Record a finished job's outcome, its outputs pinned to the snapshots it committed.
    These are the job's last steps: a database error here must not turn a job whose
    output landed into a failed one that a re-run would write again."""
    recorded: dict[str, Any] = {}

    def record() -> None:
        reporter.flush()  # metrics and samples are in before the job reads as finished
        done = outputs or JobOutputs()
        kept = JobOutputs(done.tables, done.checkpoints, {**reporter.kept, **done.summary})
        recorded.update(outputs_json(kept, landed))
        transition(
            job["id"], "succeeded", when=_LIVE, outputs=json.dumps(recorded), message="finished"
        )

    try:
        _retrying(record)
    except Exception as exc:
        raise OutcomeNotRecorded(
            f"job {job['id']} finished{_landed_text(landed)}, but its outcome could not be "
            f"recorded ({type(exc).__name__}: {_first_line(exc)}). Do not run it again; "
            "`podium jobs` shows it failed once the database is back."
        ) from exc
    reporter.log(f"succeeded: {json.dumps(recorded)}")
    clear_partial([t["name"] for t in recorded["tables"]], reporter.log)


class OutcomeNotRecorded(PodiumError):
    """A job finished (its output landed) but the database did not take its record."""

    exit_code = 75


def _retrying(step: Callable[[], None]) -> None:
    """Run `step`, again after a database error (a cut connection, a restart) until
    RECORD_RETRY_S have passed."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    deadline = time.monotonic() + RECORD_RETRY_S
    wait = 0.2
    while True:
        try:
            step()
            return
        except (OperationalError, InterfaceError) as exc:
            if time.monotonic() + wait > deadline:
                raise
            log.warning("recording the job's outcome: %s; trying again", _first_line(exc))
            time.sleep(wait)
            wait = min(wait * 2, 5.0)


def _landed_text(landed: list[tuple[str, int]]) -> str:
    """ " (its output landed: ns.t at snapshot 123)" for the tables a job committed."""
    last = dict(landed)  # each table's last snapshot of this job
    if not last:
        return ""
    named = ", ".join(f"{table} at snapshot {sid}" for table, sid in last.items())
    return f" (its output landed: {named})"


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


FAILED_LINE_CHARS = 200


def failed_line(exc: BaseException) -> str:
    """ "failed: <first line of the error>": the progress line a failed job shows in
    place of the phase it was in (the tray, `podium jobs`)."""
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    text = first or type(exc).__name__
    if len(text) > FAILED_LINE_CHARS:
        text = text[: FAILED_LINE_CHARS - 1] + "…"
    return f"failed: {text}"


def _cancel(job: Job, reporter: JobReporter, message: str, landed: list[tuple[str, int]]) -> None:
    """End the job as cancelled, recording what it left (partial checkpoints, tables)."""
    try:
        left = cancelled_outputs(job["id"], reporter, [table for table, _ in landed])
        outputs: str | None = json.dumps(outputs_json(left, landed))
    except Exception as exc:  # the cancel itself must land; what was left is in the log
        reporter.log(f"could not list what the cancelled job left: {exc}")
        outputs = None  # what the run recorded as it stopped (JobReporter.stopped_with) stays
    else:
        mark_partial(left.tables, left.summary["partial"], reporter.log)
    kept: dict[str, Any] = {"outputs": outputs} if outputs is not None else {}
    transition(job["id"], "cancelled", when=_LIVE, message=message, **kept)


def _fail(
    job: Job,
    exc: BaseException,
    reporter: JobReporter,
    landed: list[tuple[str, int]] | None = None,
    *,
    resumable: bool = False,
) -> None:
    """Record a failed job; what it committed before it failed is recorded as its outputs
    (so expiry keeps those snapshots) and named in its error, with what the run kept
    (`Reporter.keep`: where its parts ran) and what it said it leaves (`stopped_with`: a
    checkpoint kept, marked partial). A resumable job's tables are marked partial: a
    re-run carries on there."""
    landed = landed or []
    note = _landed_text(landed)
    after = RESUMES if resumable else "running it again may write that again"
    if note:
        note = f"\nIt committed before it failed{note}; {after}."
    error = f"{type(exc).__name__}: {exc}{note}\n--- log tail ---\n{log_tail(job['log_path'], 30)}"
    said = reporter.partial_outputs or JobOutputs()
    left = JobOutputs(
        tables=[f"{table}@{sid}" for table, sid in dict(landed).items()],
        checkpoints=list(said.checkpoints),
        summary={**reporter.kept, **said.summary},
    )
    if resumable and left.tables:
        left.summary["partial"] = failed_note(reporter)
        mark_partial(dict(landed), left.summary["partial"], reporter.log)
    anything = left.tables or left.checkpoints or left.summary
    pinned: dict[str, Any] = {"outputs": json.dumps(outputs_json(left))} if anything else {}
    transition(
        job["id"],
        "failed",
        when=_LIVE,
        error=error,
        message=f"{exc}{note}",
        progress_message=failed_line(exc),
        **pinned,
    )


def _orphaned(job_id: str, parent: int) -> Callable[[], None]:
    def handle() -> None:
        job = get_job(job_id)
        recover(job, f"worker died (pid {parent} gone)", get_kind(job["kind"]).resumable)
        kill_own_group()

    return handle


def _sigterm(_signum: int, _frame: object) -> None:
    raise Stopped("stopped by SIGTERM (worker shutting down)")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m podium.jobs.execute JOB_ID", file=sys.stderr)
        return 2
    quiet_libraries()  # before any library loads: tqdm reads its switch at import
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    signal.signal(signal.SIGTERM, _sigterm)
    job_id = args[0]

    def factory(
        job_id: str, log_path: str | Path, lineage: Mapping[str, str] | None = None
    ) -> JobReporter:
        return JobReporter(job_id, log_path, lineage, on_orphaned=_orphaned(job_id, os.getppid()))

    job = execute_job(job_id, factory)
    return EXIT_CODES.get(job["status"], 1)


def exit_at_once(code: int) -> NoReturn:
    """End a job's process as soon as its outcome is recorded. The interpreter's own
    teardown (freeing torch's and TRL's modules, joining threads libraries left behind)
    took 3-5 s after a tiny SFT or GRPO run here, a worker slot held all that time, and
    past 5 s the worker stopped it: this process's SIGTERM handler then raised inside
    that teardown and was ignored, so it was killed at 10 s. The exit handlers still
    run (a run's temporary folders, logging's flush); a SIGTERM from then on ends it."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_at_once(main())
