"""Values kept by key in memory, the least recently used dropped first, for what never
changes once made: a snapshot's plan, a manifest's entries, a data file's row groups,
a page of rows at one snapshot, the annotations at one snapshot of an annotations table."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_every: weakref.WeakSet[Kept[Any, Any]] = weakref.WeakSet()


class Kept(Generic[K, V]):
    """At most `size` values; shared by every thread (the app's sessions)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self._making: dict[K, threading.Lock] = {}  # a lock per key being made
        _every.add(self)

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The value kept for `key`, else `make()`'s, then kept. One thread makes a key's
        value while the others asking for that key wait for it (after a label, ten
        sessions each read the new annotations snapshot at once); other keys are not held
        up. If `make` fails, the next waiter makes it."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                return self._values[key]
            making = self._making.setdefault(key, threading.Lock())
        try:
            with making:
                with self._lock:
                    if key in self._values:  # made while this thread waited
                        self._values.move_to_end(key)
                        return self._values[key]
                value = make()
                with self._lock:
                    self._values[key] = value
                    while len(self._values) > self.size:
                        self._values.popitem(last=False)
                return value
        finally:
            with self._lock:
                if self._making.get(key) is making and not making.locked():
                    del self._making[key]

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


def forget_all() -> None:
    """Empty every `Kept` of this process, as a new process would start (benchmarks and
    tests that measure or check a cold read)."""
    for kept in list(_every):
        kept.clear()
