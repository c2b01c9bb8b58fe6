"""What a cancelled or failed job leaves behind, as its recorded outputs.

A job cancelled part-way may have registered checkpoints (a training run's saves, marked
partial in the registry by the trainer) and written tables (a generation's committed
batches, an async run's rollouts). Its record lists them like a finished job's outputs,
with `summary["partial"]` saying where it stopped ("cancelled at step 3 of 10"), so the
Logbook, Home, `podium models list` and Compare all tell the same story.

A resumable job (generate, code-exec build, compare, judge) that fails keeps the batches
it committed, so that running it again resumes: its record lists those tables the same
way ("failed at 40 of 100; running it again resumes"). Each such table also carries the
note itself (`podium.partial`), which Browse and Home show, until a run of the job
completes it and removes the note.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from podium.errors import PodiumError
from podium.jobs.queue import set_fields
from podium.reporting import JobOutputs, cancelled_at, stopped_at
from podium.store.catalog.catalog import list_tables, load_or_none, load_table, open_catalog
from podium.store.schema import PROP_LINEAGE_PREFIX, PROP_PARTIAL
from podium.store.write.write import remove_properties, set_properties

if TYPE_CHECKING:
    from podium.jobs.reporter import JobReporter

JOB_ID_PROPERTY = f"{PROP_LINEAGE_PREFIX}job_id"
RESUMES = "running it again resumes"


def tables_written_by(job_id: str) -> list[str]:
    """Tables whose lineage names this job (the tables it created)."""
    catalog = open_catalog()
    found = []
    for name in list_tables(catalog):
        try:
            properties = load_table(name, catalog=catalog).properties
        except PodiumError:  # dropped meanwhile, or unreadable: not this job's to list
            continue
        if properties.get(JOB_ID_PROPERTY) == job_id:
            found.append(name)
    return found


def cancelled_outputs(
    job_id: str, reporter: JobReporter, committed: Iterable[str] = ()
) -> JobOutputs:
    """The outputs a cancelled job records: what its run said it leaves (checkpoints
    marked partial), the tables it wrote (made, or `committed` to: a resumed one), what
    it kept (`Reporter.keep`), and where it stopped (the run's own words, else its last
    progress count)."""
    left = reporter.partial_outputs or JobOutputs()
    # The reporter's own count: its heartbeat thread may not have written the last one.
    note = left.summary.get("partial") or cancelled_at(*reporter.last_progress)
    tables = left.tables or tables_written_by(job_id)
    return JobOutputs(
        tables=tables + [t for t in dict.fromkeys(committed) if t not in tables],
        checkpoints=list(left.checkpoints),
        summary={**reporter.kept, **left.summary, "partial": note},
    )


def failed_note(reporter: JobReporter) -> str:
    """What marks the tables a resumable job committed before it failed: "failed at 40
    of 100; running it again resumes"."""
    return f"{stopped_at('failed', *reporter.last_progress)}; {RESUMES}"


def mark_partial(tables: Iterable[str], note: str, log: Callable[[str], None]) -> None:
    """Put `note` on each table itself, where Browse and Home read it. The job's outcome
    is recorded whatever happens here: a table that cannot take it is named in the log."""
    for name in tables:
        try:
            set_properties(name, {PROP_PARTIAL: note})
        except Exception as exc:
            log(f"could not mark {name} partial: {exc}")


def clear_partial(tables: Iterable[str], log: Callable[[str], None]) -> None:
    """A job that completed these tables (a resume that finished) removes their partial
    note; tables without one are only read."""
    for name in tables:
        try:
            table = load_or_none(name)
            if table is not None and PROP_PARTIAL in table.properties:
                remove_properties(name, [PROP_PARTIAL])
                log(f"{name} is complete: its partial note is removed")
        except Exception as exc:
            log(f"could not remove the partial note of {name}: {exc}")


def partial_note(properties: Mapping[str, str]) -> str | None:
    """A table's partial note (its properties'), or None for a complete table."""
    return properties.get(PROP_PARTIAL) or None


def outputs_json(
    outputs: JobOutputs | None, landed: list[tuple[str, int]] | None = None
) -> dict[str, Any]:
    """Outputs with each table pinned to the snapshot the job left it at: the last one
    the job committed to it (`landed`), else the table's current one."""
    outputs = outputs or JobOutputs()
    committed = dict(landed or [])
    tables = []
    for name in outputs.tables:
        table, _, snap = name.partition("@")
        sid: int | None = int(snap) if snap else committed.get(table)
        if sid is None:
            try:
                current = load_table(table).current_snapshot()
                sid = current.snapshot_id if current else None
            except PodiumError:
                sid = None
        tables.append({"name": table, "snapshot_id": sid})
    return {
        "tables": tables,
        "checkpoints": [str(c) for c in outputs.checkpoints],
        "summary": json.loads(json.dumps(outputs.summary, default=str)),
    }


def record_left(reporter: JobReporter) -> None:
    """Write what a stopping run leaves (its partial checkpoints, the tables it made) to
    its job's record at once, and mark those tables: the cleanup after a stop may not live
    to record the cancel (the job's private Ray, stopped by the same SIGTERM, would end its
    process once it gave up waiting for its GCS; the worker's SIGKILL after the stop grace
    may come first), and the worker then ends the job keeping these outputs."""
    left = cancelled_outputs(reporter.job_id, reporter)
    set_fields(reporter.job_id, outputs=json.dumps(outputs_json(left)))
    mark_partial(left.tables, left.summary["partial"], reporter.log)
