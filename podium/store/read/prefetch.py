"""Batches produced in a thread while the caller consumes the previous ones.

Reading or parsing is one side's work and Parquet encoding the other's, and both release
the GIL for most of it, so the two overlap on two cores: an import parses while the
writer encodes, an export decodes while the writer encodes.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any, Generic, TypeVar

import pyarrow as pa

T = TypeVar("T")
_DONE = object()


class Prefetcher(Generic[T]):
    """`items`, produced in a thread from the moment this is made (a caller can start
    the work before it is ready to take any), at most `depth` waiting in between.
    Iterate it once; an exception in the producer is raised there, in order. `close`
    stops the producer (iteration's end does too)."""

    def __init__(self, items: Iterator[T], depth: int = 2) -> None:
        self._items = items
        self._ready: queue.Queue[Any] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="podium-prefetch", daemon=True)
        self._thread.start()

    def _put(self, item: Any) -> bool:
        """Hand `item` over unless the consumer has gone; False when it has."""
        while not self._stop.is_set():
            try:
                self._ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self) -> None:
        try:
            for item in self._items:
                if not self._put(item):
                    return
            last: Any = _DONE
        except BaseException as exc:  # handed to the consumer, which raises it
            last = exc
        finally:
            # A generator left open is closed by the garbage collector in whichever thread
            # drops it; its cleanup (an import's SQLite scratch file) must run in this one.
            close = getattr(self._items, "close", None)
            if close is not None:
                close()
        self._put(last)

    def __iter__(self) -> Iterator[T]:
        try:
            while True:
                item = self._ready.get()
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def prefetched(batches: Iterator[pa.RecordBatch], depth: int = 2) -> Iterator[pa.RecordBatch]:
    """`batches`, produced in a thread (started at the first batch asked for) while the
    caller writes the previous ones; at most `depth` batches wait in between. An
    exception in the producer is raised here, in order."""
    yield from Prefetcher(batches, depth)
