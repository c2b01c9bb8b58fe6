"""Watching a running job: its wall clock, and the CPU time of all its processes together.

RLIMIT_CPU alone bounds each process, not a run: the server is pid 1 of the job's pid
namespace, so /proc lists exactly the job's processes and their times can be summed.
"""

import os
import resource
import select
import signal
import time
from typing import Any

# How often a running job's CPU total is read (the first read comes this late too, so
# the short jobs that are most of the work never pay for it).
CPU_POLL_S = 0.05


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def namespace_cpu_s(reaped_base: float) -> float:
    """CPU seconds used by every process of the job, alive or not.

    A process's time stays in its /proc/PID/stat until its parent reaps it, then moves
    into the parent's cumulative fields, and so on up to us (the namespace's init): so
    the live processes' own and reaped-children's time, plus what we reaped ourselves
    since the job began, is the whole run's.
    """
    ticks = 0
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile: its time is now its parent's
        # Fields after the command: state is [0]; utime, stime, cutime, cstime [11:15].
        ticks += sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK") + children_cpu_s() - reaped_base


def wait_for_job(
    pid: int, limits: dict[str, Any]
) -> "tuple[int, resource.struct_rusage, str | None, float | None]":
    """Wait until the job's main process ends, the wall clock runs out or the run's
    processes together pass the CPU budget; kill it in the last two cases.

    Returns (status, rusage, which limit stopped it or None, the run's CPU total or None).
    """
    budget = float(limits["cpu_s"])
    deadline = time.monotonic() + float(limits["wall_s"])
    reaped_base = children_cpu_s()
    # Outside our own pid namespace (bare mode) /proc is the host's: nothing to sum.
    tree = os.getpid() == 1
    pidfd = os.pidfd_open(pid)
    stopped: str | None = None  # local annotations are never evaluated: fine on 3.9
    total: float | None = None
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = "wall"
                break
            ready, _, _ = select.select([pidfd], [], [], min(left, CPU_POLL_S) if tree else left)
            if ready:
                break
            if tree:
                total = namespace_cpu_s(reaped_base)
                if total > budget:
                    stopped = "cpu"
                    break
        if stopped is not None:
            os.kill(pid, signal.SIGKILL)
        _, status, usage = os.wait4(pid, 0)
        if total is not None and stopped is None:
            total = namespace_cpu_s(reaped_base)
        return status, usage, stopped, total
    finally:
        os.close(pidfd)
