"""Which Parquet columns a data file dictionary-encodes: the ones that repeat.

Arrow dictionary-encodes every column by default. A ~2 MiB row group (`file_writer`)
stays under the 2 MiB dictionary page limit, so a column of distinct texts (turn
contents, metadata, ids) is hashed value by value into a dictionary as large as the
data and never falls back to plain pages: 17% of the writer's CPU on chat rows, for a
file 2% larger than plain pages make. DuckDB's writer likewise keeps a dictionary only
where it is small. Text columns whose values are mostly distinct in the first batch
are written plain; roles, sources, splits, tags and every other column keep theirs.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

# A text column with more distinct values than this share of its values is written plain.
DISTINCT_SHARE = 0.5


def dictionary_columns(batch: pa.RecordBatch) -> list[str] | bool:
    """`use_dictionary` for `pq.ParquetWriter`: the Parquet paths of the leaf columns to
    dictionary-encode, judged on `batch`; True (every column) when a leaf cannot be
    matched to its path."""
    paths = _parquet_paths(batch.schema)
    leaves = [leaf for column in batch.columns for leaf in _leaves(column)]
    if len(paths) != len(leaves):
        return True
    keep = [path for path, leaf in zip(paths, leaves, strict=True) if _repeats(leaf)]
    return True if len(keep) == len(paths) else keep


def _parquet_paths(schema: pa.Schema) -> list[str]:
    """The leaf column paths Parquet gives `schema` (`messages.list.element.role`), from
    an empty file written in memory: the writer's own naming, not a copy of it."""
    writer = pq.ParquetWriter(pa.BufferOutputStream(), schema)
    writer.close()
    parquet_schema = writer.writer.metadata.schema
    return [parquet_schema.column(i).path for i in range(len(parquet_schema))]


def _leaves(values: pa.Array) -> list[pa.Array]:
    """The leaf arrays of `values` in Parquet's (depth-first) column order."""
    kind = values.type
    if pa.types.is_struct(kind):
        return [leaf for i in range(kind.num_fields) for leaf in _leaves(values.field(i))]
    if pa.types.is_map(kind):
        return _leaves(values.keys) + _leaves(values.items)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _leaves(values.flatten())
    if pa.types.is_fixed_size_list(kind):
        return _leaves(values.flatten())
    return [values]


def _repeats(leaf: pa.Array) -> bool:
    """Whether a dictionary pays for `leaf`: anything but text (or bytes) whose values
    are mostly distinct."""
    kind = leaf.type
    text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
    if not (text or pa.types.is_binary(kind) or pa.types.is_large_binary(kind)):
        return True
    present = len(leaf) - leaf.null_count
    if present == 0:
        return True
    distinct: int = pc.count_distinct(leaf).as_py()
    return bool(distinct <= DISTINCT_SHARE * present)
