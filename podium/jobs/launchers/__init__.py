"""Launch backends: where a claimed job's process runs.

A backend starts `python -m podium.jobs.execute JOB_ID` somewhere and hands the worker a
`Launched` handle to poll and stop it. The job itself talks only to the state database
(progress, heartbeats, outcome), so a backend needs no channel back to the worker.

- `local` (podium/jobs/launchers/local.py): a subprocess on this machine in its own
  process group, output appended to the job's log file.
- `ray` (podium/jobs/launchers/ray.py): a Ray job on an existing cluster (Jobs API).

The `launcher` setting picks the backend of `podium worker`; a card that names
`launcher:` (the kinds built on `LaunchOptions`) overrides it for that job, and
`podium run`/`podium generate ... --launcher ray` then submits there and follows the
job instead of running it in-process (podium/jobs/follow.py).
"""

from __future__ import annotations

import json
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from podium.errors import InvalidInput
from podium.jobs.plugins import load_attr
from podium.jobs.record import Job

LAUNCHERS = {
    "local": "podium.jobs.launchers.local:LocalLauncher",
    "ray": "podium.jobs.launchers.ray:RayLauncher",
}


class LaunchOptions(BaseModel):
    """Card fields of the kinds that can run elsewhere than the worker's own backend."""

    launcher: Literal["local", "ray"] | None = Field(
        None, description="Where this job runs: local or ray (default: the launcher setting)."
    )


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

    def launch(self, job: Job) -> Launched: ...

    def reap_orphan(self, job: Job) -> bool:
        """Kill what is left of a job whose worker died; True if something was killed."""


def get_launcher(name: str) -> Launcher:
    try:
        path = LAUNCHERS[name]
    except KeyError:
        raise InvalidInput(
            f"Unknown launcher {name!r}; available: {', '.join(LAUNCHERS)}."
        ) from None
    launcher: Launcher = load_attr(path)()
    return launcher


def requested_launcher(job: Job) -> str | None:
    """The backend a job's card asks for, if any."""
    try:
        name = json.loads(job.get("config") or "{}").get("launcher")
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None
