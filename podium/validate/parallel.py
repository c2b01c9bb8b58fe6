"""Spreading batches of rows over processes, in order, with bounded memory.

Workers come from a fork server: a clean single-threaded process (forking the UI or
the job worker, which hold threads, is unsafe) that, unlike `spawn`, does not re-run
the caller's main script. Each worker builds its rules once from the picklable rule
objects. Batches travel as Arrow IPC bytes,
which carry only the rows of a slice (pickling a slice would copy its whole parent).
At most two batches per worker are in flight, and results come back in submission
order so the report is the same whatever the number of processes.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Collection, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass

import pyarrow as pa

from podium.reporting import Reporter
from podium.validate.batch import Plan
from podium.validate.extract import Extract
from podium.validate.rules import Rule
from podium.validate.turns import BatchResult, Columns, check_batch


@dataclass(frozen=True)
class Task:
    rules: tuple[Rule, ...]
    mode: Extract
    roles: tuple[str, ...] | None
    columns: Columns


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _to_ipc(batch: pa.RecordBatch) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    payload: bytes = sink.getvalue().to_pybytes()
    return payload


_worker_task: Task | None = None
_worker_plan: Plan | None = None


def _init_worker(task: Task) -> None:
    global _worker_task, _worker_plan
    _worker_task, _worker_plan = task, Plan.of(task.rules)


def _run_in_worker(data: bytes) -> BatchResult:
    assert _worker_task is not None and _worker_plan is not None
    batch = pa.ipc.open_stream(data).read_next_batch()
    task = _worker_task
    return check_batch(batch, _worker_plan, task.mode, task.roles, task.columns)


def map_batches(
    batches: Iterable[pa.RecordBatch],
    task: Task,
    workers: int,
    reporter: Reporter,
) -> Iterator[BatchResult]:
    """Check every batch, in order; `workers` <= 1 runs in this process."""
    if workers <= 1:
        plan = Plan.of(task.rules)
        for batch in batches:
            reporter.check_cancelled()
            yield check_batch(batch, plan, task.mode, task.roles, task.columns)
        return
    context = multiprocessing.get_context("forkserver")
    # The server imports the rule code once; each worker forked from it starts warm.
    context.set_forkserver_preload([__name__])
    with ProcessPoolExecutor(
        workers, mp_context=context, initializer=_init_worker, initargs=(task,)
    ) as pool:
        pending: deque[Future[BatchResult]] = deque()
        try:
            for batch in batches:
                reporter.check_cancelled()
                pending.append(pool.submit(_run_in_worker, _to_ipc(batch)))
                while len(pending) >= 2 * workers:
                    yield pending.popleft().result()
                    reporter.check_cancelled()
            while pending:
                yield pending.popleft().result()
                reporter.check_cancelled()
        except BaseException:
            for future in pending:
                future.cancel()
            raise


def task_for(
    rules: Collection[Rule], mode: Extract, roles: Collection[str] | None, columns: Columns
) -> Task:
    return Task(tuple(rules), mode, tuple(roles) if roles else None, columns)
