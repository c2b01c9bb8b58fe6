"""Re-running a finished job into new output tables, and comparing the two outputs.

    podium jobs rerun ID                    # queue its stored card, writing <out>__rerun_<n>
    podium jobs rerun ID --compare [--json] # run it here, then rows identical / differing

The re-run uses the job's stored card (inputs pinned to the same snapshots, the same
model names and parameters) with every config field that named one of the job's output
tables pointed at a new table, so the original output is never touched. Its recorded
environment goes along: if the checkpoint, Podium or the lock file changed since, the
new job warns and says what (podium/jobs/environment.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podium.errors import InvalidInput, PodiumError
from podium.jobs.cards import Card, parse_card
from podium.jobs.launch import run_foreground, submit
from podium.jobs.queue import Job, get_job
from podium.jobs.table_diff import TableDiff, diff_tables
from podium.store.catalog import full_name, table_exists

RERUN_SUFFIX = "__rerun_"


@dataclass(frozen=True)
class RerunPlan:
    job_id: str  # the original job
    card: Card  # its card, writing new tables
    tables: dict[str, str]  # original output table -> the re-run's table
    snapshots: dict[str, int | None]  # original output table -> snapshot the job left


def _output_tables(job: Job) -> dict[str, int | None]:
    return {t["name"]: t["snapshot_id"] for t in (job["outputs"] or {}).get("tables", [])}


def _table_name(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return full_name(value)
    except PodiumError:  # not shaped like a table name: a path, a label
        return None


def _free_suffix(tables: list[str]) -> int:
    n = 1
    while any(table_exists(f"{t}{RERUN_SUFFIX}{n}") for t in tables):
        n += 1
    return n


def plan_rerun(job_id: str) -> RerunPlan:
    """The card that re-runs job `job_id` into new tables (nothing is queued yet)."""
    job = get_job(job_id)
    if job["status"] != "succeeded":
        raise InvalidInput(
            f"Job {job['id']} is {job['status']}: only a succeeded job has outputs to re-run "
            "and compare. To resume or retry it, use the Logbook's 'Re-run from card' or "
            "`podium submit` with its card."
        )
    outputs = _output_tables(job)
    card = parse_card(job["card"], source=f"card of job {job['id']}")
    fields = {
        name: table
        for name in type(card.config).model_fields
        if (table := _table_name(getattr(card.config, name))) in outputs
    }
    if not fields:
        written = ", ".join(outputs) or "none"
        raise InvalidInput(
            f"Job {job['id']} ({job['kind']}) wrote no table that its card names (tables "
            f"written: {written}); only jobs whose card names their output table can be "
            "re-run into a new one."
        )
    n = _free_suffix(sorted(set(fields.values())))
    new = {table: f"{table}{RERUN_SUFFIX}{n}" for table in fields.values()}
    config = card.config.model_copy(update={name: new[table] for name, table in fields.items()})
    rerun_card = Card(card.kind, config, card.notes, card.environment)
    return RerunPlan(job["id"], rerun_card, new, {t: outputs[t] for t in new})


def queue_rerun(job_id: str) -> tuple[str, RerunPlan]:
    """Queue the re-run for a worker; returns the new job id and the plan."""
    plan = plan_rerun(job_id)
    return submit(plan.card), plan


def rerun_and_compare(job_id: str, quiet: bool = False) -> tuple[Job, list[TableDiff]]:
    """Re-run here (with a progress bar unless `quiet`), then compare each output table."""
    plan = plan_rerun(job_id)
    job = run_foreground(plan.card, quiet=quiet)
    written = _output_tables(job)
    diffs = [
        diff_tables(
            original,
            again,
            original_snapshot=plan.snapshots[original],
            rerun_snapshot=written.get(again),
        )
        for original, again in plan.tables.items()
    ]
    return job, diffs


def describe(diff: TableDiff) -> list[str]:
    """A comparison in a few lines, for the terminal."""
    lines = [
        f"{diff.original}@{diff.original_snapshot} vs {diff.rerun}@{diff.rerun_snapshot} "
        f"(rows by {' + '.join(diff.key)}, comparing {', '.join(diff.compared)}):",
        f"  {diff.identical} identical, {diff.differing} differing, {diff.only_original} only "
        f"in the original, {diff.only_rerun} only in the re-run",
    ]
    for example in diff.examples:
        lines.append(f"  {example['status']} {example['key']}:")
        lines.append(f"    original: {example['original']}")
        lines.append(f"    re-run:   {example['rerun']}")
    return lines
