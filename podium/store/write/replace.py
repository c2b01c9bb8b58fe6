"""Replacing a table's rows whole, where the last writer wins (a run's report, a
description): the stream is written once, then the commit retries against whatever is
current, without pyiceberg's own retry (which would keep a concurrent replacer's files
beside these).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import (
    CommitFailedException,
    TableAlreadyExistsError,
    ValidationException,
)
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table, TableProperties

from podium.config import get_settings
from podium.errors import InvalidInput, PodiumError
from podium.store.catalog.catalog import (
    check_unique_name,
    ensure_namespace,
    open_catalog,
    parse_name,
)
from podium.store.catalog.commit_outcome import TOKEN, new_token, settle
from podium.store.read.plan import warm_after_commit
from podium.store.read.prefetch import prefetched
from podium.store.state.users import AUTHOR, author_name
from podium.store.write.file_writer import FileWriter
from podium.store.write.write import commit_files, drop_empty_namespace

REPLACE_ATTEMPTS = 8


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
    exists = catalog.table_exists(ident)
    if not exists:
        check_unique_name(ident, catalog)  # demo.Chat beside demo.chat
    new_namespace = not catalog.namespace_exists(ident[0])
    ensure_namespace(ident[0], catalog)
    if exists:
        table = catalog.load_table(ident)
        if may_replace is not None:
            may_replace(table)
        txn = table.transaction()
    else:
        txn = catalog.create_table_transaction(ident, schema=schema)
    writer = FileWriter(txn, target_file_bytes or get_settings().target_file_bytes)

    def discard() -> None:
        writer.discard()
        if new_namespace:
            drop_empty_namespace(catalog, ident[0])

    try:
        files = writer.write(prefetched(iter(batches)), None)
        if final_properties is not None:
            props.update({k: str(v) for k, v in final_properties().items()})
    except BaseException:
        discard()
        raise
    for attempt in range(REPLACE_ATTEMPTS):
        token = new_token()
        summary = {AUTHOR: author or author_name(), TOKEN: token}
        try:
            _replace_once(catalog, ident, schema, writer, files, props, summary, may_replace)
        except (TableAlreadyExistsError, CommitFailedException, ValidationException):
            if attempt + 1 == REPLACE_ATTEMPTS:
                discard()
                raise InvalidInput(
                    f"Table {'.'.join(ident)} kept changing while this run replaced it; "
                    "nothing was written. Run it again."
                ) from None
            continue
        except PodiumError:
            discard()  # refused before any commit was sent (may_replace, changed columns)
            raise
        except (Exception, KeyboardInterrupt) as exc:
            settle(
                exc,
                token=token,
                reload=lambda: catalog.load_table(ident),
                what=f"replacing {'.'.join(ident)}",
            )
        return warm_after_commit(catalog.load_table(ident))
    raise AssertionError("unreachable")


def _replace_once(
    catalog: Catalog,
    ident: tuple[str, str],
    schema: pa.Schema,
    writer: FileWriter,
    files: list[DataFile],
    props: dict[str, str],
    summary: dict[str, str],
    may_replace: Callable[[Table], None] | None,
) -> None:
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
    commit_files(txn, files, overwrite=True, summary=summary)
    txn.commit_transaction()


def _without_commit_retries(table: Table) -> Table:
    properties = {**table.metadata.properties, TableProperties.COMMIT_NUM_RETRIES: "0"}
    metadata = table.metadata.model_copy(update={"properties": properties})
    return Table(table.name(), metadata, table.metadata_location, table.io, table.catalog)
