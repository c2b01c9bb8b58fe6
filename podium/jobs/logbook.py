"""What the Logbook shows, as plain functions: job rows, links, metrics, events.

The Streamlit page (podium/app/views/logbook/view.py) and `podium jobs` only lay these out.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

import pandas as pd
from pydantic import BaseModel

from podium.errors import InvalidInput
from podium.jobs.cards import Card, parse_card, validate_config
from podium.jobs.kinds import KINDS, get_kind, registered_checkpoints
from podium.jobs.launch import submit
from podium.jobs.plugins import load_plugins
from podium.jobs.progress import progress_fraction as progress_fraction  # re-exported:
from podium.jobs.progress import progress_text as progress_text  # the Logbook reads them here
from podium.jobs.queue import Job, get_job, now
from podium.jobs.rerun_queue import queue_rerun
from podium.jobs.tables import FINISHED, job_events, job_samples, metric_rows, rows_of_job
from podium.store.read.refs import parse_ref_text


def duration_seconds(job: Job, at: datetime | None = None) -> float | None:
    if job["started_at"] is None:
        return None
    end = job["finished_at"] or at or now()
    elapsed: float = (end - job["started_at"]).total_seconds()
    return max(0.0, elapsed)


def duration_text(job: Job) -> str:
    seconds = duration_seconds(job)
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def job_rows(jobs: list[Job]) -> list[dict[str, Any]]:
    """One row per job for the logbook's table."""
    return [
        {
            "id": j["id"],
            "kind": j["kind"],
            "status": j["status"],
            "progress": progress_fraction(j),
            "duration": duration_text(j),
            "created": j["created_at"].strftime("%Y-%m-%d %H:%M:%S"),
            "outputs": outputs_text(j),
        }
        for j in jobs
    ]


def outputs_text(job: Job) -> str:
    """The tables a job wrote, then the checkpoint it registered (a training run's final
    one: its intermediate saves are listed in the job's details)."""
    outputs = job["outputs"] or {}
    names = [t["name"] for t in outputs.get("tables", [])]
    names += registered_checkpoints(job["kind"], outputs)[-1:]
    partial = (outputs.get("summary") or {}).get("partial")
    return ", ".join(names) + (f" (partial: {partial})" if names and partial else "")


def table_links(job: Job) -> dict[str, list[tuple[str, int | None]]]:
    """Input and output tables as (name, snapshot id), for links into Browse."""
    inputs = []
    for ref in job["inputs"]:
        name, snap, _ = parse_ref_text(ref)
        inputs.append((name, snap))
    outputs = [(t["name"], t["snapshot_id"]) for t in (job["outputs"] or {}).get("tables", [])]
    return {"inputs": inputs, "outputs": outputs}


def metrics_frame(job_id: str) -> pd.DataFrame:
    """Metrics as a wide frame: index step, one column per metric name."""
    rows = metric_rows(job_id)
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows, columns=["step", "name", "value"])
    return frame.pivot_table(index="step", columns="name", values="value", aggfunc="last")


def samples(job_id: str, limit: int = 20) -> list[dict[str, Any]]:
    rows = rows_of_job(job_samples, job_id, ("step", "values"), last=limit)
    return [{"step": r.step, **json.loads(r.values)} for r in rows]


def events(job_id: str) -> list[dict[str, Any]]:
    rows = rows_of_job(job_events, job_id, ("at", "status", "message"))
    return [{"at": r.at, "status": r.status, "message": r.message or ""} for r in rows]


def may_rerun(job: Job) -> bool:
    """Re-run is offered for a finished job only: a queued or running one has not used
    its card yet (a changed copy, "Re-run with changes", is always offered)."""
    return job["status"] in FINISHED


def rerun(job_id: str) -> str:
    """Queue a past job's stored card again; returns the new job id. A succeeded job
    re-runs into fresh output names, as `podium jobs rerun` does (its card again would
    refuse a checkpoint name already registered, or overwrite a validation report); a
    failed or cancelled one runs its own card again, to finish what it started."""
    job = get_job(job_id)
    if not may_rerun(job):
        raise InvalidInput(
            f"Job {job['id']} is {job['status']}: it has not finished, so there is nothing "
            "to re-run yet. Wait for it, or cancel it first."
        )
    if job["status"] == "succeeded":
        try:
            return queue_rerun(job["id"])[0]  # compared with this one once it succeeds
        except InvalidInput:
            pass  # its card names no output: run again, it overwrites nothing
    return submit(parse_card(job["card"], source=f"card of job {job['id']}"))


def kind_names() -> list[str]:
    load_plugins()
    return sorted(KINDS)


def kind_model(kind: str) -> type[BaseModel]:
    load_plugins()
    return get_kind(kind).config_model()


def kind_fields(kind: str) -> list[dict[str, Any]]:
    """A kind's card fields: name, type, default, help (from its config model)."""
    try:
        model = kind_model(kind)
    except ImportError as exc:
        return [{"name": "?", "type": "unavailable", "default": None, "help": str(exc)}]
    fields = []
    for name, field in model.model_fields.items():
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        fields.append(
            {
                "name": name,
                "type": _type_name(field.annotation),
                "default": default.model_dump() if isinstance(default, BaseModel) else default,
                "required": field.is_required(),
                "help": field.description or "",
            }
        )
    return fields


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return re.sub(r"\b(?:[a-z_]+\.)+", "", str(annotation))


def submit_config(kind: str, values: dict[str, Any], notes: str = "") -> str:
    """Validate form values as a `kind` card and queue it; InvalidInput lists bad fields."""
    config = validate_config(kind, values)
    return submit(Card(kind, config, notes))
