"""The `local` launch backend: each job is a subprocess in its own process group.

The job leads a new process group (`podium.processes.spawn`), so stopping it also stops
whatever it started (a vLLM server, dataloader workers).
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from podium import processes
from podium.config import get_settings
from podium.jobs.record import Job

JOB_MODULE = "podium.jobs.execute"


class LocalProcess:
    def __init__(self, job_id: str, proc: subprocess.Popen[bytes]) -> None:
        self.job_id = job_id
        self.proc = proc
        self.pgid: int | None = proc.pid  # session leader: pgid == pid

    def poll(self) -> int | None:
        code = self.proc.poll()
        if code is not None and processes.group_alive(self.proc.pid):
            # It died (SIGKILL, the out-of-memory killer) and left what it started in its
            # group: an async RL job's private Ray leaves its agents there.
            processes.kill(self.proc.pid)
        return code

    def stop(self, grace: float) -> None:
        processes.stop(self.proc, grace)


class LocalLauncher:
    name = "local"

    def launch(self, job: Job) -> LocalProcess:
        log = Path(job["log_path"])
        log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        submitter = job["submitted_by"]
        if submitter and get_settings().shared:
            env["PODIUM_USER"] = submitter  # its writes are by its submitter
        with log.open("ab") as out:
            proc = processes.spawn(
                processes.python_module(JOB_MODULE, job["id"]), stdout=out, env=env
            )
        return LocalProcess(job["id"], proc)

    def reap_orphan(self, job: Job) -> bool:
        pgid = job.get("pgid")
        if not pgid or job.get("host") != socket.gethostname():
            return False
        # Only if that pid is still this job's process: the id may have been reused.
        if processes.find(pgid, JOB_MODULE, job["id"]) is None:
            return False
        processes.kill(pgid)
        return True
