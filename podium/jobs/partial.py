"""What a cancelled job leaves behind, as its recorded outputs.

A job cancelled part-way may have registered checkpoints (a training run's saves, marked
partial in the registry by the trainer) and written tables (a generation's committed
batches, an async run's rollouts). Its record lists them like a finished job's outputs,
with `summary["partial"]` saying where it stopped ("cancelled at step 3 of 10"), so the
Logbook, Home, `podium models list` and Compare all tell the same story.
"""

from __future__ import annotations

from podium.errors import PodiumError
from podium.jobs.reporter import JobReporter
from podium.reporting import JobOutputs, cancelled_at
from podium.store.catalog.catalog import list_tables, load_table, open_catalog
from podium.store.schema import PROP_LINEAGE_PREFIX

JOB_ID_PROPERTY = f"{PROP_LINEAGE_PREFIX}job_id"


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


def cancelled_outputs(job_id: str, reporter: JobReporter) -> JobOutputs:
    """The outputs a cancelled job records: what its run said it leaves (checkpoints
    marked partial), the tables it wrote, and where it stopped (the run's own words,
    else its last progress count)."""
    left = reporter.partial_outputs or JobOutputs()
    # The reporter's own count: its heartbeat thread may not have written the last one.
    note = left.summary.get("partial") or cancelled_at(*reporter.last_progress)
    return JobOutputs(
        tables=left.tables or tables_written_by(job_id),
        checkpoints=list(left.checkpoints),
        summary={**left.summary, "partial": note},
    )
