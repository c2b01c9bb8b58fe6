"""Iceberg position-delete files: written for a review edit, read back into a plan.

A position delete file (format v2) lists `(file_path, pos)` pairs: rows of data files
that are no longer part of the table from its snapshot on. pyiceberg 0.12 reads them
but cannot write them ("Merge on read is not yet supported"), so an edit writes its own:
a Parquet file with the two spec columns and their reserved field ids, sorted by path
and position. Its manifest entry carries the metrics pyiceberg computes for a data file
(column sizes, value and null counts, from the Parquet footer): `inspect.entries()` and
other readers expect them. The bounds on both columns are exact, never truncated (Java's
`MetricsConfig.forPositionDelete` does the same), so readers (pyiceberg's delete index,
DuckDB's Iceberg reader) know which data file a delete file applies to.

An edit is a delete plus a new row. So that a page still shows an edited row where it
was (other engines only promise the set of rows, not their order), the delete file's
footer also records which new row replaces each deleted one: key `podium.replaced-by`,
a JSON list of `[deleted_path, deleted_pos, new_path, new_row]`. Other engines ignore
footer metadata; Podium's plan splices the new row into the old row's place.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from podium.errors import disk_full, disk_full_error

if TYPE_CHECKING:
    from pyiceberg.manifest import DataFile
    from pyiceberg.schema import Schema
    from pyiceberg.table import Table

PATH_FIELD_ID = 2147483546  # the Iceberg spec's reserved ids for position deletes
POS_FIELD_ID = 2147483545
REPLACED_BY = b"podium.replaced-by"

SCHEMA = pa.schema(
    [
        pa.field("file_path", pa.string(), False, {"PARQUET:field_id": str(PATH_FIELD_ID)}),
        pa.field("pos", pa.int64(), False, {"PARQUET:field_id": str(POS_FIELD_ID)}),
    ]
)


@dataclass(frozen=True)
class Replacement:
    """Row `new_row` of data file `new_path` takes the place of `(old_path, old_pos)`."""

    old_path: str
    old_pos: int
    new_path: str
    new_row: int


@dataclass(frozen=True)
class DeleteFileContent:
    positions: dict[str, list[int]]  # data file path -> deleted positions (ascending)
    replacements: list[Replacement]


def write_delete_file(
    table: Table,
    deleted: Iterable[tuple[str, int]],
    replacements: Sequence[Replacement] = (),
) -> DataFile:
    """Write one position delete file for `deleted` and return its pyiceberg `DataFile`
    (content POSITION_DELETES), ready to be committed by `store.write.row_delta`."""
    from pyiceberg.conversions import to_bytes
    from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
    from pyiceberg.typedef import Record
    from pyiceberg.types import LongType, StringType

    pairs = sorted(set(deleted))
    if not pairs:
        raise ValueError("a position delete file needs at least one deleted row")
    data = pa.table(
        {"file_path": [p for p, _ in pairs], "pos": [int(r) for _, r in pairs]}, schema=SCHEMA
    )
    meta = {
        REPLACED_BY: json.dumps(
            [[r.old_path, r.old_pos, r.new_path, r.new_row] for r in replacements]
        ).encode()
    }
    data = data.replace_schema_metadata(meta)
    name = f"{uuid.uuid4()}-deletes.parquet"
    path = table.location_provider().new_data_location(name)
    output = table.io.new_output(path)
    try:
        with output.create(overwrite=False) as stream:
            with pq.ParquetWriter(stream, data.schema, compression="zstd") as writer:
                writer.write_table(data)
            size = stream.tell()
    except Exception as exc:
        with contextlib.suppress(Exception):  # half a file: no snapshot will name it
            table.io.delete(path)
        if disk_full(exc):
            raise disk_full_error(exc, "writing a delete file") from exc
        raise
    stats = _statistics(writer.writer.metadata)
    lo_path, hi_path = pairs[0][0], pairs[-1][0]
    positions = [r for _, r in pairs]
    stats.update(
        lower_bounds={
            PATH_FIELD_ID: to_bytes(StringType(), lo_path),
            POS_FIELD_ID: to_bytes(LongType(), min(positions)),
        },
        upper_bounds={
            PATH_FIELD_ID: to_bytes(StringType(), hi_path),
            POS_FIELD_ID: to_bytes(LongType(), max(positions)),
        },
    )
    return DataFile.from_args(
        content=DataFileContent.POSITION_DELETES,
        file_path=path,
        file_format=FileFormat.PARQUET,
        partition=Record(),
        file_size_in_bytes=size,
        sort_order_id=None,
        spec_id=table.metadata.default_spec_id,
        equality_ids=None,
        key_metadata=None,
        **stats,
    )


def _statistics(metadata: pq.FileMetaData) -> dict[str, Any]:
    """The manifest metrics of a delete file, as pyiceberg computes them for data files."""
    from pyiceberg.io.pyarrow import (
        compute_statistics_plan,
        data_file_statistics_from_parquet_metadata,
        parquet_path_to_id_mapping,
    )

    schema = _iceberg_schema()
    stats = data_file_statistics_from_parquet_metadata(
        parquet_metadata=metadata,
        stats_columns=compute_statistics_plan(schema, {"write.metadata.metrics.default": "full"}),
        parquet_column_mapping=parquet_path_to_id_mapping(schema),
    )
    return stats.to_serialized_dict()


def _iceberg_schema() -> Schema:
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    return Schema(
        NestedField(PATH_FIELD_ID, "file_path", StringType(), required=True),
        NestedField(POS_FIELD_ID, "pos", LongType(), required=True),
    )


def read_delete_file(parquet: pq.ParquetFile) -> DeleteFileContent:
    """The positions a delete file removes, by data file, and the replacements it names."""
    data = parquet.read(columns=["file_path", "pos"])
    positions: dict[str, list[int]] = {}
    for path, pos in zip(
        data.column("file_path").to_pylist(), data.column("pos").to_pylist(), strict=True
    ):
        positions.setdefault(path, []).append(int(pos))
    for rows in positions.values():
        rows.sort()
    raw = (parquet.schema_arrow.metadata or {}).get(REPLACED_BY)
    replacements = (
        [Replacement(str(a), int(b), str(c), int(d)) for a, b, c, d in json.loads(raw)]
        if raw
        else []
    )
    return DeleteFileContent(positions, replacements)
