"""Reading a snapshot's data files: guarded DuckDB views, row-group reads, batch streams.

Three ways in, all driven by a `FilePlan`:

- `register_snapshot` makes a DuckDB view over the files (`read_parquet`, projection and
  filter pushdown) with a `__pos` column, the row's position in the snapshot. Files
  DuckDB cannot read itself (object stores without httpfs, delete files, renamed
  columns) stream through pyiceberg instead.
- `read_span` and `read_positions` read a few rows by position, opening only the
  Parquet row groups that hold them: a page at row 9,000,000 costs what page 0 costs.
- `iter_batches` streams every row in bounded batches.

Every connection is guarded: it may read the planned data files and nothing else
(`allowed_paths` with external access disabled, then the configuration locked), so a
user's `--where` or `podium sql` cannot read other files on the machine.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from podium.store.plan import FilePlan, open_parquet, row_group_sizes
from podium.store.private_tmp import private_dir

if TYPE_CHECKING:
    import duckdb
    import pyarrow.parquet as pq
    from pyiceberg.table import Table

# DuckDB and pyiceberg are imported where they are used: a page of a direct plan reads
# its row groups with pyarrow alone, and a cold `podium show` should not pay for them.

POS = "__pos"  # a row's position in the snapshot, in write order
DEFAULT_BATCH = 8192
_UTC_NAMES = ("UTC", "Etc/UTC", "+00:00")


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def literal(text: str) -> str:
    """A SQL string literal (views cannot take parameters; '' is the only escape)."""
    return "'" + text.replace("'", "''") + "'"


def connect(
    paths: Iterable[str] = (), *, memory_limit: str | None = None, threads: int | None = None
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that can read `paths` and no other file, settings locked."""
    import duckdb

    con = duckdb.connect()
    # Spills (a query over its memory cap) go to a directory only this user can read.
    con.execute("SET temp_directory = $1", [str(private_dir("duckdb"))])
    allowed = sorted(set(paths))
    if allowed:
        con.execute("SET allowed_paths = $1", [allowed])
    con.execute("SET enable_external_access = false")
    if memory_limit:
        con.execute("SET memory_limit = $1", [memory_limit])
    if threads:
        con.execute("SET threads = $1", [threads])
    con.execute("SET lock_configuration = true")
    return con


def connect_plans(
    plans: Sequence[FilePlan], **settings: str | int | None
) -> duckdb.DuckDBPyConnection:
    paths = [f.local_path or "" for p in plans if p.direct for f in p.files]
    return connect([p for p in paths if p], **settings)  # type: ignore[arg-type]


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
) -> None:
    """Create view `alias` (in `schema` if given): the snapshot under canonical names,
    plus `__pos` when `with_pos`. The connection must be opened on the plan's files.
    `table` may be None for a direct plan (one read from the plan cache)."""
    raw = "__raw_" + (f"{schema}__" if schema else "") + alias
    names = ", ".join(quote(c) for c in plan.column_names)
    if plan.direct and plan.files:
        files = "[" + ", ".join(literal(f.local_path or "") for f in plan.files) + "]"
        starts = "[" + ", ".join(str(f.start) for f in plan.files) + "]"
        position = f"list_extract({starts}::BIGINT[], file_index::BIGINT + 1) + file_row_number"
        con.execute(
            f"CREATE TEMP VIEW {quote(raw)} AS SELECT {names}, {position}::BIGINT AS {POS} "
            f"FROM read_parquet({files}, union_by_name = true)"
        )
    else:
        # An empty snapshot has no file to read, so needs no table either.
        batches = _positioned(iter_batches(_needed(table), plan)) if plan.files else iter(())
        reader = pa.RecordBatchReader.from_batches(_with_pos(plan.schema), batches)
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
    direct plan (one read from the plan cache)."""
    schema = projected_schema(plan, columns)
    wanted = np.fromiter(positions, dtype=np.int64)
    if len(wanted) == 0:
        return schema.empty_table()
    if not plan.simple:
        return _positions_by_streaming(_needed(table), plan, wanted, schema)
    starts = [f.start for f in plan.files]
    parts: list[pa.Table] = []
    # Group wanted rows by (file, row group) so each file's footer is read once and
    # each row group is opened once.
    opened: dict[int, pq.ParquetFile] = {}
    groups: dict[tuple[int, int], list[int]] = {}
    bounds: dict[int, list[int]] = {}
    for pos in wanted.tolist():
        i = bisect.bisect_right(starts, pos) - 1
        f = plan.files[i]
        if i not in bounds:
            opened[i] = open_parquet(table, f.path)
            bounds[i] = np.cumsum((0, *row_group_sizes(table, f.path, opened[i]))).tolist()
        local = pos - f.start
        g = bisect.bisect_right(bounds[i], local) - 1
        groups.setdefault((i, g), []).append(local - bounds[i][g])
    for (i, g), rows in groups.items():
        data = _read_groups(plan.files[i].path, opened[i], [g], schema)
        parts.append(_rows_of(data, rows))
    return pa.concat_tables(parts) if parts else schema.empty_table()


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
        for f in plan.files:
            parquet = open_parquet(table, f.path)
            stored = set(parquet.schema_arrow.names)
            for batch in parquet.iter_batches(
                batch_size=batch_size, columns=[c for c in schema.names if c in stored]
            ):
                yield from _conform(batch, schema).to_batches()
        return
    yield from _stream_with_pyiceberg(_needed(table), plan, schema, batch_size)


def _needed(table: Table | None) -> Table:
    """The table, which only a direct plan can do without."""
    if table is None:
        raise ValueError(
            "Only a direct plan (local Parquet files, read as stored) is read without its table."
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
    # One file at a time: pyiceberg materialises each task it is given in full.
    for f in plan.files:
        task = by_path.get(f.path)
        if task is None:
            continue
        for batch in reader.to_record_batches([task]):
            conformed = _conform(pa.Table.from_batches([batch]), schema)
            yield from conformed.to_batches(max_chunksize=batch_size)
