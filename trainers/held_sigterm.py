"""The worker's SIGTERM, held while a training step is in hand.

The worker stops a job (a cancel, or its own shutdown) with SIGTERM to the job's process
group. Raised in the middle of a step, it would leave the weights half-updated and no
checkpoint; held, the run ends its step, saves and registers its state, and only then
lets the signal do what the job's own handler does (end it cancelled, or requeued when
the worker is shutting down). Used by TRL's callback and the async GRPO loop.
"""

from __future__ import annotations

import signal
import threading
from typing import Any


class HeldSigterm:
    def __init__(self) -> None:
        # The SIGTERM received while held: (signal number, frame).
        self.signalled: tuple[int, Any] | None = None
        self._previous: Any = None  # the handler the signal is held for

    @property
    def requested(self) -> bool:
        return self.signalled is not None

    def hold(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread may set handlers; the signal then acts at once

        def held(signum: int, frame: Any) -> None:
            self.signalled = (signum, frame)

        self._previous = signal.signal(signal.SIGTERM, held)

    def release(self) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None

    def deliver(self) -> bool:
        """Release the signal, and pass one that came to the handler it was held for
        (the job's raises); False when none came or there was no handler to call."""
        previous = self._previous
        self.release()
        if self.signalled is not None and callable(previous):
            previous(*self.signalled)
            return True
        return False
