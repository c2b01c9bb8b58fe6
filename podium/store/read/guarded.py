"""A user's query run in a child process, under memory and time limits that hold.

DuckDB's own limits do not bound every query: its `memory_limit` covers the buffer
manager, not the vectors an expression builds (`len(range(30000000)) > 0` over 300 rows
reached 8 GB under a 200 MB limit), and `interrupt()` is only noticed between chunks (a
2 s timer stopped that query after 21 s). A `--where` filter and `podium sql` therefore
run in a child process that this process watches: it is killed once its resident memory
passes the cap or the time limit passes, and the caller gets a clear `InvalidInput`.
A long-lived server (the app) stays the size it was, whatever the filter.

At most `guarded_queries` (setting, 4 by default) such children run at once per home,
whichever process starts them (app sessions, CLI commands, workers): each holds one slot,
an advisory lock on a file under `$PODIUM_HOME/tmp/guarded-slots`, which the kernel frees
when its holder ends however it ends. A query that finds every slot taken waits up to
`SLOT_WAIT_S`, then gets `HostBusy` ("try again in a moment"): each query is capped, but
ten viewers opening one `?where=` link at once held ten caps' worth of memory.

The child is `python -m podium.store.read.guarded IN OUT`: it unpickles a module-level
function and its arguments from IN, runs it, and pickles the result (or the
`PodiumError` it raised) to OUT. Both files are private to the user.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from podium.config import get_settings
from podium.errors import InvalidInput, PodiumError
from podium.processes import python_module
from podium.store.private_tmp import private_dir, private_scratch

T = TypeVar("T")

_POLL_S = 0.01  # an expression can allocate ~1 GB/s: poll often to stop it near the cap
_CHILD_TAIL = 2000  # characters of a crashed child's stderr kept in the error
SLOT_WAIT_S = 5.0  # how long a query waits for a free slot before "busy"
_SLOT_POLL_S = 0.05


class HostBusy(PodiumError):
    """Every guarded-query slot of this home is taken: try again in a moment."""

    exit_code = 75  # EX_TEMPFAIL


@dataclass(frozen=True)
class Limits:
    """What a guarded query may use: resident memory of its whole process (the
    interpreter's ~150 MB included) and wall time."""

    memory_bytes: int
    timeout_s: float
    what: str  # "The filter", "The query": the subject of the error message
    how_to_fix: str  # the sentence that ends the error message
    grace_s: float = 0.0  # killed at timeout_s + grace_s: time for a gentler stop first


def parse_size(text: str) -> int:
    """`100MB`, `2GB`, `512MiB` or bytes as an int; InvalidInput otherwise."""
    units = {
        "": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
        "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    }  # fmt: skip
    cleaned = text.strip().lower().replace(" ", "")
    number = cleaned.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = cleaned[len(number) :]
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if unit not in units or value <= 0:
        raise InvalidInput(f"Memory size {text!r} is not a size; write e.g. 100MB or 2GB.")
    return int(value * units[unit])


def _size_text(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def call_guarded(fn: Callable[..., T], *args: Any, limits: Limits, **kwargs: Any) -> T:
    """`fn(*args, **kwargs)` run in a child process under `limits`; its result or its
    `PodiumError` comes back. `fn` must be a module-level function, its arguments and
    result picklable."""
    with query_slot(limits.what), private_scratch("guarded") as scratch:
        call_in, result_out = Path(scratch) / "call.pickle", Path(scratch) / "result.pickle"
        call_in.write_bytes(pickle.dumps((fn.__module__, fn.__qualname__, args, kwargs)))
        stderr_path = Path(scratch) / "stderr"
        with open(stderr_path, "wb") as stderr:
            outcome = _watch(
                python_module("podium.store.read.guarded", str(call_in), str(result_out)),
                stderr,
                limits,
            )
        if outcome == "memory":
            raise InvalidInput(
                f"{limits.what} used more than {_size_text(limits.memory_bytes)} of memory "
                f"and was stopped. {limits.how_to_fix}"
            )
        if outcome == "time":
            raise InvalidInput(
                f"{limits.what} was stopped after {limits.timeout_s:g} s, its time limit. "
                f"{limits.how_to_fix}"
            )
        if not result_out.exists():
            tail = stderr_path.read_text(errors="replace")[-_CHILD_TAIL:]
            raise RuntimeError(f"the guarded query process ended without a result:\n{tail}")
        status, value = pickle.loads(result_out.read_bytes())
    if status == "error":
        raise value
    result: T = value
    return result


@contextlib.contextmanager
def query_slot(what: str = "The query", wait_s: float | None = None) -> Iterator[int]:
    """Hold one of the home's guarded-query slots while the block runs (its number);
    `HostBusy` when none frees up within `wait_s` (default `SLOT_WAIT_S`)."""
    slots = get_settings().guarded_queries
    folder = private_dir("guarded-slots")
    deadline = time.monotonic() + (SLOT_WAIT_S if wait_s is None else wait_s)
    while True:
        for number in range(slots):
            fd = os.open(folder / f"slot-{number}", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            try:
                yield number
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
            return
        if time.monotonic() > deadline:
            raise HostBusy(
                f"{what} did not start: {slots} queries are already running on this Podium "
                "(its most at once, each under its own memory cap). Try again in a moment; "
                "an operator can raise guarded_queries if the host has the memory."
            )
        time.sleep(_SLOT_POLL_S)


def _watch(command: list[str], stderr: Any, limits: Limits) -> str:
    """Run `command`, killing it past the limits: "ok", "memory" or "time"."""
    import psutil

    env = dict(os.environ)
    # The child imports podium from where this process did, installed or not.
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env
    )
    watched = psutil.Process(proc.pid)
    deadline = time.monotonic() + limits.timeout_s + limits.grace_s
    try:
        while proc.poll() is None:
            try:
                rss = watched.memory_info().rss
            except psutil.NoSuchProcess:
                break
            if rss > limits.memory_bytes:
                return "memory"
            if time.monotonic() > deadline:
                return "time"
            time.sleep(_POLL_S)
        return "ok"
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()


def _child(call_in: str, result_out: str) -> None:
    module, qualname, args, kwargs = pickle.loads(Path(call_in).read_bytes())
    fn: Any = importlib.import_module(module)
    for part in qualname.split("."):
        fn = getattr(fn, part)
    try:
        outcome: tuple[str, Any] = ("ok", fn(*args, **kwargs))
    except PodiumError as exc:
        outcome = ("error", exc)
    tmp = Path(result_out + ".part")
    tmp.write_bytes(pickle.dumps(outcome))
    tmp.replace(result_out)


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
