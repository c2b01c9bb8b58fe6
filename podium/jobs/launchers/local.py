"""The `local` launch backend: each job is a subprocess in its own process group.

`start_new_session=True` makes the job the leader of a new process group, so stopping
it with `killpg` also stops whatever it started (a vLLM server, dataloader workers).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


class LocalProcess:
    def __init__(self, job_id: str, proc: subprocess.Popen[bytes]) -> None:
        self.job_id = job_id
        self.proc = proc
        self.pgid: int | None = proc.pid  # session leader: pgid == pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def stop(self, grace: float) -> None:
        _killpg(self.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        # Children may outlive the leader; the group is killed either way.
        _killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


class LocalLauncher:
    name = "local"

    def launch(self, job: dict[str, Any]) -> LocalProcess:
        log = Path(job["log_path"])
        log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        with log.open("ab") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "podium.jobs.execute", job["id"]],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        return LocalProcess(job["id"], proc)

    def reap_orphan(self, job: dict[str, Any]) -> bool:
        pgid = job.get("pgid")
        if not pgid or job.get("host") != socket.gethostname():
            return False
        if not _is_job_process(pgid, job["id"]):
            return False  # the id was reused by an unrelated process: leave it alone
        _killpg(pgid, signal.SIGKILL)
        return True


def _is_job_process(pid: int, job_id: str) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"podium.jobs.execute" in cmdline and job_id.encode() in cmdline


def _killpg(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
