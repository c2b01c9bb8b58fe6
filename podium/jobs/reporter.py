"""The Reporter a job runs with: progress, metrics, samples and heartbeats in the DB.

Writes are buffered and throttled (progress, metrics and samples go to the database
together at most twice a second; cancel checks read the heartbeat's cached status), so
a tight loop that reports every row stays cheap. A
background thread beats every `heartbeat_seconds`; if the job was launched by a worker
that has since died, the thread records that and ends the job's process group, so a
worker's death never leaves a job running unwatched.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import insert, update
from sqlalchemy.exc import OperationalError

from podium.config import get_settings
from podium.jobs.queue import heartbeat, now
from podium.jobs.tables import WARNING, db, job_events, job_metrics, job_samples, jobs
from podium.reporting import JobOutputs, Reporter

_FLUSH_EVERY = 0.5  # seconds between writes of progress, metrics and samples


class JobReporter(Reporter):
    def __init__(
        self,
        job_id: str,
        log_path: str | Path,
        lineage: Mapping[str, str] | None = None,
        on_orphaned: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(lineage)
        self.job_id = job_id
        self._eng = db()
        self._log = Path(log_path).open("a", encoding="utf-8", buffering=1)
        self._status = "running"
        self._pending: tuple[int | None, int | None, str] | None = None
        self._count: tuple[int | None, int | None] = (None, None)  # the last progress()
        self._moved_at: datetime | None = None  # when the count last changed
        self._metrics: list[dict[str, Any]] = []
        self._samples: list[dict[str, Any]] = []
        self._non_finite: set[str] = set()  # metrics that reported NaN or infinity
        self._last_write = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._parent = os.getppid()
        self._on_orphaned = on_orphaned
        # Called when the run says what it leaves as it stops (`stopped_with`).
        self.on_stopped: Callable[[JobReporter], None] | None = None
        self._thread = threading.Thread(target=self._beat, name="podium-heartbeat", daemon=True)

    def __enter__(self) -> JobReporter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.flush()
        self._log.close()

    @property
    def last_progress(self) -> tuple[int | None, int | None]:
        """(done, total) of the last `progress`: what the job's row holds once written
        (the heartbeat thread may still be writing it)."""
        with self._lock:
            return self._count

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        with self._lock:
            if done != self._count[0]:
                self._moved_at = now()
            self._count = (done, total)
            self._pending = (done, total, message)
        self._maybe_flush(force=done == total)

    def phase(self, message: str) -> None:
        with self._lock:
            self._pending = (*self._count, message)
        self._maybe_flush(force=True)  # phases change seldom; show each at once

    def metric(self, step: int, values: Mapping[str, float]) -> None:
        at = now()
        rows: list[dict[str, Any]] = []
        for name, value in values.items():
            if value is None:
                continue
            if math.isfinite(float(value)):
                rows.append(
                    {"job_id": self.job_id, "step": step, "name": name, "value": float(value)}
                    | {"at": at}
                )
            elif name not in self._non_finite:  # the column holds numbers; say it once
                self._non_finite.add(name)
                self.warn(
                    f"{name} was {float(value)} at step {step} (not charted): "
                    "the run may have diverged."
                )
        with self._lock:
            self._metrics.extend(rows)
        self._maybe_flush()

    def sample(self, step: int, values: Mapping[str, Any]) -> None:
        row = {
            "job_id": self.job_id,
            "step": step,
            "values": json.dumps(dict(values), default=str),
            "at": now(),
        }
        with self._lock:
            self._samples.append(row)
        self._maybe_flush()

    def warn(self, message: str) -> None:
        """A warning event, written at once: the Logbook and `podium jobs show` list it
        while the job still runs (`logbook.warnings`)."""
        self.log(f"warning: {message}")
        at = now()
        try:
            with self._eng.begin() as conn:
                conn.execute(
                    insert(job_events).values(
                        job_id=self.job_id, at=at, status=WARNING, message=message
                    )
                )
        except OperationalError as exc:  # the log line above keeps it; the job goes on
            self.log(f"warning not recorded (database unreachable): {exc}")

    def _maybe_flush(self, force: bool = False) -> None:
        if force or time.monotonic() - self._last_write >= _FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Write buffered progress, metrics and samples in one transaction."""
        with self._lock:
            pending, self._pending = self._pending, None
            moved_at = self._moved_at
            metrics, self._metrics = self._metrics, []
            samples, self._samples = self._samples, []
        self._last_write = time.monotonic()
        if pending is None and not metrics and not samples:
            return
        try:
            with self._eng.begin() as conn:
                if pending is not None:
                    done, total, message = pending
                    conn.execute(
                        update(jobs)
                        .where(jobs.c.id == self.job_id)
                        .values(
                            progress_done=done,
                            progress_total=total,
                            progress_message=message,
                            progress_at=moved_at,
                        )
                    )
                if metrics:
                    conn.execute(insert(job_metrics), metrics)
                if samples:
                    conn.execute(insert(job_samples), samples)
        except OperationalError as exc:
            # The database went away for a moment (a restart, a failover): keep what was
            # buffered for the next flush instead of failing the job's work over a
            # progress bar. Its commit, later, reports an outage that lasts.
            with self._lock:
                self._pending = self._pending or pending
                self._metrics[:0] = metrics
                self._samples[:0] = samples
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            self.log(f"progress not recorded yet (database unreachable, will retry): {first}")

    def log(self, message: str) -> None:
        self._log.write(f"{now():%Y-%m-%d %H:%M:%S} {message}\n")

    def stopped_with(self, outputs: JobOutputs) -> None:
        """Kept for the cancel, and handed to `on_stopped` at once (the job's runner
        records them there: the process may not live to record the cancel)."""
        super().stopped_with(outputs)
        if self.on_stopped is None:
            return
        try:
            self.on_stopped(self)
        except Exception as exc:  # the run goes on stopping; the cancel lists them again
            self.log(f"could not record what the stopped run leaves: {exc}")

    def is_cancelled(self) -> bool:
        return self._status in ("cancelling", "cancelled")

    def _beat(self) -> None:
        interval = get_settings().heartbeat_seconds
        last = time.monotonic()
        while not self._stop.wait(min(interval, 1.0)):
            if self._on_orphaned and os.getppid() != self._parent:
                self._on_orphaned()
                return
            if time.monotonic() - last < interval:
                continue
            last = time.monotonic()
            try:
                self._status = heartbeat(self.job_id, self._eng) or "failed"
                self.flush()
            except Exception as exc:  # a busy database must not kill the heartbeat
                self.log(f"heartbeat failed, will retry: {exc}")
