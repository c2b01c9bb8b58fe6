"""Re-runs queued for a worker, compared with their original once they have run.

`podium jobs rerun ID --compare` runs the re-run in the foreground and compares at once
(`podium.jobs.rerun`). A re-run queued instead (the Logbook's Re-run, `podium jobs rerun
ID`) leaves what to compare with the original (`reruns_pending.json` in its job folder)
and a pointer back in its own (`rerun_of`); `settle_reruns` makes the comparison once the
re-run has succeeded and records it where the Logbook reads reproducibility.
"""

from __future__ import annotations

import json
from typing import Any

from podium.errors import PodiumError
from podium.jobs.launch import submit
from podium.jobs.queue import get_job, job_dir
from podium.jobs.rerun import RerunPlan, RerunReport, compare_outputs, plan_rerun

PENDING_FILE = "reruns_pending.json"  # in the original's job folder: queued re-runs
RERUN_OF_FILE = "rerun_of"  # in a re-run's job folder: the original's id


def queue_rerun(job_id: str) -> tuple[str, RerunPlan]:
    """Queue the re-run of job `job_id` for a worker; returns the new job id and the plan.
    What to compare is kept with the original, so that once the re-run succeeds
    `settle_reruns` compares the two (the Logbook does, as `--compare` does at once)."""
    plan = plan_rerun(job_id)
    rerun_id = submit(plan.card)
    pending = _pending(plan.job_id)
    pending[rerun_id] = {
        "tables": plan.tables,
        "snapshots": plan.snapshots,
        "checkpoints": plan.checkpoints,
        "no_seed": plan.no_seed,
    }
    _save_pending(plan.job_id, pending)
    folder = job_dir(rerun_id)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RERUN_OF_FILE).write_text(plan.job_id, encoding="utf-8")
    return rerun_id, plan


def rerun_of(job_id: str) -> str | None:
    """The job that `job_id` was queued to re-run and compare with, if any."""
    try:
        return (job_dir(job_id) / RERUN_OF_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def settle_reruns(job_id: str) -> list[RerunReport]:
    """Compare job `job_id` with each of its queued re-runs that has succeeded since, and
    record the outcome (the Logbook's reproducibility line); a re-run that failed or was
    cancelled is forgotten. Returns the comparisons made now."""
    pending = _pending(job_id)
    if not pending:
        return []
    original = get_job(job_id)
    made: list[RerunReport] = []
    for rerun_id, plan in list(pending.items()):
        try:
            job = get_job(rerun_id)
        except PodiumError:
            del pending[rerun_id]
            continue
        if job["status"] in ("queued", "running", "cancelling"):
            continue
        del pending[rerun_id]
        if job["status"] == "succeeded":
            made.append(
                compare_outputs(
                    original,
                    job,
                    plan["tables"],
                    {t: plan["snapshots"].get(t) for t in plan["tables"]},
                    bool(plan["checkpoints"]),
                    bool(plan["no_seed"]),
                )
            )
    _save_pending(job_id, pending)
    return made


def _pending(job_id: str) -> dict[str, Any]:
    path = job_dir(job_id) / PENDING_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_pending(job_id: str, pending: dict[str, Any]) -> None:
    path = job_dir(job_id) / PENDING_FILE
    if not pending:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(pending), encoding="utf-8")
    tmp.replace(path)
