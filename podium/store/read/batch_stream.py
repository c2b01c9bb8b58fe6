"""Every row of a snapshot streamed in bounded batches, in write order: the planned
Parquet files read with pyarrow (a file cut into runs by the row groups that hold each
run), or through pyiceberg where delete files apply."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from podium.store.read import s3_columns
from podium.store.read.conform import conform, projected_schema
from podium.store.read.file_plan import FilePlan, PlannedFile
from podium.store.read.object_store import is_s3
from podium.store.read.plan import open_parquet, row_group_sizes

if TYPE_CHECKING:
    import pyarrow.parquet as pq
    from pyiceberg.table import Table

# pyiceberg is imported where it is used: a direct plan reads its files with pyarrow
# alone, and a cold `podium show` should not pay for it.

DEFAULT_BATCH = 8192


def iter_batches(
    table: Table | None,
    plan: FilePlan,
    columns: Sequence[str] | None = None,
    batch_size: int = DEFAULT_BATCH,
) -> Iterator[pa.RecordBatch]:
    """Every row of the snapshot in write order, `batch_size` rows at most at a time."""
    schema = projected_schema(plan, columns)
    if plan.simple:
        opened: dict[str, pq.ParquetFile] = {}
        for f in plan.files:
            if f.path not in opened:
                opened = {f.path: open_parquet(table, f.path)}  # runs of a file are adjacent
            yield from _run_batches(table, f, opened[f.path], schema, batch_size)
        return
    yield from _stream_with_pyiceberg(needed(table), plan, schema, batch_size)


def _run_batches(
    table: Table | None,
    run: PlannedFile,
    parquet: pq.ParquetFile,
    schema: pa.Schema,
    batch_size: int,
) -> Iterator[pa.RecordBatch]:
    """The rows of one run, streamed: a whole file batch by batch, a cut file by the row
    groups that hold the run (one ~2 MiB group in memory at a time)."""
    stored = [c for c in schema.names if c in set(parquet.schema_arrow.names)]
    sizes = row_group_sizes(table, run.path, parquet)
    if run.first == 0 and run.records == sum(sizes):
        if is_s3(run.path) and len(stored) < len(parquet.schema_arrow.names):
            # A few columns of an S3 file (a filter's): in a few GETs, not one a row group.
            batches = s3_columns.column_batches(run.path, parquet, stored, batch_size)
        else:
            batches = parquet.iter_batches(batch_size=batch_size, columns=stored)
        for batch in batches:
            yield from conform(batch, schema).to_batches()
        return
    stop = run.first + run.records
    group_start = 0
    for g, size in enumerate(sizes):
        group_stop = group_start + size
        lo, hi = max(run.first, group_start), min(stop, group_stop)
        if lo < hi:
            data = parquet.read_row_group(g, columns=stored)
            part = conform(data.slice(lo - group_start, hi - lo), schema)
            yield from part.to_batches(max_chunksize=batch_size)
        group_start = group_stop
        if group_start >= stop:
            break


def needed(table: Table | None) -> Table:
    """The table, which only a direct plan can do without."""
    if table is None:
        raise ValueError(
            "Only a self-contained plan (Parquet files on disk or S3, read as stored) is read "
            "without its table."
        )
    return table


def _stream_with_pyiceberg(
    table: Table, plan: FilePlan, schema: pa.Schema, batch_size: int
) -> Iterator[pa.RecordBatch]:
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan

    scan = table.scan(snapshot_id=plan.snapshot_id, selected_fields=tuple(schema.names))
    by_path = {task.file.file_path: task for task in scan.plan_files()}
    reader = ArrowScan(table.metadata, table.io, scan.projection(), AlwaysTrue(), True)
    # One file at a time: pyiceberg materialises each task it is given in full. It applies
    # deletes itself, so a file cut into runs is read once.
    for path in dict.fromkeys(f.path for f in plan.files):
        task = by_path.get(path)
        if task is None:
            continue
        for batch in reader.to_record_batches([task]):
            conformed = conform(pa.Table.from_batches([batch]), schema)
            yield from conformed.to_batches(max_chunksize=batch_size)
