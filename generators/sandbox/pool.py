"""`Sandbox`: a pool of warm workers of one backend, one job per worker at a time.

    with Sandbox("local") as box:
        box.run("print(1 + 1)").stdout            # '2\n'
        box.run_many([Job(code) for code in codes])   # all workers busy, results in order

A worker that breaks (its server died, stopped answering, or a job made it fail) is
closed and replaced before its next job; a watchdog thread does the same for idle
workers, so a pool left open stays healthy.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from generators.sandbox.limits import Limits, Result, sandbox_error
from generators.sandbox.worker import Worker

WATCHDOG_INTERVAL_S = 2.0


@dataclass(frozen=True)
class Job:
    code: str
    stdin: str | None = None
    args: tuple[str, ...] = ()
    limits: Limits | None = None
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


def worker_factory(
    backend: str, limits: Limits | None = None, **options: Any
) -> Callable[[int], Worker]:
    """Constructor of workers for `backend` ("local", "docker" or "bare")."""
    if backend == "local":
        from generators.sandbox.local import LocalWorker

        return lambda i: LocalWorker(i, **options)
    if backend == "docker":
        from generators.sandbox.docker_backend import DockerWorker

        # Containers are created with the pool's limits; a job asking for more memory
        # updates its container before it runs.
        return lambda i: DockerWorker(i, limits=limits, **options)
    if backend == "bare":
        from generators.sandbox.bare import BareWorker

        return lambda i: BareWorker(i)
    from podium.errors import InvalidInput

    raise InvalidInput(f"Unknown sandbox backend {backend!r}; use local or docker.")


class Sandbox:
    def __init__(
        self,
        backend: str | None = None,
        workers: int | None = None,
        limits: Limits | None = None,
        **options: Any,
    ) -> None:
        if backend is None:
            from podium.config import get_settings

            backend = get_settings().sandbox_backend
        self.backend = backend
        self.size = max(1, workers or os.cpu_count() or 1)
        self.limits = limits or Limits()
        self._make = worker_factory(backend, self.limits, **options)
        self._idle: queue.Queue[Worker] = queue.Queue()
        self._all: list[Worker] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._watchdog: threading.Thread | None = None
        # Every worker process is spawned from this one long-lived thread: bwrap's
        # --die-with-parent fires when the *thread* that spawned it exits.
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="sandbox-spawner")
        self.replacements = 0

    # -- lifecycle ------------------------------------------------------------------
    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> Sandbox:
        try:
            for index in range(self.size):
                self._idle.put(self._new_worker(index))
        except BaseException:
            self.close()  # workers already started must not outlive a failed start
            raise
        self._watchdog = threading.Thread(target=self._watch, name="sandbox-watchdog", daemon=True)
        self._watchdog.start()
        return self

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            workers, self._all = list(self._all), []
        for worker in workers:
            try:
                worker.close()
            except Exception:  # closing must finish for every worker
                pass
        self._spawner.shutdown(wait=False)

    def _new_worker(self, index: int) -> Worker:
        return self._spawner.submit(self._spawn, index).result()

    def _spawn(self, index: int) -> Worker:
        worker = self._make(index)
        try:
            worker.start()
        except Exception:
            worker.close()
            raise
        with self._lock:
            self._all.append(worker)
        return worker

    def _replace(self, worker: Worker) -> Worker:
        with self._lock:
            if worker in self._all:
                self._all.remove(worker)
        worker.close()
        with self._lock:
            self.replacements += 1
        return self._new_worker(worker.index)

    def _watch(self) -> None:
        while not self._closed.wait(WATCHDOG_INTERVAL_S):
            for _ in range(self._idle.qsize()):
                try:
                    worker = self._idle.get_nowait()
                except queue.Empty:
                    break
                try:
                    if not worker.alive():
                        worker = self._replace(worker)
                except Exception:  # e.g. the engine is down: the next job reports it
                    worker.broken = True
                finally:
                    self._idle.put(worker)

    # -- running --------------------------------------------------------------------
    def run(
        self,
        code: str,
        stdin: str | None = None,
        args: Iterable[str] = (),
        limits: Limits | None = None,
    ) -> Result:
        if self._closed.is_set():
            raise RuntimeError("this Sandbox is closed")
        worker = self._idle.get()
        try:
            if not worker.alive():
                worker = self._replace(worker)
            result = worker.run(code, stdin, tuple(args), limits or self.limits)
            if not worker.alive():
                worker = self._replace(worker)
        except Exception as exc:  # a replacement that fails is reported, not raised
            worker.broken = True
            return sandbox_error(f"{self.backend} sandbox unavailable: {exc}")
        finally:
            self._idle.put(worker)
        return result

    def run_job(self, job: Job) -> Result:
        return self.run(job.code, job.stdin, job.args, job.limits)

    def imap(self, jobs: Iterable[Job]) -> Generator[tuple[Job, Result], None, None]:
        """Run jobs on all workers; yields (job, result) in completion order.

        Closing the iterator early (a cancelled build) drops the jobs not yet started.
        """
        pool = ThreadPoolExecutor(self.size, thread_name_prefix="sandbox-job")
        pending = {pool.submit(self.run_job, job): job for job in jobs}
        try:
            for future in as_completed(pending):
                yield pending[future], future.result()
        finally:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=True)

    def run_many(self, jobs: Iterable[Job]) -> list[Result]:
        """Run jobs on all workers; results in the order of `jobs`."""
        with ThreadPoolExecutor(self.size, thread_name_prefix="sandbox-job") as pool:
            return list(pool.map(self.run_job, jobs))
