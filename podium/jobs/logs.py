"""Job log files: `$PODIUM_HOME/jobs/<id>/log.txt`, appended by the job's process."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path


def log_tail(path: str | Path, lines: int = 40) -> str:
    """The last `lines` lines of a log ('' if it does not exist yet)."""
    path = Path(path)
    if not path.is_file():
        return ""
    with path.open(encoding="utf-8", errors="replace") as fh:
        return "".join(deque(fh, maxlen=lines))


def follow(path: str | Path, done: Callable[[], bool], poll: float = 0.5) -> Iterator[str]:
    """Yield a log's text as it grows until `done()` is true and the file is drained."""
    path = Path(path)
    offset = 0
    while True:
        finished = done()  # read before draining so the last lines are never missed
        if path.is_file():
            with path.open(encoding="utf-8", errors="replace") as fh:
                fh.seek(offset)
                chunk = fh.read()
                offset = fh.tell()
            if chunk:
                yield chunk
        if finished:
            return
        time.sleep(poll)
