"""The kill harness: run a job through the real queue and a real `podium worker`, SIGKILL
the worker's process group and the job's own group at a seeded random moment, start a
new worker, and check what is left.

    harness = KillHarness(home, random.Random(seed))
    harness.calibrate(case)        # one clean run: the "after" state and its duration
    harness.trial(case)            # one seeded kill, checked; returns a Trial
    harness.close()                # stop the worker

Checks after every kill (each failure is a string in `Trial.problems`):
- the job ends `failed` with a reason, or (a kind that resumes) is requeued, runs
  again and succeeds;
- what it writes is exactly the state before the job or exactly the clean run's
  state (rows compared by id and content), never something in between;
- a job that failed before committing succeeds when its card is submitted again;
- no job runs twice: a killed job was claimed once more at most (a resume), and no
  output has a row twice.

A `review edit` case has no job: the `podium edit` / `podium delete-rows` process
itself is killed, and the table must read as before or after the change.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from podium.jobs.cards import parse_card
from podium.jobs.launch import submit
from podium.jobs.queue import fail_dead_jobs, get_job
from podium.jobs.tables import db, job_events

FINAL = ("succeeded", "failed", "cancelled")
State = Any  # a comparable picture of what a case wrote (None: nothing)


@dataclass
class Case:
    """One job kind as the harness drives it.

    `card(out)` is the run card's front matter writing to output `out` (a fresh name per
    trial); `state(out)` reads what is there (None when nothing is); `command(out)`, for
    cases that are not jobs, is the CLI process to kill instead.
    """

    kind: str
    card: Callable[[str], str] | None = None
    state: Callable[[str], State] = lambda out: None
    resumes: bool = False
    command: Callable[[str], list[str]] | None = None
    expected: Callable[[str], State] | None = None  # a command case's after-state
    before: Callable[[str], State] | None = None  # default: nothing written


@dataclass
class Trial:
    kind: str
    seed_delay: float
    killed: bool  # the job (or command) was still running when the signal went
    outcome: str  # failed / resumed / committed-then-failed / finished-first ...
    attempts: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _worker_env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


class KillHarness:
    def __init__(self, home: Path, rng: random.Random, poll: float = 0.2) -> None:
        self.home = home
        self.rng = rng
        self.poll = poll
        self.worker: subprocess.Popen[bytes] | None = None
        self.workers_started = 0
        self.durations: dict[str, float] = {}
        self.after: dict[str, tuple[str, State]] = {}
        self.serial = 0

    # --- the worker -------------------------------------------------------------------
    def start_worker(self) -> None:
        log = (self.home / f"harness-worker-{self.workers_started}.log").open("wb")
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "podium.cli", "worker", "--poll", str(self.poll)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=_worker_env(),
            start_new_session=True,  # its own group: the harness kills the whole of it
        )
        log.close()
        self.workers_started += 1

    def ensure_worker(self) -> None:
        if self.worker is None or self.worker.poll() is not None:
            self.start_worker()

    def close(self) -> None:
        if self.worker is not None and self.worker.poll() is None:
            self.worker.send_signal(signal.SIGTERM)
            try:
                self.worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                _killpg(self.worker.pid)
                self.worker.wait()
        self.worker = None

    def kill_worker_and(self, job_id: str | None) -> None:
        """SIGKILL the worker's group and every process group running `job_id`."""
        groups = set()
        if self.worker is not None:
            groups.add(self.worker.pid)
        if job_id:
            pgid = get_job(job_id).get("pgid")
            if pgid:
                groups.add(int(pgid))
            groups |= _groups_running(job_id)
        for pgid in groups:
            _killpg(pgid)
        if self.worker is not None:
            self.worker.wait()
            self.worker = None

    # --- jobs ---------------------------------------------------------------------------
    def fresh_out(self, case: Case) -> str:
        self.serial += 1
        return f"faults.{case.kind.replace('-', '_')}_{self.serial}"

    def submit(self, front: str) -> str:
        return submit(parse_card(f"---\n{front}\n---\nkill harness\n"))

    def wait_final(self, job_id: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = get_job(job_id)
            if job["status"] in FINAL:
                return job
            time.sleep(0.2)
        raise AssertionError(f"job {job_id} did not finish within {timeout:.0f} s")

    def wait_running(self, job_id: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = get_job(job_id)
            if job["status"] != "queued":
                return
            time.sleep(0.05)
        raise AssertionError(f"job {job_id} was not claimed within {timeout:.0f} s")

    def calibrate(self, case: Case, timeout: float = 600) -> None:
        """One clean run: the state a finished run leaves, and how long it takes."""
        out = self.fresh_out(case)
        if case.command is not None:
            started = time.monotonic()
            proc = subprocess.run(case.command(out), capture_output=True, env=_worker_env())
            if proc.returncode != 0:
                raise AssertionError(f"{case.kind} clean run failed:\n{proc.stderr.decode()}")
            self.durations[case.kind] = time.monotonic() - started
            return
        assert case.card is not None
        self.ensure_worker()
        job_id = self.submit(case.card(out))
        job = self.wait_final(job_id, timeout)
        if job["status"] != "succeeded":
            raise AssertionError(f"{case.kind} clean run {job_id}: {job['status']}\n{job['error']}")
        self.durations[case.kind] = (job["finished_at"] - job["started_at"]).total_seconds()
        self.after[case.kind] = (out, case.state(out))

    def trial(self, case: Case, timeout: float = 600) -> Trial:
        if case.command is not None:
            return self._command_trial(case)
        assert case.card is not None
        out = self.fresh_out(case)
        before = case.before(out) if case.before else None
        after = self.after[case.kind][1]
        # Kill anywhere from the claim to just before a clean run would have finished.
        delay = self.rng.uniform(0, self.durations[case.kind] * 0.95)
        started = time.monotonic()
        self.ensure_worker()
        job_id = self.submit(case.card(out))
        self.wait_running(job_id)
        time.sleep(delay)
        killed = get_job(job_id)["status"] == "running"
        self.kill_worker_and(job_id)
        self.start_worker()
        job = self.wait_final(job_id, timeout)
        trial = Trial(case.kind, round(delay, 3), killed, job["status"], job["attempt"])
        state = case.state(out)
        problems = trial.problems
        if state != before and state != after:
            problems.append(f"{out} is half-written: neither the before nor the after state")
        events = _statuses(job_id)
        if events.count("succeeded") > 1 or job["attempt"] > 2:
            problems.append(f"job {job_id} ran more than twice: events {events}")
        if job["status"] == "failed":
            if not (job["error"] or "").strip():
                problems.append(f"job {job_id} failed without a reason")
            if case.resumes and killed:
                problems.append(f"job {job_id} of a resumable kind failed: {job['error']}")
            if state == before:
                trial.outcome = "failed"
                again = self.wait_final(self.submit(case.card(out)), timeout)
                if again["status"] != "succeeded":
                    problems.append(f"re-run of {job_id}: {again['status']}: {again['error']}")
                elif case.state(out) != after:
                    problems.append(f"re-run of {job_id} left {out} unlike a clean run")
            else:
                trial.outcome = "failed-after-commit"
        elif job["status"] == "succeeded":
            trial.outcome = "resumed" if job["attempt"] > 1 else "finished-first"
            if state != after:
                problems.append(f"job {job_id} succeeded but {out} differs from a clean run")
            if killed and not case.resumes:
                problems.append(f"job {job_id} of a kind that does not resume succeeded")
        else:
            problems.append(f"job {job_id} ended {job['status']}")
        trial.seconds = round(time.monotonic() - started, 1)
        return trial

    def _command_trial(self, case: Case) -> Trial:
        assert case.command is not None and case.expected is not None
        out = self.fresh_out(case)
        before = case.state(out)
        after = case.expected(out)
        delay = self.rng.uniform(0, self.durations[case.kind] * 0.95)
        started = time.monotonic()
        proc = subprocess.Popen(
            case.command(out),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=_worker_env(),
            start_new_session=True,
        )
        time.sleep(delay)
        killed = proc.poll() is None
        _killpg(proc.pid)
        proc.wait()
        fail_dead_jobs()
        state = case.state(out)
        trial = Trial(case.kind, round(delay, 3), killed, "killed" if killed else "finished-first")
        if state == before:
            trial.outcome = "nothing-written" if killed else trial.outcome
            again = subprocess.run(case.command(out), capture_output=True, env=_worker_env())
            if again.returncode != 0:
                trial.problems.append(f"re-run of {case.kind} failed: {again.stderr.decode()}")
            elif case.state(out) != after:
                trial.problems.append(f"re-run of {case.kind} left a state unlike the change")
        elif state == after:
            trial.outcome = "committed" if killed else trial.outcome
        else:
            trial.problems.append(f"{case.kind}: the table is half-written after a kill")
        trial.seconds = round(time.monotonic() - started, 1)
        return trial


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _groups_running(job_id: str) -> set[int]:
    """Process groups of any process whose command line names the job (its executor)."""
    groups = set()
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info.get("cmdline") or []
        if job_id in cmdline and "podium.jobs.execute" in cmdline:
            try:
                groups.add(os.getpgid(proc.pid))
            except ProcessLookupError:
                pass
    return groups


def _statuses(job_id: str) -> list[str]:
    from sqlalchemy import select

    with db().connect() as conn:
        rows = conn.execute(
            select(job_events.c.status)
            .where(job_events.c.job_id == job_id)
            .order_by(job_events.c.at)
        )
        return [r[0] for r in rows]


def summary(trials: list[Trial]) -> dict[str, Any]:
    """Kills per kind and outcomes, as the soak run and the README report them."""
    per_kind: dict[str, dict[str, int]] = {}
    for t in trials:
        counts = per_kind.setdefault(t.kind, {"trials": 0, "kills": 0})
        counts["trials"] += 1
        counts["kills"] += int(t.killed)
        counts[t.outcome] = counts.get(t.outcome, 0) + 1
    return {
        "trials": len(trials),
        "kills": sum(t.killed for t in trials),
        "problems": [p for t in trials for p in t.problems],
        "per_kind": per_kind,
    }


def write_summary(path: Path, trials: list[Trial]) -> dict[str, Any]:
    data = summary(trials)
    data["trial_log"] = [t.__dict__ for t in trials]
    path.write_text(json.dumps(data, indent=1))
    return data
