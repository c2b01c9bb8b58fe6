"""Reading a snapshot's data files: guarded DuckDB views, row-group reads, batch streams.

Three ways in, all driven by a `FilePlan`:

- `register_snapshot` makes a DuckDB view over the files (`read_parquet`, projection and
  filter pushdown) with a `__pos` column, the row's position in the snapshot. Files
  DuckDB cannot read itself (object stores without httpfs, delete files, renamed
  columns) stream through pyiceberg instead.
- `read_span` and `read_positions` read a few rows by position, opening only the
  Parquet row groups that hold them: a page at row 9,000,000 costs what page 0 costs.
- `iter_batches` streams every row in bounded batches.

Every connection is guarded (`connections`): it may read the planned data files and
nothing else, so a user's `--where` or `podium sql` cannot read other files on the machine.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from podium.store.read import s3_columns
from podium.store.read.connections import literal, quote
from podium.store.read.file_plan import FilePlan, PlannedFile, local_path
from podium.store.read.object_store import is_s3
from podium.store.read.plan import open_parquet, row_group_sizes

if TYPE_CHECKING:
    import duckdb
    import pyarrow.parquet as pq
    from pyiceberg.table import Table

# DuckDB and pyiceberg are imported where they are used: a page of a direct plan reads
# its row groups with pyarrow alone, and a cold `podium show` should not pay for them.

POS = "__pos"  # a row's position in the snapshot, in write order
DEFAULT_BATCH = 8192
_UTC_NAMES = ("UTC", "Etc/UTC", "+00:00")


def mapped_view_sql(columns: Sequence[str], mapping: Mapping[str, str], source: str = "raw") -> str:
    """SELECT that exposes a foreign table under canonical SFT names.

    `mapping` maps canonical names to stored ones, e.g. {"messages": "conversations",
    "role": "from", "content": "value", "id": "uid"}: a ShareGPT-shaped table then reads
    as an SFT table without being rewritten. Other columns pass through.
    """
    select = []
    canonical_columns = ("id", "system", "source", "split", "tags", "metadata")
    renamed = {mapping[c] for c in (*canonical_columns, "messages") if c in mapping}
    for canonical in canonical_columns:
        stored = mapping.get(canonical)
        if stored and stored in columns:
            select.append(f"{quote(stored)} AS {quote(canonical)}")
    if "messages" in mapping and mapping["messages"] in columns:
        role, content = mapping.get("role", "role"), mapping.get("content", "content")
        select.append(
            f"list_transform({quote(mapping['messages'])}, lambda m: "
            f"{{'role': m.{quote(role)}, 'content': m.{quote(content)}}}) AS messages"
        )
    select.extend(quote(c) for c in columns if c not in renamed)
    return "SELECT " + ", ".join(select) + f" FROM {source}"


def register_snapshot(
    con: duckdb.DuckDBPyConnection,
    alias: str,
    table: Table | None,
    plan: FilePlan,
    mapping: Mapping[str, str] | None = None,
    *,
    schema: str | None = None,
    with_pos: bool = True,
    columns: Sequence[str] | None = None,
) -> None:
    """Create view `alias` (in `schema` if given): the snapshot under canonical names,
    plus `__pos` when `with_pos`. The connection must be opened on the plan's files.
    `table` may be None for a self-contained plan (one read from the plan cache).

    `columns`: the only columns the caller's query uses. DuckDB projects the files it
    reads itself; a plan it cannot read (an object store, conformed files) is streamed
    to it through Arrow, which reads every column unless told: on S3 a filter on `split`
    then fetched and held every conversation. Ignored with a `mapping`."""
    raw = "__raw_" + (f"{schema}__" if schema else "") + alias
    names = ", ".join(quote(c) for c in plan.column_names)
    if plan.direct and plan.files and plan.whole_files:
        files = "[" + ", ".join(literal(f.local_path or "") for f in plan.files) + "]"
        starts = "[" + ", ".join(str(f.start) for f in plan.files) + "]"
        position = f"list_extract({starts}::BIGINT[], file_index::BIGINT + 1) + file_row_number"
        con.execute(
            f"CREATE TEMP VIEW {quote(raw)} AS SELECT {names}, {position}::BIGINT AS {POS} "
            f"FROM read_parquet({files}, union_by_name = true)"
        )
    elif plan.direct and plan.files:
        _register_runs(con, raw, plan, names)
    else:
        read = None if mapping else columns
        # A self-contained plan (S3 files, read by pyarrow) and an empty snapshot need no
        # table; `iter_batches` asks for it where pyiceberg must read.
        batches = _positioned(iter_batches(table, plan, read)) if plan.files else iter(())
        reader = pa.RecordBatchReader.from_batches(_with_pos(projected_schema(plan, read)), batches)
        con.register(raw, reader)
    target = f"{quote(schema)}.{quote(alias)}" if schema else quote(alias)
    if schema:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote(schema)}")
    body = (
        mapped_view_sql([*plan.column_names, POS], mapping, quote(raw))
        if mapping
        else f"SELECT * FROM {quote(raw)}"
    )
    if not with_pos:
        body = f"SELECT * EXCLUDE ({POS}) FROM ({body})"
    con.execute(f"CREATE {'' if schema else 'TEMP '}VIEW {target} AS {body}")


_BUCKET = 4096  # rows of a data file per lookup entry of a cut plan's view


def _register_runs(con: duckdb.DuckDBPyConnection, raw: str, plan: FilePlan, names: str) -> None:
    """View `raw` over a plan whose files are cut into runs (position deletes applied).

    Each row's position is its physical row plus the offset of the run holding it; rows in
    no run (deleted, or an old version of an edited row) are left out. The runs are looked
    up by an equality join on (file, row // _BUCKET), so DuckDB streams the data files past
    a small hash table; a range join would make it sort every row, messages included
    (1.5 GB for 100k rows of 7 KB, measured)."""
    paths = list(dict.fromkeys(f.path for f in plan.files))
    index = {p: i for i, p in enumerate(paths)}
    lookup: dict[tuple[int, int], tuple[list[int], list[int], list[int]]] = {}
    for f in plan.files:
        i = index[f.path]
        for bucket in range(f.first // _BUCKET, (f.first + f.records - 1) // _BUCKET + 1):
            firsts, stops, shifts = lookup.setdefault((i, bucket), ([], [], []))
            firsts.append(f.first)
            stops.append(f.first + f.records)
            shifts.append(f.start - f.first)
    for firsts, stops, shifts in lookup.values():
        order = sorted(range(len(firsts)), key=firsts.__getitem__)
        firsts[:] = [firsts[k] for k in order]
        stops[:] = [stops[k] for k in order]
        shifts[:] = [shifts[k] for k in order]
    keys = list(lookup)
    runs = raw + "__runs"
    con.register(
        runs,
        pa.table(
            {
                "fi": pa.array([k[0] for k in keys], pa.int64()),
                "bucket": pa.array([k[1] for k in keys], pa.int64()),
                "firsts": pa.array([lookup[k][0] for k in keys], pa.list_(pa.int64())),
                "stops": pa.array([lookup[k][1] for k in keys], pa.list_(pa.int64())),
                "shifts": pa.array([lookup[k][2] for k in keys], pa.list_(pa.int64())),
            }
        ),
    )
    files = "[" + ", ".join(literal(local_path(p) or "") for p in paths) + "]"
    con.execute(
        f"CREATE TEMP VIEW {quote(raw)} AS SELECT {names}, "
        f"(__frn + __shifts[__k])::BIGINT AS {POS} FROM ("
        f"SELECT r.*, b.stops AS __stops, b.shifts AS __shifts, "
        f"len(list_filter(b.firsts, lambda x: x <= r.__frn)) AS __k FROM ("
        f"SELECT {names}, file_index::BIGINT AS __fi, file_row_number::BIGINT AS __frn "
        f"FROM read_parquet({files}, union_by_name = true)) r "
        f"JOIN {quote(runs)} b ON r.__fi = b.fi AND r.__frn // {_BUCKET} = b.bucket"
        f") WHERE __k > 0 AND __frn < __stops[__k]"
    )


def _with_pos(schema: pa.Schema) -> pa.Schema:
    return schema.append(pa.field(POS, pa.int64()))


def _positioned(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    start = 0
    for batch in batches:
        pos = pa.array(np.arange(start, start + batch.num_rows, dtype=np.int64))
        start += batch.num_rows
        yield pa.RecordBatch.from_arrays([*batch.columns, pos], schema=_with_pos(batch.schema))


def _conform(data: pa.Table | pa.RecordBatch, schema: pa.Schema) -> pa.Table:
    """`data` as read from a file, shaped as the snapshot's `schema` (a column added
    after the file was written reads as nulls)."""
    present = set(data.schema.names)
    arrays = [
        _as_type(data.column(f.name), f.type) if f.name in present else pa.nulls(len(data), f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def _as_type(column: pa.Array | pa.ChunkedArray, type_: pa.DataType) -> pa.Array | pa.ChunkedArray:
    # `cast` loads pyarrow.compute (and with it pandas, ~0.3 s of a cold command): only
    # call it when the stored type differs.
    return column if column.type == type_ else column.cast(type_)


def projected_schema(plan: FilePlan, columns: Sequence[str] | None) -> pa.Schema:
    if columns is None:
        return plan.schema
    missing = [c for c in columns if c not in plan.schema.names]
    if missing:
        from podium.errors import InvalidInput

        raise InvalidInput(
            f"Table {plan.table} has no column {', '.join(missing)}; "
            f"columns: {', '.join(plan.column_names)}."
        )
    return pa.schema([plan.schema.field(c) for c in columns])


def _read_groups(
    path: str, parquet: pq.ParquetFile, groups: list[int], schema: pa.Schema
) -> pa.Table:
    """Row groups `groups` of data file `path` (open as `parquet`) as `schema`."""
    stored = set(parquet.schema_arrow.names)
    data = parquet.read_row_groups(groups, columns=[c for c in schema.names if c in stored])
    return _conform(data, schema)


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
        return _positions_by_streaming(_needed(table), plan, wanted, schema)
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


def to_rows(data: pa.Table) -> list[dict[str, Any]]:
    """`data.to_pylist()`, with UTC timestamp columns converted without pyarrow's probe
    for pandas (which imports it: ~0.3 s of a cold `podium show`). Equal values."""
    if data.num_columns == 0:
        return [{} for _ in range(data.num_rows)]
    values: list[list[Any]] = []
    for column in data.columns:
        kind = column.type
        if pa.types.is_timestamp(kind) and kind.tz in _UTC_NAMES and kind.unit != "ns":
            naive = pa.timestamp(kind.unit)
            values.append(
                [
                    None if v is None else v.replace(tzinfo=UTC)
                    for chunk in column.chunks
                    for v in chunk.view(naive).to_pylist()
                ]
            )
        else:
            values.append(column.to_pylist())
    names = data.column_names
    return [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


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
    yield from _stream_with_pyiceberg(_needed(table), plan, schema, batch_size)


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
            yield from _conform(batch, schema).to_batches()
        return
    stop = run.first + run.records
    group_start = 0
    for g, size in enumerate(sizes):
        group_stop = group_start + size
        lo, hi = max(run.first, group_start), min(stop, group_stop)
        if lo < hi:
            data = parquet.read_row_group(g, columns=stored)
            part = _conform(data.slice(lo - group_start, hi - lo), schema)
            yield from part.to_batches(max_chunksize=batch_size)
        group_start = group_stop
        if group_start >= stop:
            break


def _needed(table: Table | None) -> Table:
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
            conformed = _conform(pa.Table.from_batches([batch]), schema)
            yield from conformed.to_batches(max_chunksize=batch_size)
