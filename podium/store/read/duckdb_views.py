"""A snapshot as a DuckDB view: `register_snapshot` makes a view over the planned data
files (`read_parquet`, projection and filter pushdown) with a `__pos` column, the row's
position in the snapshot; files DuckDB cannot read itself (object stores without httpfs,
delete files, renamed columns) stream to it through Arrow (`batch_stream`) instead.
`mapped_view_sql` shows a foreign table under canonical SFT names.

Every connection is guarded (`connections`): it may read the planned data files and
nothing else, so a user's `--where` or `podium sql` cannot read other files on the machine.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from podium.store.read.batch_stream import iter_batches
from podium.store.read.conform import projected_schema
from podium.store.read.connections import literal, quote
from podium.store.read.file_plan import FilePlan, local_path

if TYPE_CHECKING:
    import duckdb
    from pyiceberg.table import Table

POS = "__pos"  # a row's position in the snapshot, in write order


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
