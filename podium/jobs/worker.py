"""The worker: claims queued jobs, launches each in its own process group, watches them.

    podium worker              # run until Ctrl-C / SIGTERM
    podium worker --once       # drain the queue, then exit

Each loop it (1) fails or requeues jobs whose heartbeat went stale (their worker or
machine died), (2) heartbeats its own jobs while their processes live, stops those
whose cancel was requested (SIGTERM to the group, SIGKILL after a grace period) and
records jobs whose process died without saying so, and (3) claims the next queued job
if it has a free slot: `concurrency` slots for any kind plus `light_slots` for light
kinds only (see podium/jobs/lanes.py), so short jobs never wait behind training. Any
number of workers can share one database.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.exc import OperationalError

from podium.config import get_settings
from podium.errors import PodiumError
from podium.identity import require
from podium.jobs.kinds import get_kind
from podium.jobs.lanes import heavy_kinds, may_claim
from podium.jobs.launchers import (
    LAUNCHERS,
    Launched,
    Launcher,
    get_launcher,
    requested_launcher,
)
from podium.jobs.logs import log_tail
from podium.jobs.plugins import load_plugins
from podium.jobs.queue import (
    Job,
    claim_next,
    get_job,
    heartbeat,
    recover,
    set_fields,
    stale_jobs,
    transition,
)
from podium.store.state.users import submitter

CANCEL_GRACE_SECONDS = 5.0


class Worker:
    def __init__(
        self,
        launcher: Launcher | None = None,
        poll: float = 1.0,
        concurrency: int = 1,
        say: Callable[[str], None] = print,
        light_slots: int = 1,
    ) -> None:
        load_plugins()
        self.settings = get_settings()
        self.launcher = launcher or get_launcher(self.settings.launcher)
        self._launchers: dict[str, Launcher] = {self.launcher.name: self.launcher}
        self.poll = poll
        self.concurrency = max(1, concurrency)
        self.light_slots = max(0, light_slots)
        self.kinds: dict[str, str] = {}  # running job id -> its kind, for the lanes
        self.say = say
        self.running: dict[str, Launched] = {}
        self.stop_event = threading.Event()
        self._last_recovery = 0.0
        self._last_beat = 0.0
        self._settled: dict[str, float] = {}
        self._stopping: dict[str, threading.Thread] = {}  # cancelled jobs being stopped

    def run(self, once: bool = False) -> None:
        self.say(f"worker {os.getpid()} started (launcher {self.launcher.name})")
        try:
            while not self.stop_event.is_set():
                try:
                    self.recover_stale()
                    self.watch()
                    claimed = self.claim()
                except OperationalError as exc:  # a busy or restarting database: retry
                    self.say(f"worker: database error, retrying: {exc}")
                    claimed = False
                else:
                    if once and not claimed and not self.running:
                        break
                self.stop_event.wait(0 if claimed else self.poll)
        finally:
            self.shutdown()
        self.say(f"worker {os.getpid()} stopped")

    def recover_stale(self, force: bool = False) -> None:
        every = max(1.0, min(self.settings.stale_after_seconds / 2, 15.0))
        if not force and time.monotonic() - self._last_recovery < every:
            return
        self._last_recovery = time.monotonic()
        for job in stale_jobs():
            if job["id"] in self.running:
                continue
            killed = self.launcher_named(job["launcher"]).reap_orphan(job)
            since = _fmt(job["heartbeat_at"])
            reason = f"worker died: no heartbeat since {since}"
            if killed:
                reason += " (its leftover processes were killed)"
            outcome = recover(job, reason, _resumable(job))
            self.say(f"job {job['id']}: {reason} -> {outcome}")

    def watch(self) -> None:
        beat = time.monotonic() - self._last_beat >= self.settings.heartbeat_seconds
        if beat:
            self._last_beat = time.monotonic()
        for job_id, proc in list(self.running.items()):
            code = proc.poll()
            if code is not None:
                self.finish(job_id, code)
                continue
            status = heartbeat(job_id) if beat else get_job(job_id)["status"]
            if status == "cancelling":
                if job_id not in self._stopping:
                    grace = _stop_grace(self.kinds[job_id])
                    self.say(
                        f"job {job_id}: cancel requested, stopping process group {proc.pgid} "
                        f"(it has {grace:.0f} s to save its state)"
                    )
                    # In a thread: a training run's grace must not hold up the other lane.
                    self._stopping[job_id] = threading.Thread(
                        target=proc.stop, args=(grace,), name=f"stop-{job_id}", daemon=True
                    )
                    self._stopping[job_id].start()
            elif status not in ("running", None) and job_id not in self._stopping:
                # Settled (by the job as it exits, or by someone else): give the process
                # a grace period to exit by itself, then make sure it does not go on.
                since = self._settled.setdefault(job_id, time.monotonic())
                if time.monotonic() - since > CANCEL_GRACE_SECONDS:
                    proc.stop(CANCEL_GRACE_SECONDS)
                    code = proc.poll()  # 0 is a code: `or -9` turned a clean exit into -9
                    self.finish(job_id, -signal.SIGKILL if code is None else code, True)

    def finish(self, job_id: str, code: int, lingered: bool = False) -> None:
        """Record how job `job_id`'s process ended; `lingered`: it outlived its settled job
        by the grace period and this worker stopped it."""
        del self.running[job_id]
        self.kinds.pop(job_id, None)
        self._settled.pop(job_id, None)
        stopping = self._stopping.pop(job_id, None)
        if stopping is not None:
            stopping.join(timeout=CANCEL_GRACE_SECONDS)
        job = get_job(job_id)
        if job["status"] == "cancelling":
            transition(job_id, "cancelled", message=f"process exited with code {code}")
        elif job["status"] == "running":
            error = (
                f"the job's process {'died' if code < 0 else 'ended'} without recording an "
                f"outcome ({exit_text(code)})\n"
                f"--- log tail ---\n{log_tail(job['log_path'], 30)}"
            )
            transition(job_id, "failed", error=error, message=f"process exit code {code}")
        status = get_job(job_id)["status"]
        if lingered:
            self.say(f"job {job_id}: {status}; {lingering_text(code)}")
        else:
            self.say(f"job {job_id}: {status} (exit code {code})")

    def claim(self) -> bool:
        lane = may_claim([self.kinds[j] for j in self.running], self.concurrency, self.light_slots)
        if lane is None or self.stop_event.is_set():
            return False
        exclude = heavy_kinds() if lane == "light" else []
        job = claim_next(os.getpid(), self.launcher.name, exclude)
        if job is None:
            return False
        try:
            # The submitter's role may have changed since they queued it.
            require(submitter(job["submitted_by"]), "run_job")
            launcher = self.launcher_named(requested_launcher(job))
            if launcher is not self.launcher:
                set_fields(job["id"], launcher=launcher.name)
                job["launcher"] = launcher.name
            proc = launcher.launch(job)
        except (OSError, PodiumError) as exc:
            transition(job["id"], "failed", error=f"could not launch: {exc}", message=str(exc))
            self.say(f"job {job['id']}: could not launch: {exc}")
            return True
        set_fields(job["id"], pgid=proc.pgid)
        self.running[job["id"]] = proc
        self.kinds[job["id"]] = job["kind"]
        self.say(f"job {job['id']} ({job['kind']}): started, process group {proc.pgid}")
        return True

    def launcher_named(self, name: str | None) -> Launcher:
        """This worker's backend, or the one a job's card names (`launcher: ray`)."""
        if not name or name not in LAUNCHERS:  # e.g. "foreground": ran in a CLI process
            return self.launcher
        if name not in self._launchers:
            self._launchers[name] = get_launcher(name)
        return self._launchers[name]

    def shutdown(self) -> None:
        """Stop this worker's jobs; they are failed, or requeued if they can resume.

        A job's process records that itself on SIGTERM; if it died without doing so,
        the worker records it.
        """
        for job_id, proc in list(self.running.items()):
            proc.stop(_stop_grace(self.kinds.get(job_id, "")))  # training saves its state
            job = get_job(job_id)
            if job["status"] in ("running", "cancelling"):
                recover(job, f"worker {os.getpid()} stopped", _resumable(job))
            self.say(f"job {job_id}: worker stopping -> {get_job(job_id)['status']}")
            del self.running[job_id]

    def install_signal_handlers(self) -> None:
        def handler(_signum: int, _frame: object) -> None:
            self.stop_event.set()

        signal.signal(signal.SIGTERM, handler)
        signal.signal(signal.SIGINT, handler)


def exit_text(code: int) -> str:
    """How a job's process ended, as its reaper can honestly tell it from the exit code."""
    if code >= 0:
        return f"exit code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = "unknown signal"
    why = ": out of memory? see `dmesg`" if -code == signal.SIGKILL else ""
    return f"killed by signal {-code}, {name}{why}"


def lingering_text(code: int) -> str:
    """What became of a process that went on after its job had settled: the code is this
    worker's own stop, not how the job ended."""
    waited = f"still running {CANCEL_GRACE_SECONDS:.0f} s after the job ended"
    if code == -signal.SIGKILL:
        return f"its process was {waited}, ignored SIGTERM and was killed (SIGKILL)"
    if code < 0:
        return f"its process was {waited} and was stopped ({exit_text(code)})"
    return f"its process was {waited} and exited with code {code} when stopped (SIGTERM)"


def _stop_grace(kind: str) -> float:
    try:
        return get_kind(kind).stop_grace_s
    except PodiumError:  # a plugin kind this worker cannot see
        return CANCEL_GRACE_SECONDS


def _resumable(job: Job) -> bool:
    try:
        return get_kind(job["kind"]).resumable
    except Exception:
        return False


def _fmt(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else "never"
