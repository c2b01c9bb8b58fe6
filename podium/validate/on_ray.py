"""Validating a very large snapshot file-parallel: one Ray task per group of data files.

    podium validate big.sft --rule json --replicas 4 --launcher ray

The snapshot's file plan (`podium.store.read.plan`) is cut into contiguous groups of data
files with about the same number of rows; each group is checked by one Ray task (one
CPU, placed by Ray on any node), which reads only its files, runs the same batch check
as the local path (`podium.validate.turns.check_batch`) and writes its failures as one
staged Parquet file (`podium.store.write.staged`). The driver waits for every group, then
streams the staged failures in file order into the report's ONE commit (the writer the
local run uses, so the report is replaced whole, rows in the same order, or not at all),
and deletes the staged files. Failures are few next to the rows checked, so the driver
reads little; the rows themselves are read only by the tasks.

A run that fails leaves the old report untouched; its staged files are deleted by the
run itself or, if it died, by the next run of the same validation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io import load_file_io

from podium.ray_join import ray_module
from podium.reporting import Reporter
from podium.store.read import batch_stream
from podium.store.read.file_plan import FilePlan, PlannedFile, local_path
from podium.store.read.plan import open_parquet
from podium.store.write.fan_out import SPREAD, fan_out
from podium.store.write.staged import Staging, discard_staged, stage, staging_key, write_staged
from podium.validate.batch import Plan
from podium.validate.parallel import Task
from podium.validate.report import REPORT_SCHEMA, failure_batch
from podium.validate.tally import Tally
from podium.validate.turns import check_batch

TASK_CPUS = 1.0
GROUPS_PER_NODE = 4  # more groups than nodes, so a slow file does not hold up the run


@dataclass
class GroupResult:
    """What one task found in its files."""

    index: int
    rows: int = 0
    turns: int = 0
    tally: Tally = field(default_factory=Tally)
    path: str | None = None  # staged failures, when there were any


def group_files(files: tuple[PlannedFile, ...], groups: int) -> list[tuple[PlannedFile, ...]]:
    """Contiguous runs of `files` with about the same number of rows each."""
    total = sum(f.records for f in files) or 1
    groups = max(1, min(groups, len(files)))
    out: list[list[PlannedFile]] = [[]]
    seen = 0
    for f in files:
        if out[-1] and seen >= total * len(out) / groups and len(out) < groups:
            out.append([])
        out[-1].append(f)
        seen += f.records
    return [tuple(g) for g in out if g]


def check_group(
    index: int,
    plan: FilePlan,
    columns: list[str],
    task: Task,
    batch_rows: int,
    staging: Staging,
) -> GroupResult:
    """The Ray task: check every row of `plan`'s files and stage the failures."""
    from podium.store.catalog.catalog import load_table

    table = None if plan.direct else load_table(plan.table)  # object stores need its FileIO
    rules = Plan.of(task.rules)
    result = GroupResult(index)
    found: list[pa.RecordBatch] = []
    for batch in batch_stream.iter_batches(table, plan, columns, batch_rows):
        checked = check_batch(batch, rules, task.mode, task.roles, task.columns)
        result.rows += checked.rows
        result.turns += checked.turns
        result.tally.add(checked.failures)
        if checked.failures:
            found.append(failure_batch(checked.failures))
    if found:
        data = pa.Table.from_batches(found, schema=REPORT_SCHEMA)
        result.path = write_staged(staging, f"group-{index:06d}", data)
    return result


@dataclass
class RayValidation:
    """The groups' results, then their failures in file order (for the report's commit)."""

    staging: Staging
    results: list[GroupResult]

    def failures(self) -> Iterator[pa.RecordBatch]:
        for result in sorted(self.results, key=lambda r: r.index):
            if result.path is not None:
                yield from self._open(result.path).iter_batches()

    def _open(self, path: str) -> pq.ParquetFile:
        if local_path(path) is not None:
            return open_parquet(None, path)
        io = load_file_io(self.staging.properties, path)  # the warehouse's object store
        return pq.ParquetFile(io.new_input(path).open())

    def discard(self) -> None:
        discard_staged(self.staging)


def check_on_ray(
    plan: FilePlan,
    columns: list[str],
    task: Task,
    *,
    batch_rows: int,
    nodes: int,
    report: str,
    reporter: Reporter,
    done: Any,  # (GroupResult) -> None: counts it into the run's summary
) -> RayValidation:
    """Check every file of `plan` in Ray tasks; the failures wait staged for one commit."""
    ray = ray_module()
    groups = group_files(plan.files, nodes * GROUPS_PER_NODE)
    key = staging_key(plan.table, plan.snapshot_id, repr(task), batch_rows, len(groups))
    staging = stage(report, REPORT_SCHEMA, key)
    discard_staged(staging)  # a run that died left its groups here: start clean
    reporter.log(
        f"{len(plan.files)} data files in {len(groups)} groups, checked by Ray tasks "
        f"over up to {nodes} nodes"
    )
    remote = ray.remote(num_cpus=TASK_CPUS, max_retries=1)(check_group).options(
        scheduling_strategy=SPREAD
    )
    results: list[GroupResult] = []

    def collect(result: GroupResult) -> None:
        results.append(result)
        done(result)

    try:
        fan_out(
            enumerate(groups),
            range(len(groups)),  # every group at once: Ray places them as CPUs free up
            lambda _, group: remote.remote(
                group[0], replace(plan, files=group[1]), columns, task, batch_rows, staging
            ),
            collect,
            reporter,
        )
    except BaseException:
        discard_staged(staging)
        raise
    return RayValidation(staging, results)
