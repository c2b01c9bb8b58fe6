"""Rows of a snapshot by their position: `read_span` and `read_positions` open only the
Parquet row groups that hold them, so a page at row 9,000,000 costs what page 0 costs.
A plan whose positions cannot be mapped to files (delete files apply) streams instead.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from podium.store.read.batch_stream import iter_batches, needed
from podium.store.read.conform import conform, projected_schema
from podium.store.read.file_plan import FilePlan
from podium.store.read.plan import open_parquet, row_group_sizes

if TYPE_CHECKING:
    import pyarrow.parquet as pq
    from pyiceberg.table import Table


def _read_groups(
    path: str, parquet: pq.ParquetFile, groups: list[int], schema: pa.Schema
) -> pa.Table:
    """Row groups `groups` of data file `path` (open as `parquet`) as `schema`."""
    stored = set(parquet.schema_arrow.names)
    data = parquet.read_row_groups(groups, columns=[c for c in schema.names if c in stored])
    return conform(data, schema)


def read_span(
    table: Table | None,
    plan: FilePlan,
    offset: int,
    limit: int,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """Rows [offset, offset + limit) in write order, reading only the row groups
    that hold them."""
    return read_positions(table, plan, range(offset, min(offset + limit, plan.total)), columns)


def read_positions(
    table: Table | None,
    plan: FilePlan,
    positions: Iterable[int],
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """The rows at `positions` (ascending), in that order. `table` may be None for a
    self-contained plan (one read from the plan cache)."""
    schema = projected_schema(plan, columns)
    wanted = np.fromiter(positions, dtype=np.int64)
    if len(wanted) == 0:
        return schema.empty_table()
    if not plan.simple:
        return _positions_by_streaming(needed(table), plan, wanted, schema)
    starts = [f.start for f in plan.files]
    parts: list[pa.Table] = []
    # Group wanted rows by (file, row group) so each file's footer is read once and
    # each row group is opened once; a file cut into runs is still opened once.
    opened: dict[str, pq.ParquetFile] = {}
    groups: dict[tuple[str, int], list[int]] = {}
    order: dict[tuple[str, int], list[int]] = {}  # each row's index in `wanted`
    bounds: dict[str, list[int]] = {}
    for n, pos in enumerate(wanted.tolist()):
        f = plan.files[bisect.bisect_right(starts, pos) - 1]
        if f.path not in bounds:
            opened[f.path] = open_parquet(table, f.path, few_groups=True)
            sizes = row_group_sizes(table, f.path, opened[f.path])
            bounds[f.path] = np.cumsum((0, *sizes)).tolist()
        row = f.first + pos - f.start
        g = bisect.bisect_right(bounds[f.path], row) - 1
        groups.setdefault((f.path, g), []).append(row - bounds[f.path][g])
        order.setdefault((f.path, g), []).append(n)
    for (path, g), rows in groups.items():
        data = _read_groups(path, opened[path], [g], schema)
        parts.append(_rows_of(data, rows))
    if not parts:
        return schema.empty_table()
    out = pa.concat_tables(parts)
    got = [n for key in groups for n in order[key]]
    if got != list(range(len(got))):  # an edited row read from a newer file: put it back
        out = out.take(pa.array(np.argsort(np.array(got, dtype=np.int64), kind="stable")))
    return out


def _rows_of(data: pa.Table, rows: list[int]) -> pa.Table:
    """`data.take(rows)`, as a zero-copy slice when the rows are one run (a page), which
    also spares a cold command the import of pyarrow.compute."""
    if rows == list(range(rows[0], rows[0] + len(rows))):
        return data.slice(rows[0], len(rows))
    return data.take(pa.array(rows, pa.int64()))


def _positions_by_streaming(
    table: Table, plan: FilePlan, wanted: np.ndarray, schema: pa.Schema
) -> pa.Table:
    """Fallback when row positions cannot be mapped to files (delete files apply)."""
    parts: list[pa.Table] = []
    start = 0
    for batch in iter_batches(table, plan, schema.names):
        end = start + batch.num_rows
        lo, hi = np.searchsorted(wanted, [start, end])
        if hi > lo:
            parts.append(pa.Table.from_batches([batch]).take(pa.array(wanted[lo:hi] - start)))
        start = end
        if hi == len(wanted):
            break
    return pa.concat_tables(parts) if parts else schema.empty_table()
