"""Writing Arrow data into Iceberg tables: streamed into many files, one atomic commit.

Every write is one Iceberg commit: a table being created appears only with its first
rows (`create_table_transaction`), and appends and overwrites either land whole or not
at all. Properties (kind, lineage) are set in the same commit as the data.

`write_batches` takes a stream of record batches of any length and holds one batch at
a time: batches are written as ~2 MiB row groups (`file_writer`), files roll over at
`Settings.target_file_bytes` on disk, and the data files are committed together in a
single snapshot at the end. If the stream fails or the catalog refuses the commit, the
files already written are deleted (best effort) and the table is left exactly as it
was; after an error of unknown outcome the table is checked (`commit_outcome`): a commit
that landed is a success, one that did not leaves its files to orphan removal.

pyiceberg's own `append(RecordBatchReader)` is not used: it hands every file's batches
to a thread pool up front (memory grows with the input) and sizes files by in-memory
Arrow bytes rather than bytes on disk.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Literal

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    TableAlreadyExistsError,
)
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.schema import Schema
from pyiceberg.table import Table, Transaction

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.identity import require
from podium.store.catalog.catalog import (
    check_unique_name,
    ensure_namespace,
    load_or_none,
    open_catalog,
    parse_name,
)
from podium.store.catalog.commit_outcome import TOKEN, commit_checked, new_token
from podium.store.catalog.iceberg_internals import transaction_io
from podium.store.read.plan import warm_after_commit
from podium.store.read.prefetch import prefetched
from podium.store.state.users import AUTHOR, acting_user, author_name
from podium.store.write.file_writer import FileWriter, RowsWritten
from podium.store.write.modes import WRITE_MODES, WriteMode

log = logging.getLogger("podium")


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
    `author` (default: whoever is acting). A caller holding the table already writes
    to it with `write_into`.
    """
    if mode not in WRITE_MODES:
        raise InvalidInput(f"Unknown write mode {mode!r}; use one of {', '.join(WRITE_MODES)}.")
    catalog = catalog or open_catalog()
    ident = parse_name(name)
    label = ".".join(ident)
    table = load_or_none(name, catalog)
    if mode == "create" and table is not None:
        raise InvalidInput(f"Table {label} already exists; use --mode append or --mode overwrite.")
    if mode != "create" and table is None:
        raise InvalidInput(f"Table {label} does not exist; use --mode create.")
    if table is None:  # only a new table can clash (and the lean one-shot path stays lean)
        check_unique_name(ident, catalog)  # demo.Chat beside demo.chat

    stream = iter(batches)
    if schema is None:
        first = next(stream, None)
        if first is None:
            raise InvalidInput(f"Nothing to write to {label}: no rows and no schema.")
        schema = first.schema
        stream = itertools.chain([first], stream)
    if table is None:
        return _create(
            catalog,
            ident,
            stream,
            schema=schema,
            properties=properties,
            target_file_bytes=target_file_bytes,
            on_rows=on_rows,
            author=author,
        )
    return write_into(
        table,
        stream,
        mode="overwrite" if mode == "overwrite" else "append",
        properties=properties,
        target_file_bytes=target_file_bytes,
        on_rows=on_rows,
        author=author,
    )


def create_batches(
    name: str,
    batches: Iterable[pa.RecordBatch],
    *,
    schema: Schema | pa.Schema,
    properties: Mapping[str, str] | None = None,
    catalog: Catalog | None = None,
    target_file_bytes: int | None = None,
    on_rows: RowsWritten | None = None,
    author: str | None = None,
) -> Table:
    """Create table `name` with `batches` as its first snapshot, for a caller that has
    just found it missing (one load, not a second to check): a table created meanwhile
    by someone else is refused at the commit, with nothing written."""
    catalog = catalog or open_catalog()
    ident = parse_name(name)
    check_unique_name(ident, catalog)  # demo.Chat beside demo.chat
    return _create(
        catalog,
        ident,
        iter(batches),
        schema=schema,
        properties=properties,
        target_file_bytes=target_file_bytes,
        on_rows=on_rows,
        author=author,
    )


def write_into(
    table: Table,
    batches: Iterable[pa.RecordBatch],
    *,
    mode: Literal["append", "overwrite"] = "append",
    properties: Mapping[str, str] | None = None,
    target_file_bytes: int | None = None,
    on_rows: RowsWritten | None = None,
    author: str | None = None,
) -> Table:
    """Append `batches` to (or overwrite with them) a table the caller has loaded, as
    `write_batches` does, and return it at its new snapshot: pyiceberg's commit updates
    the loaded table in place, so nothing is loaded again."""
    txn = table.transaction()
    if properties:
        txn.set_properties({k: str(v) for k, v in properties.items()})
    ident = table.name()
    return _write_and_commit(
        txn,
        iter(batches),
        overwrite=mode == "overwrite",
        reload=table.refresh,  # on an unknown outcome: the caller's table, checked
        discard_more=lambda: None,
        label=".".join(ident),
        target_file_bytes=target_file_bytes,
        on_rows=on_rows,
        author=author,
    )


def _create(
    catalog: Catalog,
    ident: tuple[str, str],
    stream: Iterator[pa.RecordBatch],
    *,
    schema: Schema | pa.Schema,
    properties: Mapping[str, str] | None,
    target_file_bytes: int | None,
    on_rows: RowsWritten | None,
    author: str | None,
) -> Table:
    props = {k: str(v) for k, v in (properties or {}).items()}
    new_namespace = not catalog.namespace_exists(ident[0])
    ensure_namespace(ident[0], catalog)
    txn = catalog.create_table_transaction(ident, schema=schema, properties=props)

    def drop_namespace() -> None:
        if new_namespace:
            drop_empty_namespace(catalog, ident[0])

    try:
        return _write_and_commit(
            txn,
            stream,
            overwrite=False,
            reload=lambda: catalog.load_table(ident),
            discard_more=drop_namespace,
            label=".".join(ident),
            target_file_bytes=target_file_bytes,
            on_rows=on_rows,
            author=author,
        )
    except TableAlreadyExistsError:
        raise InvalidInput(
            f"Table {'.'.join(ident)} was created by someone else meanwhile; nothing was "
            "written. Use --mode append or --mode overwrite."
        ) from None


def _write_and_commit(
    txn: Transaction,
    stream: Iterator[pa.RecordBatch],
    *,
    overwrite: bool,
    reload: Callable[[], Table],
    discard_more: Callable[[], None],
    label: str,
    target_file_bytes: int | None,
    on_rows: RowsWritten | None,
    author: str | None,
) -> Table:
    """Write `stream` as files staged in `txn` (a table's or a new table's) and commit
    them as one snapshot; the table at that snapshot, warmed for the next read."""
    token = new_token()
    summary = {AUTHOR: author or author_name(), TOKEN: token}
    writer = FileWriter(txn, target_file_bytes or get_settings().target_file_bytes)

    def discard() -> None:
        writer.discard()
        discard_more()

    try:
        if txn.table_metadata.spec().is_unpartitioned():
            files = writer.write(prefetched(stream), on_rows)
            commit_files(txn, files, overwrite=overwrite, summary=summary)
        else:  # Podium writes no partitioned tables; keep pyiceberg's in-memory path for them
            whole = pa.Table.from_batches(list(stream))
            (txn.overwrite if overwrite else txn.append)(whole, snapshot_properties=summary)
    except BaseException:
        discard()  # nothing was sent to the catalog: the files are certainly no one's
        raise
    committed: list[Table] = []
    settled = commit_checked(
        lambda: committed.append(txn.commit_transaction()),
        token=token,
        reload=reload,
        discard=discard,
        what=f"writing {label}",
    )
    return warm_after_commit(settled if settled is not None else _plain(committed[0]))


def _plain(table: Table) -> Table:
    """A committed table as a plain `Table` (a new table's commit returns pyiceberg's
    `StagedTable`, which cannot be refreshed or scanned like a loaded one)."""
    return Table(table.name(), table.metadata, table.metadata_location, table.io, table.catalog)


def commit_files(
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
            io = transaction_io(txn)
            for manifest in current.manifests(io):
                for entry in manifest.fetch_manifest_entry(io, discard_deleted=True):
                    if entry.data_file.content == DataFileContent.DATA:
                        producer.delete_data_file(entry.data_file)
        for data_file in files:
            producer.append_data_file(data_file)


def drop_empty_namespace(catalog: Catalog, namespace: str) -> None:
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


def remove_properties(name: str, keys: Sequence[str], catalog: Catalog | None = None) -> None:
    catalog = catalog or open_catalog()
    table = catalog.load_table(parse_name(name))
    with table.transaction() as txn:
        txn.remove_properties(*keys)


def drop_table(name: str, catalog: Catalog | None = None) -> None:
    require(acting_user(), "drop_table")
    catalog = catalog or open_catalog()
    catalog.purge_table(parse_name(name))
