"""The `local` backend: warm fork servers inside long-lived bubblewrap sandboxes.

Each worker is one `bwrap` process: new pid, net, ipc, uts and cgroup namespaces (and a
user namespace when not root), the host's /usr and Python read-only, a fresh /proc and
/dev, a size-capped tmpfs /tmp, a private /dev/mqueue, the seccomp filter, and
`--die-with-parent`. The fork server's source is copied into the sandbox's own root
(`--file`), not bind-mounted, so no path of the checkout shows in /proc/self/mountinfo.
The fork server is pid 1 inside (`--as-pid-1`: bwrap's own reaper would leave zombie inits that
exhaust the uid's process limit), so after each job `kill(-1)` ends everything the job
started. Jobs run as a per-worker non-root uid (RLIMIT_NPROC is not enforced for root)
under rlimits, and under cgroup memory and pids limits when the host allows it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from generators.sandbox.cgroups import CgroupLimits
from generators.sandbox.limits import Limits, Result, job_uid
from generators.sandbox.seccomp import bpf_fd
from generators.sandbox.server_script import interpreter, server_source
from generators.sandbox.worker import ProcessWorker

TMP_BYTES = 256 * 1024 * 1024
SHM_BYTES = 64 * 1024 * 1024
SERVER_PATH = "/opt/podium/forkserver.py"
SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        from podium.errors import PodiumError

        raise PodiumError(
            "The local sandbox needs bubblewrap: install it with `apt-get install bubblewrap` "
            "(scripts/system_packages.sh), or use --backend docker."
        )
    return path


def filesystem_args(prefix: str) -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ETC_FILES:
        args += ["--ro-bind-try", path, path]
    if not prefix.startswith("/usr/"):
        # Parents bwrap creates copy the host's modes (/root is 0700): make them
        # traversable so the job's uid can reach the interpreter's stdlib.
        for parent in reversed(Path(prefix).parents[:-1]):
            args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", prefix, prefix]
    args += ["--proc", "/proc", "--dev", "/dev"]
    args += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"]
    # multiprocessing needs /dev/shm; it is emptied after every job like /tmp.
    args += ["--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    # POSIX message queues live in the worker's IPC namespace; mounting its mqueue fs
    # lets the server delete what a job created before the next job runs.
    args += ["--mqueue", "/dev/mqueue"]
    return args


def server_source_fd() -> int:
    """A descriptor holding the fork server's source, for bwrap to copy once."""
    fd = os.memfd_create("podium-forkserver", 0)
    os.write(fd, server_source().encode())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


class LocalWorker(ProcessWorker):
    backend = "local"

    def __init__(self, index: int, seccomp: bool = True) -> None:
        super().__init__(index)
        self.root = os.geteuid() == 0
        self.uid = job_uid()
        self.seccomp = seccomp
        self.cgroup = CgroupLimits.create(f"w{index}")
        self._seccomp_fd: int | None = None
        self._server_fd: int | None = None
        self._oom_before = 0

    def command(self) -> list[str]:
        python, prefix = interpreter()
        cmd = [bwrap_path(), "--die-with-parent", "--as-pid-1", "--new-session"]
        cmd += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        cmd += ["--unshare-cgroup-try", "--hostname", "sandbox"]
        if self.root:
            # Root needs no user namespace and keeps only what the server uses: switching
            # to the job uid, killing leftovers, wiping files the job made unreadable.
            cmd += ["--cap-drop", "ALL"]
            for cap in ("SETUID", "SETGID", "KILL", "DAC_OVERRIDE", "FOWNER"):
                cmd += ["--cap-add", f"CAP_{cap}"]
        else:
            cmd += ["--unshare-user"]
        cmd += filesystem_args(prefix)
        self._server_fd = server_source_fd()
        cmd += ["--perms", "0444", "--file", str(self._server_fd), SERVER_PATH]
        cmd += ["--chdir", "/tmp", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]
        cmd += ["--setenv", "PYTHONHASHSEED", "0"]
        if self.seccomp:
            self._seccomp_fd = bpf_fd()
            cmd += ["--seccomp", str(self._seccomp_fd)]
        cmd += [python, "-s", SERVER_PATH, "--tmp", "/tmp"]
        cmd += ["--wipe", "/dev/shm", "--wipe", "/dev/mqueue"]
        cmd += ["--uid", str(self.uid)]
        if self.cgroup is not None:
            cmd = self.cgroup.join_prefix() + cmd
        return cmd

    def pass_fds(self) -> tuple[int, ...]:
        return tuple(fd for fd in (self._seccomp_fd, self._server_fd) if fd is not None)

    def _start(self) -> None:
        try:
            super()._start()
        finally:
            for fd in self.pass_fds():
                os.close(fd)
            self._seccomp_fd = self._server_fd = None

    def _before_job(self, limits: Limits) -> None:
        if self.cgroup is not None:
            self.cgroup.apply(limits.memory_mb * 1024 * 1024, limits.processes)

    def _after_job(self, result: Result) -> Result:
        # One read per job: the count after this job is the baseline for the next.
        if self.cgroup is not None:
            kills = self.cgroup.oom_kills()
            if kills > self._oom_before and result.status in ("killed", "error"):
                result.status = "oom"
            self._oom_before = kills
        return result

    def close(self) -> None:
        super().close()
        if self.cgroup is not None:
            self.cgroup.remove()


def describe() -> dict[str, object]:
    """What confinement this host gives local workers (for `podium sandbox info`)."""
    probe = CgroupLimits.create("probe")
    if probe is not None:
        probe.remove()
    return {
        "bwrap": shutil.which("bwrap"),
        "root": os.geteuid() == 0,
        "cgroups": None if probe is None else ("v2" if probe.v2 else "v1"),
        "python": interpreter()[0],
        "server": str(Path(SERVER_PATH)),
    }
