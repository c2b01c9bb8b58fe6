"""Launch backends: where a claimed job's process runs.

A backend starts `python -m podium.jobs.execute JOB_ID` somewhere and hands the worker a
`Launched` handle to poll and stop it. The job itself talks only to the state database
(progress, heartbeats, outcome), so a backend needs no channel back to the worker.

- `local` (podium/jobs/launchers/local.py): a subprocess on this machine in its own
  process group, output appended to the job's log file.
- `ray` would be one more module, podium/jobs/launchers/ray.py: `launch` submits the same
  command as a Ray job with `ray.job_submission.JobSubmissionClient(settings.ray_address)`
  (entrypoint `python -m podium.jobs.execute ID`, runtime_env carrying PODIUM_* so the
  job reaches the same catalog URI, which must then be PostgreSQL), `poll` maps
  `get_job_status` to an exit code, `stop` calls `stop_job`, and the log is copied from
  `get_job_logs`. Then add it to `LAUNCHERS` below and set `launcher = "ray"`.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from podium.errors import InvalidInput

LAUNCHERS = {"local": "podium.jobs.launchers.local:LocalLauncher"}


class Launched(Protocol):
    """A running job's process, as the worker sees it."""

    job_id: str
    pgid: int | None

    def poll(self) -> int | None:
        """The exit code once the process has ended, else None."""

    def stop(self, grace: float) -> None:
        """Ask the process (group) to stop; force it after `grace` seconds."""


class Launcher(Protocol):
    name: str

    def launch(self, job: dict[str, Any]) -> Launched: ...

    def reap_orphan(self, job: dict[str, Any]) -> bool:
        """Kill what is left of a job whose worker died; True if something was killed."""


def get_launcher(name: str) -> Launcher:
    try:
        module, _, attr = LAUNCHERS[name].partition(":")
    except KeyError:
        raise InvalidInput(
            f"Unknown launcher {name!r}; available: {', '.join(LAUNCHERS)}."
        ) from None
    launcher: Launcher = getattr(importlib.import_module(module), attr)()
    return launcher
