"""How Podium starts, watches and stops the processes it owns: vLLM servers and their idle
watchers, job processes, sandbox workers, a private dockerd.

    proc = spawn(cmd, stdout=log)                    # leads its own session and group
    wait_until(lambda: healthy(url), proc, 900)      # "ready", "exited" or "timeout"
    stop(proc, grace_s=30)                           # SIGTERM the group, SIGKILL on timeout
    PidFile(path).write(proc.pid)                    # pid + start time
    reap(PidFile(path).read(), "dockerd")            # only if it is still that process
    watch_owner(proc.pid, owner_of_this())           # stop proc's group when we die

A process leads its own session so that stopping it also stops whatever it started
(engine workers, dataloaders, a job's server). A recorded pid is trusted only while it
still names the same process: same start time when one was recorded, and the expected
words in its command line, because the kernel hands pids out again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import psutil

Target = subprocess.Popen[bytes] | int
Outcome = Literal["ready", "exited", "timeout"]
_POLL_S = 0.1
OWNER_WATCH_MARKER = "podium.processes"
OWNER_POLL_S = 1.0
OWNER_GRACE_S = 5.0


@dataclass(frozen=True)
class Recorded:
    """A process as it was recorded: its pid and, when known, its start time."""

    pid: int
    started: float | None = None


def python_module(module: str, *args: str, python: str = sys.executable) -> list[str]:
    """The command that runs `module` as `python -m` does, without the working directory
    on `sys.path` (`-P`): a folder a job or the app is started from (a dataset's, anyone's)
    holding `podium/`, `json.py` or `streamlit.py` is never imported in its place."""
    return [python, "-P", "-m", module, *args]


def spawn(
    cmd: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    stdin: int | IO[Any] | None = subprocess.DEVNULL,
    stdout: int | IO[Any] | None = None,
    stderr: int | IO[Any] | None = subprocess.STDOUT,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    """Start `cmd` as the leader of a new session (its pid is its process group id)."""
    return subprocess.Popen(
        list(cmd),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=env,
        pass_fds=tuple(pass_fds),
        start_new_session=True,
    )


def started_at(pid: int) -> float | None:
    """The start time of process `pid` (seconds since the epoch), None if there is none."""
    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


def find(
    record: Recorded | int | None, *markers: str, started: float | None = None
) -> psutil.Process | None:
    """The live process a record names, or None if it is gone or is now another process.

    Another process: a different start time (when recorded), a zombie, or a command line
    lacking any of `markers`.
    """
    if record is None:
        return None
    if isinstance(record, int):
        record = Recorded(record, started)
    try:
        proc = psutil.Process(record.pid)
        if record.started is not None and abs(proc.create_time() - record.started) > 0.05:
            return None
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        line = "\0".join(_command_line(proc)) if markers else ""
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None
    return proc if all(m in line for m in markers) else None


_EXEC_WAIT_S = 1.0


def _command_line(proc: psutil.Process) -> list[str]:
    """`proc`'s command line, once its exec has finished.

    Popen returns when the child's exec closes its close-on-exec pipe, but the kernel
    sets the new program's argument bounds after that: for a few milliseconds (6 ms at
    load 23 here) /proc/PID/cmdline reads empty, and a process just spawned looked like
    another one (tests/test_processes.py flaked on it). An empty line is read again for a
    moment; one that stays empty (a kernel thread holding a reused pid) is returned."""
    deadline = time.monotonic() + _EXEC_WAIT_S
    while not (line := proc.cmdline()) and time.monotonic() < deadline:
        time.sleep(0.001)
    return line


def group_alive(pgid: int) -> bool:
    """True while any process of group `pgid` is still running (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    for proc in psutil.process_iter(["status"]):
        try:
            if proc.info["status"] != psutil.STATUS_ZOMBIE and os.getpgid(proc.pid) == pgid:
                return True
        except (ProcessLookupError, psutil.Error):
            continue
    return False


def kill_orphaned_group(pgid: int, marker: str) -> int:
    """SIGKILL what is left of process group `pgid` when every live member's command line
    holds `marker`; how many there were.

    A server whose leader died outright (a Ray actor killed with it, say) leaves children
    of its own group behind: vLLM's engine core and workers, gigabytes each. The leader's
    pid no longer finds them; the group still does. A group that holds anything else (a
    reused id) is left alone."""
    members: list[bool] = []
    for proc in psutil.process_iter(["status", "cmdline"]):
        try:
            if proc.info["status"] == psutil.STATUS_ZOMBIE or os.getpgid(proc.pid) != pgid:
                continue
        except (ProcessLookupError, psutil.Error):
            continue
        # vLLM retitles its children ("VLLM::EngineCore"): compare case-blind.
        members.append(marker.lower() in " ".join(proc.info["cmdline"] or ()).lower())
    if not members or not all(members):
        return 0
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return 0
    return len(members)


def stop(target: Target, grace_s: float = 30.0) -> None:
    """SIGTERM `target` and its process group, wait `grace_s`, then SIGKILL what is left.

    A process that does not lead a group is signalled alone. Our own child is reaped, so
    its zombie neither lingers nor keeps the group looking alive.
    """
    pid = target if isinstance(target, int) else target.pid
    group = _leads_group(pid)
    if not _signal(pid, signal.SIGTERM, group):
        _reap(target)
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _reap(target)
        if not (group_alive(pid) if group else find(pid) is not None):
            _reap(target)  # it may have died since the first reap
            return
        time.sleep(_POLL_S)
    kill(target)


def kill(target: Target) -> None:
    """SIGKILL `target` and its process group now, and reap it if it is our child."""
    pid = target if isinstance(target, int) else target.pid
    _signal(pid, signal.SIGKILL, _leads_group(pid))
    if isinstance(target, int):
        _reap(target)
        return
    try:
        target.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass  # stuck in the kernel (uninterruptible I/O): it dies when that returns


def reap(record: Recorded | int | None, *markers: str, grace_s: float = 30.0) -> bool:
    """Stop a recorded process (an orphan of a crashed run) if it is still the one recorded.

    Returns True if something was stopped; a pid now used by another process is left alone.
    """
    proc = find(record, *markers)
    if proc is None:
        return False
    stop(proc.pid, grace_s)
    return True


def wait_until(
    ready: Callable[[], bool],
    proc: subprocess.Popen[bytes],
    timeout_s: float,
    *,
    interval_s: float = 1.0,
    on_wait: Callable[[float], None] | None = None,
) -> Outcome:
    """Poll `ready()` until it holds, `proc` exits, or `timeout_s` passes.

    `on_wait(elapsed_s)` runs between polls (progress, cancel checks: it may raise).
    """
    started = time.monotonic()
    while not ready():
        if proc.poll() is not None:
            return "exited"
        elapsed = time.monotonic() - started
        if elapsed > timeout_s:
            return "timeout"
        if on_wait is not None:
            on_wait(elapsed)
        time.sleep(interval_s)
    return "ready"


class PidFile:
    """A file naming one process by pid and start time: `PID START` (a bare `PID`, as
    daemons such as dockerd write their own, is read with no start time)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def write(self, pid: int) -> Recorded:
        record = Recorded(pid, started_at(pid))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        tmp.write_text(f"{pid} {record.started or ''}".strip() + "\n")
        tmp.replace(self.path)  # readers never see half a file
        return record

    def read(self) -> Recorded | None:
        try:
            parts = self.path.read_text().split()
            return Recorded(int(parts[0]), float(parts[1]) if len(parts) > 1 else None)
        except (OSError, ValueError, IndexError):
            return None

    def live(self, *markers: str) -> psutil.Process | None:
        """The recorded process if it still runs (and is still the one recorded)."""
        return find(self.read(), *markers)

    def stale(self, *markers: str) -> bool:
        """True if the file exists but its process is gone or is now another process."""
        return self.path.exists() and self.live(*markers) is None

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def owner_of_this() -> Recorded:
    """This process, as an owner record (pid and start time)."""
    return Recorded(os.getpid(), started_at(os.getpid()))


def watch_owner(
    pgid: int, owner: Recorded, *, stdout: int | IO[Any] | None = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    """Start a small watcher that stops process group `pgid` within seconds of `owner`'s
    death, and ends by itself when the group does (`python -m podium.processes ...`).

    A job SIGKILLed (the kernel's out-of-memory killer) runs no cleanup, and the servers
    it started lead their own sessions, so nothing else would ever stop them. The watcher
    leads its own session, and is no child of the owner (it forks and its first process
    exits): Ray kills a dead actor's children, and the API server with it, while vLLM's
    engine core and worker live on in the group."""
    started = repr(owner.started or 0.0)  # 0: start time unknown
    cmd = python_module(OWNER_WATCH_MARKER, "watch-owner", str(pgid), str(owner.pid))
    proc = spawn([*cmd, started], stdout=stdout)
    try:
        proc.wait(timeout=60)  # the first process, gone once the watcher has forked
    except subprocess.TimeoutExpired:
        pass  # a very busy machine: it exits later and init reaps it
    return proc


def stop_when_owner_dies(
    pgid: int, owner: Recorded, poll_s: float = OWNER_POLL_S, grace_s: float = OWNER_GRACE_S
) -> bool:
    """Wait while group `pgid` and `owner` both live; stop the group if the owner went
    first. True if it stopped the group."""
    while _leads_group(pgid):
        if find(owner) is None:
            stop(pgid, grace_s)
            return True
        time.sleep(poll_s)
    return False


def kill_own_group() -> None:
    """End this process and everything it started (it leads its own process group)."""
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _leads_group(pid: int) -> bool:
    # A group outlives its leader: pgid == pid while any member is left, and the kernel
    # does not hand out a pid that is still some group's id.
    try:
        os.killpg(pid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _signal(pid: int, sig: signal.Signals, group: bool) -> bool:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def _reap(target: Target) -> None:
    if not isinstance(target, int):
        target.poll()
        return
    try:
        os.waitpid(target, os.WNOHANG)
    except ChildProcessError:
        pass  # not our child: its own parent reaps it


def _watch_owner_main(argv: list[str]) -> None:
    if os.fork() > 0:
        os._exit(0)  # the watcher goes on as an orphan: see watch_owner
    pgid, owner_pid, started = int(argv[0]), int(argv[1]), float(argv[2])
    owner = Recorded(owner_pid, started or None)
    if stop_when_owner_dies(pgid, owner):
        print(f"podium: owner process {owner_pid} died; stopped process group {pgid}", flush=True)


if __name__ == "__main__" and sys.argv[1:2] == ["watch-owner"]:
    _watch_owner_main(sys.argv[2:])
