"""What the Train page shows and does, without Streamlit.

The form's choices (base checkpoints, tables, snapshots, rewards: the form is
`forms.queue_form`, whose submit the kind's preflight checks once), and the live view
of a run: status, progress, metric groups for the charts, sample completions, an async
GRPO run's replicas, staleness and weight syncs (`async_rl_model`), and on success the
registered checkpoint with its base for the chat and compare buttons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from podium.app.async_rl_model import AsyncView, async_view, job_config
from podium.app.charts import chart_groups
from podium.app.rows.view_state import ref_names, snapshot_label
from podium.jobs.logbook import kind_model, metrics_frame, progress_fraction, samples
from podium.jobs.queue import Job, get_job, list_jobs, request_cancel
from podium.jobs.tables import warnings_of
from podium.models.registry import get_model, list_models
from podium.review.refs import refs_of
from podium.store.catalog.catalog import list_tables, load_table
from podium.store.read.snapshots import list_snapshots
from trainers.config import ASYNC_ONLY
from trainers.presets import PRESET_NAMES as PRESET_NAMES
from trainers.presets import preset_defaults as preset_defaults

KINDS = ("sft", "grpo")
REWARD_CHOICES = (
    "validate:json",
    "validate:json-schema",
    "validate:python",
    "validate:xml",
    "sandbox:output",
    "sandbox:tests",
    "exact_match",
    "length:64",
    "length:256",
)

ROLLOUTS = ("sync", "async")


def default_rewards(preset: str) -> dict[str, float]:
    """The rewards a card with `preset` and no rewards of its own gets (rule -> weight),
    which the form preselects: a length penalty scaled to the preset's completion
    budget, so the run has a learning signal from its first step."""
    from trainers.presets import length_reward

    budget = int(preset_defaults("grpo", preset)["max_completion_length"])
    return {str(r["rule"]): float(r["weight"]) for r in length_reward(budget)}


# GrpoConfig's fields that only an async rollout reads (the model marks them): shown
# beside the basic fields when the form is for async, left at their defaults (and off
# the form) for sync.
ASYNC_FIELDS = ASYNC_ONLY


def base_choices() -> list[str]:
    """Local checkpoints a run can start from: base models first, then trained ones."""
    local = [m for m in list_models() if m.kind in ("base", "trained") and m.path]
    local.sort(key=lambda m: (m.kind != "base", not m.is_default, m.name))
    return [m.name for m in local]


def table_choices() -> list[str]:
    return list_tables()


def snapshot_choices(table: str) -> list[tuple[str, int]]:
    """(label, snapshot id), newest first, in the one snapshot format (tags named)."""
    loaded = load_table(table)
    names = ref_names(refs_of(loaded))
    snaps = list(reversed(list_snapshots(loaded)))
    return [(snapshot_label(s, names.get(s.snapshot_id, ())), s.snapshot_id) for s in snaps]


def only_valid_default(table: str, snapshot: int | str | None) -> tuple[bool, str]:
    """Whether "Only valid rows" starts on for this snapshot, and the line that says
    why: on (skipping the rows it names) when a validation report of this very snapshot
    exists, off (every row) when none does."""
    from podium.errors import PodiumError
    from podium.validate.report import malformed_ids

    try:
        bad = malformed_ids(table, snapshot)
    except PodiumError as exc:  # an unreadable report: the form still opens, and says so
        return False, f"Its validation report could not be read ({exc}): every row is trained on."
    if bad is None:
        return False, (
            f"No validation report covers this snapshot of {table}: every row is trained "
            "on. Validate it first to skip malformed rows."
        )
    rows = f"{len(bad):,} row" + ("" if len(bad) == 1 else "s")
    return True, (
        f"The validation report of this snapshot marks {rows} malformed: "
        f'"Only valid" skips {"them" if len(bad) != 1 else "it"}.'
    )


def default_out(model: str, table: str, kind: str) -> str:
    """A new checkpoint's name from its base, data and method, unique in the registry."""
    from podium.models.registry import get_model_or_none

    slug = re.sub(r"[^a-z0-9]+", "-", f"{model}-{kind}-{table.split('.')[-1]}".lower())
    base = slug.strip("-")[:60]
    name, n = base, 1
    while get_model_or_none(name) is not None:
        n += 1
        name = f"{base}-{n}"
    return name


def rollout_fields(kind: str, rollout: str) -> tuple[tuple[str, ...], dict[str, Any]]:
    """(fields shown with the basic ones, fields fixed off the form with their values) for
    a `kind` run with `rollout` (a `grpo` card's sync or async)."""
    if kind != "grpo":
        return (), {}
    if rollout == "async":
        return ASYNC_FIELDS, {"rollout": "async"}
    from trainers.config import GrpoConfig

    defaults = {f: GrpoConfig.model_fields[f].get_default() for f in ASYNC_FIELDS}
    return (), {"rollout": "sync", **defaults}


def training_runs(limit: int = 20) -> list[Job]:
    return [j for j in list_jobs(limit=200) if j["kind"] in KINDS][:limit]


def run_label(job: Job) -> str:
    out = job_config(job).get("out", "?")
    return f"{job['kind']} → {out} · {job['status']} · {job['id']}"


def run_title(job_id: str) -> str:
    return run_label(get_job(job_id))


def run_status(job_id: str) -> str:
    return str(get_job(job_id)["status"])


def cancel_run(job_id: str) -> None:
    """Ask the worker to stop the run at its next step."""
    request_cancel(job_id)


def form_fields(kind: str) -> list[str]:
    """Every field of the kind's config, in the form's order."""
    return list(kind_model(kind).model_fields)


def cancel_question(view: RunView) -> str:
    """What "Cancel run" asks before it stops anything."""
    return (
        f"Cancel run {view.job_id} ({view.status})? It stops at its next step; this "
        "cannot be undone (queue it again to start over)."
    )


@dataclass
class RunView:
    job_id: str
    kind: str
    status: str
    progress: float | None
    message: str
    groups: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)
    checkpoint: str | None = None
    base: str | None = None
    table: str | None = None  # what it trained on, so Compare can prompt with it
    error: str | None = None
    async_rl: AsyncView | None = None  # an async GRPO run's versions, staleness, syncs
    # What the run warned about as it ran (a reward with no variance: it cannot learn).
    warnings: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.status in ("succeeded", "failed", "cancelled")


def run_view(job_id: str) -> RunView:
    job = get_job(job_id)
    config = job_config(job)
    summary = (job["outputs"] or {}).get("summary") or {}
    checkpoint = summary.get("checkpoint") if job["status"] == "succeeded" else None
    base = None
    if checkpoint:
        base = get_model(checkpoint).parent
    metrics = metrics_frame(job["id"])
    return RunView(
        job_id=job["id"],
        kind=job["kind"],
        status=job["status"],
        progress=progress_fraction(job),
        message=job["progress_message"] or "",
        groups=chart_groups(metrics),
        samples=samples(job["id"], limit=10),
        checkpoint=checkpoint,
        base=base or config.get("model"),
        table=(config.get("table") or {}).get("name"),
        error=(job["error"] or "").splitlines()[0] if job["error"] else None,
        async_rl=async_view(job, metrics),
        warnings=warnings_of(job["id"]),
    )
