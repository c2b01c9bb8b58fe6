"""Keeping a table healthy after months of edits: compaction, snapshot expiry, orphans.

- `compact`: review edits leave small data files and position-delete files behind
  (merge-on-read), and appends leave small files. Compaction rewrites the table from
  the first file that needs it (cut by deletes, or small with more after it) to the
  end, in reading order, into target-size files, and drops every delete file: one
  snapshot, row ids and order unchanged (the rewritten part stays where it was; only
  what follows it moves with it). Its summary names no rows, so an edit planned before
  it does not conflict with it.
- `expire` (`store.maintenance.expiry`): snapshots older than a retention are dropped from the
  table's metadata, never a ref's head, one that was a head within the grace period,
  or one `keep` names (what run cards, checkpoints and other tables' lineage point
  at: the caller collects them, the store knows nothing of jobs); the commit fails and
  re-plans when any ref changed meanwhile.
- `remove_orphans` (`store.maintenance.orphans`): files under the table's location that
  no table of the catalog references (a killed import's data files, an expired
  snapshot's files), older than a grace period so that a write in flight is never
  touched, outside every other table's folder. Files staged by resumable jobs
  (`data/staged-*`) are theirs to clean and left alone. `store.maintenance.warehouse_sweep`
  does the same for files under the warehouse that belong to no table the catalog knows.

`footprint` counts files and bytes before and after, for the run's report.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Collection, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table
from podium.store.catalog.commit_outcome import TOKEN, commit_checked, new_token
from podium.store.maintenance.expiry import expire as expire
from podium.store.maintenance.orphans import remove_orphans as remove_orphans
from podium.store.maintenance.orphans import unreferenced_files as unreferenced_files
from podium.store.maintenance.table_files import STAGED_DIR as STAGED_DIR
from podium.store.maintenance.table_files import location_filesystem as location_filesystem
from podium.store.maintenance.table_files import normal_path as normal_path
from podium.store.maintenance.table_files import referenced_files as referenced_files
from podium.store.maintenance.table_files import walk_files
from podium.store.read.file_plan import FilePlan, PlannedFile
from podium.store.read.plan import plan_snapshot, warm_after_commit

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile
    from pyiceberg.table import Table

log = logging.getLogger("podium")

AUTHOR = "podium.author"  # the same keys as review.changes' summaries
MESSAGE = "podium.message"
ACTION = "podium.action"
ROWS = "podium.rows"


@dataclass(frozen=True)
class Footprint:
    data_files: int  # live in the current snapshot
    delete_files: int
    live_bytes: int
    snapshots: int
    files_on_disk: int  # everything under the table's location: data, deletes, metadata
    bytes_on_disk: int

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Compaction:
    files_in: int  # data and delete files replaced
    files_out: int
    bytes_in: int
    bytes_out: int
    rows: int
    snapshot_id: int | None  # None: nothing needed compacting

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _live(table: Table) -> list[DataFile]:
    from podium.store.write.row_delta import live_files

    current = table.current_snapshot()
    return [f for f, _ in live_files(table, current.snapshot_id if current else None)]


def footprint(name: str) -> Footprint:
    from pyiceberg.manifest import DataFileContent

    table = load_table(name)
    live = _live(table)
    on_disk = list(walk_files(table))
    return Footprint(
        data_files=sum(1 for f in live if f.content == DataFileContent.DATA),
        delete_files=sum(1 for f in live if f.content != DataFileContent.DATA),
        live_bytes=sum(f.file_size_in_bytes for f in live),
        snapshots=len(table.snapshots()),
        files_on_disk=len(on_disk),
        bytes_on_disk=sum(size for _, size, _ in on_disk),
    )


@dataclass(frozen=True)
class Held:
    """Snapshots past the retention that stay only because a caller names them, and the
    data and delete files they keep on disk that the head does not reference."""

    snapshots: list[int]  # oldest first
    files: int
    bytes: int


def held_past_retention(name: str, named: Collection[int], older_than: datetime) -> Held:
    """What `named` keeps of `name` past `older_than`: its snapshots committed before
    then that are no ref's head, and the files only they (not the head) reference, which
    no compaction can free while they are named."""
    from podium.store.write.row_delta import live_files

    table = load_table(name)
    heads = {ref.snapshot_id for ref in table.metadata.refs.values()}
    cutoff_ms = older_than.timestamp() * 1000
    kept = [  # in commit order
        s.snapshot_id
        for s in sorted(table.snapshots(), key=lambda s: s.timestamp_ms)
        if s.snapshot_id in named and s.snapshot_id not in heads and s.timestamp_ms < cutoff_ms
    ]
    current = table.current_snapshot()
    in_head = {f.file_path for f, _ in live_files(table, current.snapshot_id if current else None)}
    held: dict[str, int] = {}
    for sid in kept:
        for f, _ in live_files(table, sid):
            if f.file_path not in in_head:
                held[f.file_path] = f.file_size_in_bytes
    return Held(kept, len(held), sum(held.values()))


def _to_compact(
    plan: FilePlan, counts: dict[str, int], sizes: dict[str, int], target_bytes: int
) -> int | None:
    """Index of the run from which the table is rewritten, or None: the first data file
    that deletes cut, or that is small and not the last."""
    runs: dict[str, list[PlannedFile]] = {}
    for f in plan.files:
        runs.setdefault(f.path, []).append(f)
    paths = list(runs)
    small = max(1, target_bytes // 2)
    for k, path in enumerate(paths):
        [*first, last] = runs[path]
        whole = not first and last.first == 0 and last.records == counts.get(path, -1)
        if not whole or (sizes.get(path, 0) < small and k < len(paths) - 1):
            return next(i for i, f in enumerate(plan.files) if f.path == path)
    return None


def compact(
    name: str,
    *,
    author: str,
    target_file_bytes: int,
    on_rows: Callable[[int], None] | None = None,
) -> Compaction:
    """Rewrite what needs it into target-size files, in order; one snapshot."""
    from pyiceberg.exceptions import CommitFailedException, ValidationException
    from pyiceberg.manifest import DataFileContent
    from pyiceberg.table.snapshots import Operation

    from podium.store.read import batch_stream
    from podium.store.read.prefetch import prefetched
    from podium.store.write.file_writer import FileWriter
    from podium.store.write.row_delta import commit_row_delta

    table = load_table(name)
    current = table.current_snapshot()
    if current is None:
        return Compaction(0, 0, 0, 0, 0, None)
    if any(spec.fields for spec in table.metadata.partition_specs):
        # The rewriter makes unpartitioned files only, and Podium wrote no deletes here.
        log.warning("%s is partitioned: compaction skipped (its engine compacts it)", name)
        return Compaction(0, 0, 0, 0, 0, None)
    live = _live(table)
    deletes = [f for f in live if f.content != DataFileContent.DATA]
    plan = plan_snapshot(table, current.snapshot_id)
    counts = {f.file_path: f.record_count for f in live if f.content == DataFileContent.DATA}
    sizes = {f.file_path: f.file_size_in_bytes for f in live if f.content == DataFileContent.DATA}
    start = _to_compact(plan, counts, sizes, target_file_bytes)
    shown = {r.path for r in plan.files}
    # A file whose rows are all gone has no run left; it still has to go.
    dead = [f for f in live if f.content == DataFileContent.DATA and f.file_path not in shown]
    if start is None and not deletes and not dead:
        return Compaction(0, 0, 0, 0, 0, None)
    tail = plan.files[start:] if start is not None else ()
    rewritten = {f.path for f in tail}
    removed = [f for f in live if f.file_path in rewritten] + deletes + dead
    sub = FilePlan(plan.table, plan.snapshot_id, tuple(tail), plan.schema, plan.simple)
    writer = FileWriter(table.transaction(), target_file_bytes)
    try:
        batches = batch_stream.iter_batches(table, sub) if tail else iter(())
        new_files = writer.write(prefetched(_as_table_schema(batches, plan.schema)), on_rows)
    except BaseException:
        writer.discard()
        raise
    token = new_token()
    try:
        commit_checked(
            functools.partial(
                commit_row_delta,
                table,
                add=new_files,
                remove=removed,
                properties={
                    AUTHOR: author,
                    ACTION: "compact",
                    MESSAGE: f"compacted {len(removed)} files into {len(new_files)}",
                    ROWS: "[]",  # no row changes: edits planned before stay valid
                    TOKEN: token,
                },
                operation=Operation.REPLACE,  # the spec's name for a rewrite of no rows
            ),
            token=token,
            reload=lambda: load_table(name),
            discard=writer.discard,
            what=f"compacting {name}",
        )
    except (CommitFailedException, ValidationException):
        raise InvalidInput(
            f"{name} changed while it was being compacted (an edit or a write landed); "
            "nothing was changed. Run maintain again."
        ) from None
    head = warm_after_commit(load_table(name)).current_snapshot()
    return Compaction(
        files_in=len(removed),
        files_out=len(new_files),
        bytes_in=sum(f.file_size_in_bytes for f in removed),
        bytes_out=sum(f.file_size_in_bytes for f in new_files),
        rows=sum(f.record_count for f in new_files),
        snapshot_id=head.snapshot_id if head else None,
    )


def _as_table_schema(
    batches: Iterator[pa.RecordBatch], schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        yield batch if batch.schema.equals(schema) else batch.cast(schema)
