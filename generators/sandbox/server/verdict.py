"""The verdict on a finished job: which status, exit code, signal and detail it gets."""

import os
import signal
from typing import Any, NamedTuple


class Outcome(NamedTuple):
    # Quoted: a NamedTuple's annotations are evaluated, and the script runs on Python 3.9.
    stopped: "str | None"  # "wall" or "cpu" when a limit stopped the job
    status: int  # as os.wait4 returns it
    cpu_s: float
    out_size: int
    err_size: int
    stderr: str
    full_tmpfs: "tuple[str, int] | None"  # (path, size in MiB) of a filled scratch space


def classify(outcome: Outcome, limits: dict[str, Any]) -> "tuple[str, int | None, int | None, str]":
    """(status, exit code, signal, detail) of a finished job."""
    cpu_limit = f"cpu limit: the run used {outcome.cpu_s:.1f} CPU-s of {limits['cpu_s']:g}"
    if outcome.stopped == "wall":
        return "timeout", None, None, f"wall-clock limit: {limits['wall_s']:g} s"
    if outcome.stopped == "cpu":
        return "timeout", None, signal.SIGKILL, cpu_limit
    status = outcome.status
    cap = int(limits["output_bytes"])
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and outcome.cpu_s >= limits["cpu_s"]):
            return "timeout", None, sig, cpu_limit
        if sig == signal.SIGXFSZ:
            return "output_limit", None, sig, f"file size limit: {cap} bytes"
        return "killed", None, sig, ""
    rc = os.WEXITSTATUS(status)
    if rc == 0:
        return "ok", rc, None, ""
    if outcome.full_tmpfs is not None:
        path, size_mb = outcome.full_tmpfs
        return "output_limit", rc, None, f"disk limit: {path} is full ({size_mb} MiB)"
    if outcome.out_size >= cap or outcome.err_size >= cap:
        return "output_limit", rc, None, f"output limit: {cap} bytes"
    last = outcome.stderr.rstrip().rsplit("\n", 1)[-1]
    if last.startswith("MemoryError"):
        return "oom", rc, None, ""
    if "[Errno 27]" in last:  # EFBIG: Python ignores SIGXFSZ, so the write failed
        return "output_limit", rc, None, f"file size limit: {cap} bytes"
    return "error", rc, None, ""
