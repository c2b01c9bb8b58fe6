"""Batches produced in a thread while the caller consumes the previous ones.

Reading or parsing is one side's work and Parquet encoding the other's, and both release
the GIL for most of it, so the two overlap on two cores: an import parses while the
writer encodes, an export decodes while the writer encodes.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

_DONE = object()


def prefetched(batches: Iterator[pa.RecordBatch], depth: int = 2) -> Iterator[pa.RecordBatch]:
    """`batches`, produced in a thread while the caller writes the previous ones; at
    most `depth` batches wait in between. An exception in the producer is raised here,
    in order."""
    ready: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        """Hand `item` over unless the consumer has gone; False when it has."""
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not put(batch):
                    return
            item: Any = _DONE
        except BaseException as exc:  # handed to the consumer, which raises it
            item = exc
        finally:
            # A generator left open is closed by the garbage collector in whichever thread
            # drops it; its cleanup (an import's SQLite scratch file) must run in this one.
            close = getattr(batches, "close", None)
            if close is not None:
                close()
        put(item)

    thread = threading.Thread(target=produce, name="podium-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = ready.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()
