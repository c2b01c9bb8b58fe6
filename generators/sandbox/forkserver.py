"""The fork server that runs inside every sandbox worker (bwrap, a container, or bare).

The host starts it once per worker and sends jobs on stdin as length-prefixed JSON; for
each job it forks a child that drops privileges, sets rlimits and runs the code as
`__main__` (`server/child.py`), then kills everything the job left behind, wipes /tmp
(and /dev/shm, /dev/mqueue, System V IPC; `server/cleanup.py`) and answers on stdout.
Forking a warm interpreter costs a few milliseconds where starting Python costs tens.
While a job runs the server sums the CPU time of all the job's processes
(`server/watch.py`) and stops the job when the total passes its CPU budget.

Stdlib only (any Python >= 3.9). A sandbox gets this file and its parts in
`generators/sandbox/server/` joined into one script (`server_script.py`), run as

    python3 -s forkserver.py --tmp /tmp [--wipe /dev/shm] [--uid 61000] [--seccomp HEX]

`python -m generators.sandbox.server_script > forkserver.py` writes that script out.
"""

import argparse
import os
import signal
import sys
import time
from typing import Any

from generators.sandbox.server.child import run_child
from generators.sandbox.server.cleanup import clear_sysv_ipc, filled_tmpfs, kill_leftovers, wipe
from generators.sandbox.server.confine import PR_SET_DUMPABLE, install_seccomp, libc, vm_size
from generators.sandbox.server.stdio import STDERR_TAIL, prepare_files, read_capped
from generators.sandbox.server.verdict import Outcome, classify
from generators.sandbox.server.watch import wait_for_job
from generators.sandbox.server.wire import read_msg, write_msg


def run_job(req: dict[str, Any], opts: argparse.Namespace, as_base: int) -> dict[str, Any]:
    files = prepare_files(req)
    limits = req["limits"]
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        run_child(req, opts, files, as_base)
    status, usage, stopped, total = wait_for_job(pid, limits)
    wall = time.monotonic() - start
    kill_leftovers(pid)
    cpu = usage.ru_utime + usage.ru_stime
    if total is not None:
        cpu = max(cpu, total)
    cap = int(limits["output_bytes"])
    stdout, out_size = read_capped(files["stdout"], cap)
    stderr, err_size = read_capped(files["stderr"], min(cap, STDERR_TAIL), tail=True)
    for name in ("stdin", "stdout", "stderr"):
        os.close(files[name])
    scratch = [path for path in [opts.tmp, *opts.wipe] if os.path.isdir(path)]
    full = filled_tmpfs(scratch)
    for path in scratch:
        wipe(path)
    if os.getpid() == 1:
        # Only in our own namespaces: a bare server would see the host's IPC objects.
        clear_sysv_ipc(opts.uid)
    outcome = Outcome(stopped, status, cpu, out_size, err_size, stderr, full)
    state, rc, sig, detail = classify(outcome, limits)
    return {
        "status": state,
        "exit_code": rc,
        "signal": sig,
        "stdout": stdout,
        "stderr": stderr,
        "wall_s": round(wall, 6),
        "cpu_s": round(cpu, 6),
        "truncated": out_size > len(stdout.encode()) or out_size >= cap,
        "detail": detail,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tmp", default="/tmp")
    parser.add_argument("--uid", type=int, default=0)
    parser.add_argument("--wipe", action="append", default=[], help="Also emptied after jobs.")
    parser.add_argument("--seccomp", default="", help="A BPF program (hex) to install first.")
    opts = parser.parse_args()
    if opts.seccomp:
        install_seccomp(bytes.fromhex(opts.seccomp))
    # Jobs must not signal or ptrace the server (they may share its uid in containers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    os.umask(0o022)
    inp = open(os.dup(0), "rb")
    out = open(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    as_base = vm_size()
    write_msg(out, {"ready": True, "python": sys.version.split()[0], "pid": os.getpid()})
    while True:
        try:
            req = read_msg(inp)
        except ValueError as exc:  # not a JSON object: the frame was read whole, go on
            write_msg(out, {"status": "sandbox_error", "detail": repr(exc)})
            continue
        if req is None:
            return
        try:
            reply = run_job(req, opts, as_base)
        except Exception as exc:  # report and stay up; the host decides what to do
            reply = {"status": "sandbox_error", "detail": repr(exc)}
        write_msg(out, reply)


if __name__ == "__main__":
    main()
