"""Reading a table snapshot without holding it: streams of batches, bounded row reads.

Everything here starts from the snapshot's file plan (`podium.store.read.plan`): a stream
opens one data file at a time, and `read_rows` opens only the Parquet row groups that
hold the rows asked for. Nothing caches rows; only plans are cached.

    for batch in iter_batches("demo.chat", columns=["id", "messages"]):
        ...
    first_page = read_rows("demo.chat", limit=50)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table
from podium.store.read import batch_stream, by_position, conform
from podium.store.read.file_plan import FilePlan
from podium.store.read.plan import plan_snapshot
from podium.store.read.snapshots import resolve_snapshot

DEFAULT_BATCH = batch_stream.DEFAULT_BATCH
SMALL_TABLE_ROWS = 200_000  # the most rows `read_small` hands back as one Arrow table


def open_snapshot(name: str, snapshot_id: int | str | None = None) -> tuple[Table, FilePlan]:
    """The table and the file plan of its snapshot (default: current)."""
    table = load_table(name)
    return table, plan_snapshot(table, resolve_snapshot(table, snapshot_id))


def iter_table_batches(
    table: Table,
    snapshot_id: int | None,
    *,
    columns: Sequence[str] | None = None,
    batch_size: int = DEFAULT_BATCH,
) -> Iterator[pa.RecordBatch]:
    """Every row of `table` at `snapshot_id`, in write order, `batch_size` at a time."""
    return batch_stream.iter_batches(table, plan_snapshot(table, snapshot_id), columns, batch_size)


def iter_batches(
    name: str,
    snapshot_id: int | str | None = None,
    *,
    columns: Sequence[str] | None = None,
    batch_size: int = DEFAULT_BATCH,
) -> Iterator[pa.RecordBatch]:
    """Every row of `name` at `snapshot_id` (default: current), in write order."""
    table, plan = open_snapshot(name, snapshot_id)
    return batch_stream.iter_batches(table, plan, columns, batch_size)


def read_rows(
    name: str,
    snapshot_id: int | str | None = None,
    *,
    limit: int,
    offset: int = 0,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """Rows [offset, offset + limit) in write order; only their row groups are read."""
    if offset < 0 or limit < 0:
        raise InvalidInput("offset and limit must not be negative.")
    table, plan = open_snapshot(name, snapshot_id)
    return by_position.read_span(table, plan, offset, limit, columns)


def read_small_table(
    table: Table,
    snapshot_id: int | None,
    *,
    columns: Sequence[str] | None = None,
    max_rows: int = SMALL_TABLE_ROWS,
) -> pa.Table:
    """The whole snapshot as one Arrow table, for tables that are small by nature
    (votes, a prompt set, a verification report). Refuses a big one rather than
    filling memory: stream it with `iter_batches` instead."""
    plan = plan_snapshot(table, snapshot_id)
    if plan.total > max_rows:
        raise InvalidInput(
            f"Table {plan.table} has {plan.total:,} rows, more than the {max_rows:,} this "
            "step reads at once; pick a smaller table or a subset."
        )
    return pa.Table.from_batches(
        list(batch_stream.iter_batches(table, plan, columns)),
        conform.projected_schema(plan, columns),
    )


def read_small(
    name: str,
    snapshot_id: int | str | None = None,
    *,
    columns: Sequence[str] | None = None,
    max_rows: int = SMALL_TABLE_ROWS,
) -> tuple[pa.Table, int | None]:
    """`read_small_table` by name: the rows and the snapshot read."""
    table = load_table(name)
    sid = resolve_snapshot(table, snapshot_id)
    return read_small_table(table, sid, columns=columns, max_rows=max_rows), sid


def row_count(name: str, snapshot_id: int | str | None = None) -> int:
    """Rows in the snapshot, from the manifests (no data file is opened)."""
    return open_snapshot(name, snapshot_id)[1].total


def read_arrow(name: str, snapshot_id: int | str | None = None) -> tuple[pa.Table, int | None]:
    """Deprecated: `read_small` under its old name, kept until every caller streams."""
    return read_small(name, snapshot_id)


def clear_cache() -> None:
    """Forget cached file plans (benchmarks use this to measure cold)."""
    from podium.store.read.plan import clear_plans

    clear_plans()
