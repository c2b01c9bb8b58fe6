"""Waiting for a pipe or socket to have something to read, at any descriptor number.

`select.select` refuses descriptors numbered 1024 and up (FD_SETSIZE): a long-lived
process that holds many files (a server, a test session) then cannot talk to its
sandbox workers at all. `poll` has no such limit.
"""

from __future__ import annotations

import select
from typing import Protocol


class HasFileno(Protocol):
    def fileno(self) -> int: ...


def readable(source: int | HasFileno, timeout_s: float | None) -> bool:
    """Whether `source` has data (or its end) to read within `timeout_s` (None: wait)."""
    poller = select.poll()
    poller.register(source, select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR)
    wait_ms = None if timeout_s is None else max(0, int(timeout_s * 1000))
    return bool(poller.poll(wait_ms))
