"""Memory and pids limits for one local worker through cgroups (v2 or v1), when writable.

rlimits alone cannot bound a process tree's total memory or count; a cgroup can, and it
also tells us when the kernel's OOM killer fired. Each worker gets its own group, which
its bwrap process joins before exec (so every sandboxed process is born inside it).
Without root or a writable hierarchy `CgroupLimits.create` returns None and the sandbox
relies on rlimits.
"""

from __future__ import annotations

import itertools
import os
import shlex
import signal
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
GROUP = "podium-sandbox"
# Room for the fork server and the private tmpfs on top of the job's own memory.
OVERHEAD_BYTES = 96 * 1024 * 1024
_counter = itertools.count()


def _writable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


class CgroupLimits:
    def __init__(self, memory_dir: Path, pids_dir: Path, v2: bool) -> None:
        self.memory_dir = memory_dir
        self.pids_dir = pids_dir
        self.v2 = v2
        self._applied: tuple[int, int] | None = None

    @classmethod
    def create(cls, name: str) -> CgroupLimits | None:
        if os.geteuid() != 0:
            return None
        unique = f"{name}-{os.getpid()}-{next(_counter)}"
        try:
            if (ROOT / "cgroup.controllers").is_file():
                parent = ROOT / GROUP
                controllers = (ROOT / "cgroup.controllers").read_text().split()
                if not {"memory", "pids"} <= set(controllers) or not _writable(ROOT):
                    return None
                parent.mkdir(exist_ok=True)
                (ROOT / "cgroup.subtree_control").write_text("+memory +pids")
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
                group = parent / unique
                group.mkdir()
                return cls(group, group, v2=True)
            if _writable(ROOT / "memory") and _writable(ROOT / "pids"):
                mem = ROOT / "memory" / GROUP / unique
                pids = ROOT / "pids" / GROUP / unique
                mem.mkdir(parents=True)
                pids.mkdir(parents=True)
                return cls(mem, pids, v2=False)
        except OSError:
            return None
        return None

    def join_prefix(self) -> list[str]:
        """A shell prefix that moves itself into the group, then execs the command."""
        targets = {self.memory_dir / "cgroup.procs", self.pids_dir / "cgroup.procs"}
        moves = "; ".join(f"echo $$ > {shlex.quote(str(t))}" for t in sorted(targets))
        return ["/bin/sh", "-c", f'{moves}; exec "$@"', "podium-cgroup"]

    def apply(self, memory_bytes: int, pids: int) -> None:
        wanted = (memory_bytes + OVERHEAD_BYTES, pids + 4)
        if wanted == self._applied:
            return
        memory, pid_max = wanted
        if self.v2:
            (self.memory_dir / "memory.max").write_text(str(memory))
            swap = self.memory_dir / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
        else:
            # memory+swap may never be below memory: raise it first, lower it last.
            limit = self.memory_dir / "memory.limit_in_bytes"
            memsw = self.memory_dir / "memory.memsw.limit_in_bytes"
            raising = memory > int(limit.read_text())
            if memsw.exists() and raising:
                memsw.write_text(str(memory))
            limit.write_text(str(memory))
            if memsw.exists() and not raising:
                memsw.write_text(str(memory))
        (self.pids_dir / "pids.max").write_text(str(pid_max))
        self._applied = wanted

    def oom_kills(self) -> int:
        path = self.memory_dir / ("memory.events" if self.v2 else "memory.oom_control")
        try:
            for line in path.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except OSError:
            pass
        return 0

    def remove(self) -> None:
        """Kill what is still inside (a dying bwrap's children) and delete the group."""
        for _ in range(100):
            left = False
            for directory in {self.memory_dir, self.pids_dir}:
                if not directory.exists():
                    continue
                try:
                    for pid in (directory / "cgroup.procs").read_text().split():
                        os.kill(int(pid), signal.SIGKILL)
                    directory.rmdir()
                except (OSError, ValueError):
                    left = True
            if not left:
                return
            time.sleep(0.02)
