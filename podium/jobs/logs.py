"""Job log files: `$PODIUM_HOME/jobs/<id>/log.txt`, appended by the job's process."""

from __future__ import annotations

import re
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


# A native library's dump on a fatal signal (abseil's failure handler in Ray's and
# vLLM's processes): "*** SIGTERM received at time=... on cpu 3 ***", "PC: @ 0x...",
# "    @ 0x... (unknown)", each line maybe behind a glog "[...] logging.cc:440: " or a
# Ray actor's "(Replica pid=12) " prefix, often twice. Stopping a job's processes
# prints one per process: addresses nobody reading the job can use.
_PREFIX = r"^(?:\([^)\n]*pid=\d+[^)\n]*\)\s*)?(?:\[[^\]\n]*\]\s*(?:[\w.]+:\d+:\s*)?)?"
_DUMP_START = re.compile(_PREFIX + r"\*\*\* (SIG[A-Z]+) received at time=")
_DUMP_LINE = re.compile(_PREFIX + r"(?:PC: @|\s*@\s)")


def readable_log(text: str) -> str:
    """`text` with each run of native signal dumps folded into one line that says which
    signal stopped the job's processes; everything else as written."""
    out: list[str] = []
    signals: list[str] = []
    left_out = 0
    for line in text.splitlines(keepends=True):
        start = _DUMP_START.match(line)
        if start or (left_out and _DUMP_LINE.match(line)):
            if start and start.group(1) not in signals:
                signals.append(start.group(1))
            left_out += 1
            continue
        if left_out:
            out.append(_fold_note(signals, left_out))
            signals, left_out = [], 0
        out.append(line)
    if left_out:
        out.append(_fold_note(signals, left_out))
    return "".join(out)


def _fold_note(signals: list[str], lines: int) -> str:
    return (
        f"[{'/'.join(signals)}: the job's processes were stopped; {lines} lines of native "
        "stack dump left out]\n"
    )


def readable_tail(path: str | Path, lines: int = 40) -> str:
    """The last `lines` lines of a log as `readable_log` shows them (read from further
    back, so folded dumps do not leave the tail short)."""
    tail = readable_log(log_tail(path, lines * 10)).splitlines(keepends=True)
    return "".join(tail[-lines:])


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
