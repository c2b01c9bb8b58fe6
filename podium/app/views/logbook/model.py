"""What the Logbook shows of one job's outputs, without Streamlit: the tables it wrote,
the checkpoints a training run registered (its final one from the summary too), and
what each checkpoint can be compared with. The rest the page reads and does (jobs, logs,
cancel, re-run) is `podium.jobs`'s, named here: the view imports only this model."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from podium.jobs import logbook as lb
from podium.jobs.kinds import registered_checkpoints
from podium.jobs.logbook import duration_text as duration_text
from podium.jobs.logbook import events as events
from podium.jobs.logbook import job_rows as job_rows
from podium.jobs.logbook import kind_model as kind_model
from podium.jobs.logbook import kind_names as kind_names
from podium.jobs.logbook import metrics_frame as metrics_frame
from podium.jobs.logbook import progress_fraction as progress_fraction
from podium.jobs.logbook import progress_text as progress_text
from podium.jobs.logbook import rerun as rerun
from podium.jobs.logbook import samples as samples
from podium.jobs.logs import readable_tail as readable_tail
from podium.jobs.queue import Job as Job
from podium.jobs.queue import get_job as get_job
from podium.jobs.queue import list_jobs as list_jobs
from podium.jobs.queue import may_cancel as may_cancel
from podium.jobs.queue import request_cancel as request_cancel
from podium.jobs.queue import submitters as submitters
from podium.jobs.reproducibility import reproducibility_text, reruns
from podium.jobs.rerun_queue import rerun_of, settle_reruns
from podium.jobs.tables import ACTIVE as ACTIVE
from podium.jobs.tables import warnings_of as warnings_of
from podium.store.catalog.catalog import list_tables as list_tables


@dataclass(frozen=True)
class Outputs:
    inputs: list[tuple[str, int | None]]
    tables: list[tuple[str, int | None]]
    checkpoints: list[str] = field(default_factory=list)  # oldest first; the last is final
    base: str | None = None  # what a checkpoint is compared with
    trained_on: str | None = None  # the table a run trained on (Compare prompts with it)
    empty_text: str = ""  # "none yet" / "none" when there is nothing to list
    # A cancelled job's outputs stop where it did: "cancelled at step 3 of 10".
    partial: str | None = None

    def compare_models(self, checkpoint: str) -> str:
        return f"{self.base},{checkpoint}" if self.base else checkpoint


def outputs_of(job: Job) -> Outputs:
    links = lb.table_links(job)
    outputs: dict[str, Any] = job.get("outputs") or {}
    # Training and the bootstrap register checkpoints; other kinds list the one they used.
    checkpoints = registered_checkpoints(job["kind"], outputs)
    try:
        config = json.loads(job.get("config") or "{}")
    except json.JSONDecodeError:
        config = {}
    table = config.get("table") if isinstance(config, dict) else None
    base = config.get("model") if isinstance(config, dict) else None
    nothing = not (links["outputs"] or checkpoints)
    return Outputs(
        inputs=links["inputs"],
        tables=links["outputs"],
        checkpoints=checkpoints,
        base=base if isinstance(base, str) else None,
        trained_on=table.get("name") if isinstance(table, dict) else None,
        empty_text=("none yet" if job["status"] in ACTIVE else "none") if nothing else "",
        partial=(outputs.get("summary") or {}).get("partial") or None,
    )


def reproducibility(job: Job) -> str:
    """Whether the job re-runs to the same result, as the Logbook says it: 're-ran
    identical on DATE', 'differs: ...', 'not reproducible: no seed' ('' for nothing).
    A re-run queued from the Logbook is compared with its original here once it has
    succeeded (row by row, weights and curves, as `podium jobs rerun --compare`), and
    the re-run's own page says how it compared."""
    settle_reruns(job["id"])
    original = rerun_of(job["id"])
    if original is not None:
        settle_reruns(original)
        entry = next((e for e in reruns(original) if e["rerun_job_id"] == job["id"]), None)
        if entry is not None:
            what = "; ".join(entry.get("differences") or [])
            return f"Re-run of {original}: {entry['verdict']}" + (f" ({what})" if what else "")
        if job["status"] in ACTIVE:
            return f"Re-run of {original}: compared with it once it has succeeded"
    text = reproducibility_text(job)
    return f"Reproducibility: {text}" if text else ""
