"""Writing Arrow data into Iceberg tables: streamed into many files, one atomic commit.

Every write is one Iceberg commit: a table being created appears only with its first
rows (`create_table_transaction`), and appends and overwrites either land whole or not
at all. Properties (kind, lineage) are set in the same commit as the data.

`write_batches` takes a stream of record batches of any length and holds one batch at
a time: each batch becomes a Parquet row group, files roll over at
`Settings.target_file_bytes` on disk, and the data files are committed together in a
single snapshot at the end. If the stream or the commit fails, the files already
written are deleted (best effort) and the table is left exactly as it was.

pyiceberg's own `append(RecordBatchReader)` is not used: it hands every file's batches
to a thread pool up front (memory grows with the input) and sizes files by in-memory
Arrow bytes rather than bytes on disk.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import IO, Any, cast

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    CommitFailedException,
    TableAlreadyExistsError,
    ValidationException,
)
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import (
    ParquetFormatModel,
    _check_pyarrow_schema_compatible,
    _get_parquet_writer_kwargs,
    _to_requested_schema,
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
    pyarrow_to_schema,
    schema_to_pyarrow,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import Schema
from pyiceberg.table import Table, TableProperties, Transaction
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.typedef import Record

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.identity import require
from podium.store.catalog import ensure_namespace, open_catalog, parse_name
from podium.store.modes import WRITE_MODES, WriteMode
from podium.store.plan import warm_after_commit
from podium.store.users import AUTHOR, acting_user, author_name

log = logging.getLogger("podium")

RowsWritten = Callable[[int], None]
REPLACE_ATTEMPTS = 8


def write_table(
    name: str,
    data: pa.Table,
    *,
    mode: WriteMode = "create",
    schema: Schema | None = None,
    properties: Mapping[str, str] | None = None,
    catalog: Catalog | None = None,
    author: str | None = None,
) -> Table:
    """Write `data` to table `name` in one commit and return the table.

    `create` fails if the table exists; `append` and `overwrite` fail if it does not
    (so a typo never silently creates a second table). `schema` fixes field ids and
    docs for new tables; by default the Arrow schema is used.
    """
    return write_batches(
        name,
        data.to_batches(),
        mode=mode,
        schema=schema if schema is not None else data.schema,
        properties=properties,
        catalog=catalog,
        author=author,
    )


def write_batches(
    name: str,
    batches: Iterable[pa.RecordBatch],
    *,
    mode: WriteMode = "create",
    schema: Schema | pa.Schema | None = None,
    properties: Mapping[str, str] | None = None,
    catalog: Catalog | None = None,
    target_file_bytes: int | None = None,
    on_rows: RowsWritten | None = None,
    author: str | None = None,
) -> Table:
    """Stream `batches` into table `name` as several data files and one snapshot.

    Same modes as `write_table`. `schema` is required to create a table from a stream
    that may be empty; otherwise the first batch's schema is used. `on_rows` is called
    with the running row count after each batch (for progress). An exception raised
    by the `batches` iterator (a bad line at 90%) propagates after the written files
    are removed; nothing is committed. The snapshot summary's `podium.author` names
    `author` (default: whoever is acting).
    """
    if mode not in WRITE_MODES:
        raise InvalidInput(f"Unknown write mode {mode!r}; use one of {', '.join(WRITE_MODES)}.")
    catalog = catalog or open_catalog()
    ident = parse_name(name)
    label = ".".join(ident)
    exists = catalog.table_exists(ident)
    props = {k: str(v) for k, v in (properties or {}).items()}
    if mode == "create" and exists:
        raise InvalidInput(f"Table {label} already exists; use --mode append or --mode overwrite.")
    if mode != "create" and not exists:
        raise InvalidInput(f"Table {label} does not exist; use --mode create.")

    stream = iter(batches)
    if schema is None:
        first = next(stream, None)
        if first is None:
            raise InvalidInput(f"Nothing to write to {label}: no rows and no schema.")
        schema = first.schema
        stream = itertools.chain([first], stream)

    new_namespace = False
    txn: Transaction  # a CreateTableTransaction when the table is new
    if mode == "create":
        new_namespace = not catalog.namespace_exists(ident[0])
        ensure_namespace(ident[0], catalog)
        txn = catalog.create_table_transaction(ident, schema=schema, properties=props)
    else:
        txn = catalog.load_table(ident).transaction()
        if props:
            txn.set_properties(props)

    summary = {AUTHOR: author or author_name()}
    writer = _FileWriter(txn, target_file_bytes or get_settings().target_file_bytes)
    try:
        if txn.table_metadata.spec().is_unpartitioned():
            files = writer.write(_prefetched(stream), on_rows)
            _commit_files(txn, files, overwrite=mode == "overwrite", summary=summary)
        else:  # Podium writes no partitioned tables; keep pyiceberg's in-memory path for them
            whole = pa.Table.from_batches(list(stream))
            (txn.overwrite if mode == "overwrite" else txn.append)(
                whole, snapshot_properties=summary
            )
        txn.commit_transaction()
    except TableAlreadyExistsError:
        writer.discard()
        raise InvalidInput(
            f"Table {label} was created by someone else meanwhile; nothing was written. "
            "Use --mode append or --mode overwrite."
        ) from None
    except BaseException:
        writer.discard()
        if new_namespace:
            _drop_empty_namespace(catalog, ident[0])
        raise
    return warm_after_commit(catalog.load_table(ident))


def replace_batches(
    name: str,
    batches: Iterable[pa.RecordBatch],
    *,
    schema: pa.Schema,
    properties: Mapping[str, str] | None = None,
    final_properties: Callable[[], Mapping[str, str]] | None = None,
    may_replace: Callable[[Table], None] | None = None,
    target_file_bytes: int | None = None,
    author: str | None = None,
) -> Table:
    """Create table `name`, or replace all its rows, with `batches`: one snapshot.

    For outputs a run replaces whole (a validation report), where the last writer
    wins. The stream is written once; the commit then retries against whatever is
    current, so two runs replacing one table at the same time each commit a complete
    table (a reader sees one run's rows, never a mix) and no data file is left outside
    it. `final_properties` is called once the stream is consumed (a summary counted
    from it) and set in the same commit; `may_replace` raises to refuse replacing an
    existing table (checked again at every attempt).
    """
    catalog = open_catalog()
    ident = parse_name(name)
    props = {k: str(v) for k, v in (properties or {}).items()}
    new_namespace = not catalog.namespace_exists(ident[0])
    ensure_namespace(ident[0], catalog)
    if catalog.table_exists(ident):
        table = catalog.load_table(ident)
        if may_replace is not None:
            may_replace(table)
        txn = table.transaction()
    else:
        txn = catalog.create_table_transaction(ident, schema=schema)
    summary = {AUTHOR: author or author_name()}
    writer = _FileWriter(txn, target_file_bytes or get_settings().target_file_bytes)
    try:
        files = writer.write(_prefetched(iter(batches)), None)
        if final_properties is not None:
            props.update({k: str(v) for k, v in final_properties().items()})
        for attempt in range(REPLACE_ATTEMPTS):
            try:
                return _replace_once(
                    catalog, ident, schema, writer, files, props, summary, may_replace
                )
            except (TableAlreadyExistsError, CommitFailedException, ValidationException):
                if attempt + 1 == REPLACE_ATTEMPTS:
                    raise InvalidInput(
                        f"Table {'.'.join(ident)} kept changing while this run replaced it; "
                        "nothing was written. Run it again."
                    ) from None
        raise AssertionError("unreachable")
    except BaseException:
        writer.discard()
        if new_namespace:
            _drop_empty_namespace(catalog, ident[0])
        raise


def _replace_once(
    catalog: Catalog,
    ident: tuple[str, str],
    schema: pa.Schema,
    writer: _FileWriter,
    files: list[DataFile],
    props: dict[str, str],
    summary: dict[str, str],
    may_replace: Callable[[Table], None] | None,
) -> Table:
    """One attempt: drop every file live now, add `files`, in one commit."""
    if catalog.table_exists(ident):
        table = catalog.load_table(ident)
        if may_replace is not None:
            may_replace(table)
        if table.schema().as_struct() != writer.file_schema.as_struct():
            raise InvalidInput(
                f"Table {'.'.join(ident)} changed its columns meanwhile; nothing was written."
            )
        # pyiceberg's own retry would keep a concurrent replacer's files beside these;
        # a conflict comes back here instead, to replace whatever is current then.
        txn = _without_commit_retries(table).transaction()
        if props:
            txn.set_properties(props)
    else:
        txn = catalog.create_table_transaction(ident, schema=schema, properties=props)
    _commit_files(txn, files, overwrite=True, summary=summary)
    txn.commit_transaction()
    return warm_after_commit(catalog.load_table(ident))


def _without_commit_retries(table: Table) -> Table:
    properties = {**table.metadata.properties, TableProperties.COMMIT_NUM_RETRIES: "0"}
    metadata = table.metadata.model_copy(update={"properties": properties})
    return Table(table.name(), metadata, table.metadata_location, table.io, table.catalog)


# Row groups of about 2 MiB of Arrow data. A page read decodes one whole row group, so
# its size is what a deep page costs: on 200k rows of ~7.7 KB, groups of ~256 rows
# (2 MiB) against ~2,400 (16 MiB) cut a page at any offset from ~110 to ~23 ms, with
# the same full-scan search time and 1% more bytes on disk (README "Speed").
ROW_GROUP_BYTES = 2 * 2**20


def _group_rows(batch: pa.RecordBatch) -> int:
    rows: int = batch.num_rows
    size: int = batch.nbytes
    return max(1, -(-rows * ROW_GROUP_BYTES // max(1, size)))


class _FileWriter:
    """Parquet data files for one transaction, rolled over at a target size on disk."""

    def __init__(self, txn: Transaction, target_bytes: int) -> None:
        self.meta: TableMetadata = txn.table_metadata
        self.io: FileIO = txn._table.io
        self.target_bytes = max(1, target_bytes)
        self.paths: list[str] = []
        self._uuid = uuid.uuid4()
        self.file_schema = self.meta.schema()
        self._arrow_schema = schema_to_pyarrow(self.file_schema, include_field_ids=True)
        self._locations = load_location_provider(self.meta.location, self.meta.properties)
        self._kwargs = _get_parquet_writer_kwargs(self.meta.properties)
        self._stats_plan = compute_statistics_plan(self.file_schema, self.meta.properties)
        self._id_mapping = parquet_path_to_id_mapping(self.file_schema)

    def write(
        self, batches: Iterator[pa.RecordBatch], on_rows: RowsWritten | None
    ) -> list[DataFile]:
        files: list[DataFile] = []
        task_schema: Schema | None = None
        writer: pq.ParquetWriter | None = None
        out: Any = None
        rows = 0
        for batch in batches:
            if batch.num_rows == 0:
                continue
            if task_schema is None:
                task_schema = self._task_schema(batch.schema)
            if writer is None:
                writer, out = self._open()
            writer.write_batch(
                self._to_file_schema(batch, task_schema), row_group_size=_group_rows(batch)
            )
            rows += batch.num_rows
            if on_rows is not None:
                on_rows(rows)
            if out.tell() >= self.target_bytes:
                files.append(self._close(writer, out))
                writer = out = None
        if writer is not None:
            files.append(self._close(writer, out))
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
            _check_pyarrow_schema_compatible(
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
        projected = _to_requested_schema(
            requested_schema=self.file_schema,
            file_schema=task_schema,
            batch=batch,
            include_field_ids=True,
            format_model=ParquetFormatModel(),
        )
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


_DONE = object()


def _prefetched(batches: Iterator[pa.RecordBatch], depth: int = 2) -> Iterator[pa.RecordBatch]:
    """`batches`, produced in a thread while the caller writes the previous ones.

    Parsing input is Python work and Parquet encoding releases the GIL, so the two
    overlap on two cores; at most `depth` batches wait in between. An exception in
    the producer is raised here, in order.
    """
    ready: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        """Hand `item` over unless the consumer has gone; False when it has."""
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not put(batch):
                    return
            item: Any = _DONE
        except BaseException as exc:  # handed to the consumer, which raises it
            item = exc
        put(item)

    thread = threading.Thread(target=produce, name="podium-write-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            item = ready.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


def _commit_files(
    txn: Transaction, files: list[DataFile], *, overwrite: bool, summary: dict[str, str]
) -> None:
    """Stage one snapshot that adds `files` (and, to overwrite, removes every live file)."""
    if not overwrite:
        with txn.update_snapshot(snapshot_properties=summary).fast_append() as append:
            for data_file in files:
                append.append_data_file(data_file)
        return
    current = txn.table_metadata.current_snapshot()
    with txn.update_snapshot(snapshot_properties=summary).overwrite() as producer:
        if current is not None:
            for manifest in current.manifests(txn._table.io):
                for entry in manifest.fetch_manifest_entry(txn._table.io, discard_deleted=True):
                    if entry.data_file.content == DataFileContent.DATA:
                        producer.delete_data_file(entry.data_file)
        for data_file in files:
            producer.append_data_file(data_file)


def _drop_empty_namespace(catalog: Catalog, namespace: str) -> None:
    try:
        if not catalog.list_tables(namespace):
            catalog.drop_namespace(namespace)
    except Exception as exc:  # leaving an empty namespace behind loses nothing
        log.warning("could not drop namespace %s: %s", namespace, exc)


def set_properties(
    name: str, properties: Mapping[str, str], catalog: Catalog | None = None
) -> None:
    catalog = catalog or open_catalog()
    table = catalog.load_table(parse_name(name))
    with table.transaction() as txn:
        txn.set_properties({k: str(v) for k, v in properties.items()})


def drop_table(name: str, catalog: Catalog | None = None) -> None:
    require(acting_user(), "drop_table")
    catalog = catalog or open_catalog()
    catalog.purge_table(parse_name(name))
