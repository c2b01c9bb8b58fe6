"""Parquet data files for one Iceberg transaction, written from a stream of batches:
field ids and types as the table's, small row groups, files rolled over at a size on
disk, and the statistics Iceberg's manifests need."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from typing import IO, Any, cast

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import (
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
    pyarrow_to_schema,
    schema_to_pyarrow,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import Schema
from pyiceberg.table import Transaction
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.typedef import Record

from podium.errors import InvalidInput, disk_full, disk_full_error
from podium.failpoints import hit
from podium.store.catalog.iceberg_internals import (
    check_arrow_schema_compatible,
    parquet_writer_kwargs,
    to_file_schema,
    transaction_io,
)
from podium.store.read import footer_cache
from podium.store.write.encodings import dictionary_columns

log = logging.getLogger("podium")

RowsWritten = Callable[[int], None]

# Row groups of about 2 MiB of Arrow data. A page read decodes one whole row group, so
# its size is what a deep page costs: on 200k rows of ~7.7 KB, groups of ~256 rows
# (2 MiB) against ~2,400 (16 MiB) cut a page at any offset from ~110 to ~23 ms, with
# the same full-scan search time and 1% more bytes on disk (README "Speed").
ROW_GROUP_BYTES = 2 * 2**20


def _group_rows(batch: pa.RecordBatch) -> int:
    rows: int = batch.num_rows
    size: int = batch.nbytes
    return max(1, -(-rows * ROW_GROUP_BYTES // max(1, size)))


class FileWriter:
    """Parquet data files for one transaction, rolled over at a target size on disk."""

    def __init__(self, txn: Transaction, target_bytes: int) -> None:
        self.meta: TableMetadata = txn.table_metadata
        self.io: FileIO = transaction_io(txn)
        self.target_bytes = max(1, target_bytes)
        self.paths: list[str] = []
        self._uuid = uuid.uuid4()
        self.file_schema = self.meta.schema()
        self._arrow_schema = schema_to_pyarrow(self.file_schema, include_field_ids=True)
        self._locations = load_location_provider(self.meta.location, self.meta.properties)
        self._kwargs = parquet_writer_kwargs(self.meta.properties)
        self._stats_plan = compute_statistics_plan(self.file_schema, self.meta.properties)
        self._id_mapping = parquet_path_to_id_mapping(self.file_schema)
        self._dictionary: list[str] | bool = True

    def write(
        self, batches: Iterator[pa.RecordBatch], on_rows: RowsWritten | None
    ) -> list[DataFile]:
        files: list[DataFile] = []
        task_schema: Schema | None = None
        writer: pq.ParquetWriter | None = None
        out: Any = None
        rows = 0
        try:
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                if task_schema is None:
                    task_schema = self._task_schema(batch.schema)
                batch = self._to_file_schema(batch, task_schema)
                if writer is None:
                    if not self.paths:  # judged once, on the first batch
                        self._dictionary = dictionary_columns(batch)
                    writer, out = self._open()
                writer.write_batch(batch, row_group_size=_group_rows(batch))
                rows += batch.num_rows
                if on_rows is not None:
                    on_rows(rows)
                if out.tell() >= self.target_bytes:
                    files.append(self._close(writer, out))
                    writer = out = None
                    hit("write.between_files")
            if writer is not None:
                files.append(self._close(writer, out))
                writer = out = None
        except BaseException as exc:
            # Close the open file now: an S3 stream left to the garbage collector is closed
            # after pyarrow's S3 shutdown at exit, and the process hung there for good
            # (a database outage mid-import, tests/integration/test_outages.py).
            _abandon(writer, out)
            if isinstance(exc, Exception) and disk_full(exc):
                raise disk_full_error(exc, "writing data files") from exc
            raise
        return files

    def discard(self) -> None:
        """Delete the files this writer made; they belong to no snapshot."""
        for path in self.paths:
            try:
                self.io.delete(path)
            except Exception as exc:  # an orphan file is harmless: readers follow manifests
                log.warning("could not delete orphan data file %s: %s", path, exc)

    def _task_schema(self, schema: pa.Schema) -> Schema:
        try:
            check_arrow_schema_compatible(
                self.file_schema, schema, format_version=self.meta.format_version
            )
        except ValueError as exc:
            raise InvalidInput(f"The rows do not fit the table's columns: {exc}") from None
        return pyarrow_to_schema(
            schema,
            name_mapping=self.file_schema.name_mapping,
            format_version=self.meta.format_version,
        )

    def _to_file_schema(self, batch: pa.RecordBatch, task_schema: Schema) -> pa.RecordBatch:
        """`batch` with the table's field ids and the file's exact Arrow types."""
        if batch.schema.equals(self._arrow_schema, check_metadata=False):
            # The same fields and types: only the field ids (metadata) to add, which is all
            # pyiceberg's projection would do, after rebuilding every list (5% of an
            # import's writing thread).
            return pa.RecordBatch.from_arrays(batch.columns, schema=self._arrow_schema)
        projected = to_file_schema(batch, table_schema=self.file_schema, batch_schema=task_schema)
        # One writer takes one schema: `string` and `large_string` input both become
        # the file's type.
        if projected.schema.equals(self._arrow_schema, check_metadata=False):
            return projected
        return projected.cast(self._arrow_schema)

    def _open(self) -> tuple[pq.ParquetWriter, Any]:
        name = f"00000-{len(self.paths)}-{self._uuid}.parquet"
        path = self._locations.new_data_location(data_file_name=name)
        self.paths.append(path)
        out = self.io.new_output(path).create(overwrite=False)
        try:
            writer = pq.ParquetWriter(
                cast(IO[Any], out),
                schema=self._arrow_schema,
                store_decimal_as_integer=True,
                use_dictionary=self._dictionary,
                **self._kwargs,
            )
        except Exception:
            out.close()
            raise
        return writer, out

    def _close(self, writer: pq.ParquetWriter, out: Any) -> DataFile:
        with out:
            writer.close()
            size = out.tell()
        # The first cold read of a new S3 file then opens it without asking for its footer.
        footer_cache.keep(self.paths[-1], size, writer.writer.metadata)
        stats = data_file_statistics_from_parquet_metadata(
            parquet_metadata=writer.writer.metadata,
            stats_columns=self._stats_plan,
            parquet_column_mapping=self._id_mapping,
        )
        return DataFile.from_args(
            content=DataFileContent.DATA,
            file_path=self.paths[-1],
            file_format=FileFormat.PARQUET,
            partition=Record(),
            file_size_in_bytes=size,
            sort_order_id=None,
            spec_id=self.meta.default_spec_id,
            equality_ids=None,
            key_metadata=None,
            **stats.to_serialized_dict(),
        )


def _abandon(writer: pq.ParquetWriter | None, out: Any) -> None:
    """Close a half-written file on the way out of a failed write (discard() deletes it)."""
    for close in (writer.close if writer is not None else None, getattr(out, "close", None)):
        if close is None:
            continue
        try:
            close()
        except Exception as exc:  # the write already failed; that error is the one to raise
            log.warning("could not close an abandoned data file: %s", exc)
