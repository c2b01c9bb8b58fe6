"""After a job: kill what it left running, empty its scratch space and its IPC objects."""

import os
import shutil
import signal
import time
from collections.abc import Callable

from generators.sandbox.server.confine import libc

IPC_RMID = 0
# A tmpfs with less room than this after a failed job was filled by it.
FULL_BYTES = 1024 * 1024


def kill_leftovers(job_pgid: int) -> None:
    """Kill every process the job started, including double-forked daemons."""
    while True:
        try:
            if os.getpid() == 1:
                # We are the init of our own pid namespace: -1 means "all but me".
                os.kill(-1, signal.SIGKILL)
            else:
                os.killpg(job_pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.0005)
            if os.getpid() != 1:
                # Bare mode cannot see grandchildren that left the group; stop once the
                # group is gone (there is no containment promise without a sandbox).
                try:
                    os.killpg(job_pgid, 0)
                except ProcessLookupError:
                    return


def wipe(path: str) -> None:
    def fix_and_retry(func: Callable[[str], object], target: str, _exc: object) -> None:
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
        except OSError:
            pass
        try:
            func(target)
        except OSError:
            pass

    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, onerror=fix_and_retry)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                fix_and_retry(os.unlink, entry.path, None)


def clear_sysv_ipc(uid: int) -> None:
    """Remove System V shared memory, semaphores and queues a job left in our namespace.

    Removal needs the owner's uid (or CAP_SYS_ADMIN, which the server must not hold),
    so a short-lived child becomes the job's uid to do it; usually there is nothing.
    """
    found: list[tuple[str, int]] = []
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as fh:
                found += [(kind, int(line.split()[1])) for line in fh.read().splitlines()[1:]]
        except OSError:
            continue
    if not found:
        return
    pid = os.fork()
    if pid == 0:
        try:
            if os.getuid() == 0 and uid:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            for kind, ident in found:
                if kind == "shm":
                    libc.shmctl(ident, IPC_RMID, None)
                elif kind == "sem":
                    libc.semctl(ident, 0, IPC_RMID)
                else:
                    libc.msgctl(ident, IPC_RMID, None)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def filled_tmpfs(paths: list[str]) -> "tuple[str, int] | None":
    """The first of `paths` that is (nearly) out of space or inodes: (path, size in MiB)."""
    for path in paths:
        try:
            st = os.statvfs(path)
        except OSError:
            continue
        if st.f_blocks and (st.f_bavail * st.f_frsize < FULL_BYTES or st.f_favail == 0):
            return path, st.f_blocks * st.f_frsize // (1024 * 1024)
    return None
