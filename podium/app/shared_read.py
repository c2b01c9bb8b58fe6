"""A read shared by every session of the app for a few seconds: what many sessions poll
(each tab's job tray, every 2 s) is read once per interval and key, not once per tab."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SharedRead(Generic[K, V]):
    """`read(key)`, kept for `seconds` after it was read. Sessions asking for one key at
    once wait for the one read in flight instead of each starting their own."""

    def __init__(
        self,
        seconds: float,
        read: Callable[[K], V],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.seconds = seconds
        self._read = read
        self._clock = clock
        self._values: dict[K, tuple[float, V]] = {}
        self._locks: dict[K, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, key: K) -> V:
        """The value read for `key` less than `seconds` ago, else a new read."""
        return self._get(key, fresh=False)

    def fresh(self, key: K) -> V:
        """A new read of `key`, kept for the others (a session's own action, which may
        just have changed what is read)."""
        return self._get(key, fresh=True)

    def _get(self, key: K, *, fresh: bool) -> V:
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            kept = self._values.get(key)
            if not fresh and kept is not None and self._clock() - kept[0] < self.seconds:
                return kept[1]
            value = self._read(key)
            self._values[key] = (self._clock(), value)
            return value
