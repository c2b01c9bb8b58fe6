"""Named failpoints: a fault put anywhere a write can fail, for tests only.

`PODIUM_FAILPOINTS="commit.after=raise;maintain.expire.before_commit=sleep(8)"` arms
points by name; unset (the default) every `hit()` is one dict lookup on an empty dict.
Users never need this; the fault matrix (`tests/faults/test_fault_matrix.py`) and the
outcome tests put a fault at every stage of every write with it.

Actions:
- `raise`: raise `FailpointError`, an error whose outcome the caller cannot know (as a
  dropped database connection after COMMIT, or an HTTP time-out, would be);
- `sleep(SECONDS)`: pause there (to run something else in between);
- `pause`: write `POINT.reached` into the folder `PODIUM_FAILPOINTS_DIR` names, then wait
  (up to 10 minutes) until someone creates `POINT.release` there: a test runs something
  else in between however slowly either side starts, where `sleep` races a busy machine;
- `kill`: SIGKILL this process at that point;
- `enospc`: raise `OSError(ENOSPC)`, as a write to a full disk does;
- `raise@N` / `kill@N`: act only on the N-th hit of the point (1-based), pass the others.

Points (every write path passes the ones that apply to it):

| point | where |
|---|---|
| `write.between_files` | a data file of a write is closed, before the next one opens |
| `commit.before` | every file is written; the catalog has not been asked |
| `commit.after` | the catalog committed; the caller has not seen the answer |
| `maintain.expire.before_commit` | expiry planned its snapshots; not yet committed |
| `maintain.orphans.before_delete` | orphan removal listed its files; none deleted yet |
| `weight_sync.corrupt` | a push is about to reach one replica (`raise`: corrupt its load) |
| `async_rl.learner_step` | an async GRPO learner has a step's samples, before it trains |
"""

from __future__ import annotations

import errno
import os
import re
import signal
import threading
import time
from collections import Counter
from pathlib import Path

ENV = "PODIUM_FAILPOINTS"
DIR_ENV = "PODIUM_FAILPOINTS_DIR"
PAUSE_LIMIT_S = 600

POINTS = (
    "write.between_files",
    "commit.before",
    "commit.after",
    "maintain.expire.before_commit",
    "maintain.orphans.before_delete",
    "weight_sync.corrupt",
    "async_rl.learner_step",
)

_ACTION = re.compile(
    r"^(raise|kill|pause|enospc|sleep\((?P<seconds>[0-9.]+)\))(?:@(?P<nth>[0-9]+))?$"
)


class FailpointError(RuntimeError):
    """A fault injected at a named point; its outcome is deliberately unknown."""


_parsed: tuple[str, dict[str, str]] | None = None
_hits: Counter[str] = Counter()
_lock = threading.Lock()


def armed() -> dict[str, str]:
    """The points armed now, from the environment (parsed once per distinct value)."""
    global _parsed
    raw = os.environ.get(ENV, "")
    if _parsed is not None and _parsed[0] == raw:
        return _parsed[1]
    points: dict[str, str] = {}
    for part in raw.split(";"):
        if not part.strip():
            continue
        name, sep, action = part.partition("=")
        name, action = name.strip(), action.strip()
        if not sep or name not in POINTS or not _ACTION.match(action):
            raise ValueError(
                f"{ENV}: cannot read {part.strip()!r}; write POINT=ACTION with POINT one of "
                f"{', '.join(POINTS)} and ACTION raise, kill, pause or sleep(SECONDS), or enospc, "
                "optionally @N for the N-th hit only."
            )
        points[name] = action
    _parsed = (raw, points)
    return points


def hit(point: str) -> None:
    """Act if `point` is armed; otherwise return at once."""
    if not os.environ.get(ENV):
        return
    action = armed().get(point)
    if action is None:
        return
    match = _ACTION.match(action)
    assert match is not None  # armed() checked it
    with _lock:
        _hits[point] += 1
        count = _hits[point]
    if match["nth"] is not None and int(match["nth"]) != count:
        return
    if match["seconds"] is not None:
        time.sleep(float(match["seconds"]))
    elif action.startswith("pause"):
        _pause(point)
    elif action.startswith("kill"):
        os.kill(os.getpid(), signal.SIGKILL)
    elif action.startswith("enospc"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), f"failpoint {point}")
    else:
        raise FailpointError(f"failpoint {point} (outcome unknown to the caller)")


def fires(point: str) -> bool:
    """`hit(point)`, with a `raise` answered as True: for points where the fault is not
    an exception here but something done wrong on purpose (a corrupted transfer)."""
    try:
        hit(point)
    except FailpointError:
        return True
    return False


def _pause(point: str) -> None:
    folder = os.environ.get(DIR_ENV)
    if not folder:
        raise ValueError(f"{ENV}: {point}=pause needs {DIR_ENV}, the folder to signal in")
    marks = Path(folder)
    (marks / f"{point}.reached").touch()
    deadline = time.monotonic() + PAUSE_LIMIT_S
    while not (marks / f"{point}.release").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def reset() -> None:
    """Forget hit counts (tests that arm `@N` points in one process)."""
    with _lock:
        _hits.clear()
