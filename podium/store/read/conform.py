"""A data file's rows shaped as the snapshot's schema (a column added after the file
was written reads as nulls; a stored type differing from the snapshot's is cast), and
the schema a read of some columns returns."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from podium.store.read.file_plan import FilePlan


def conform(data: pa.Table | pa.RecordBatch, schema: pa.Schema) -> pa.Table:
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
