"""A map over a stream in worker threads, in order, with a bounded number in flight.

Signals whose per-batch work is numpy (shingle hashing, MinHash in rensa) release the
GIL for most of it, so two batches computed at once use both cores of a small machine;
`concurrent.futures`' own `map` would read the whole stream before the first result.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

In = TypeVar("In")
Out = TypeVar("Out")


def worker_count() -> int:
    """The CPUs this process may use (its affinity, not the machine's count)."""
    return max(1, len(os.sched_getaffinity(0)))


def mapped_in_threads(
    fn: Callable[[In], Out], items: Iterable[In], workers: int | None = None
) -> Iterator[Out]:
    """fn(item) for each item, in the items' order, computed by `workers` threads with
    at most `workers` items taken from the stream and not yet handed back."""
    workers = workers or worker_count()
    if workers == 1:
        yield from map(fn, items)
        return
    pending: deque[Future[Out]] = deque()
    with ThreadPoolExecutor(workers, thread_name_prefix="podium-signal") as pool:
        try:
            for item in items:
                pending.append(pool.submit(fn, item))
                if len(pending) >= workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for left in pending:  # the consumer stopped or a result raised
                left.cancel()
