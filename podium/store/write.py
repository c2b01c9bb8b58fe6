"""Writing Arrow data into Iceberg tables, atomically.

Every write is one Iceberg commit: a table being created appears only with its first
rows (`create_table_transaction`), and appends and overwrites either land whole or not
at all. Properties (kind, lineage) are set in the same commit as the data.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
from pyiceberg.catalog import Catalog
from pyiceberg.schema import Schema
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.store.catalog import ensure_namespace, open_catalog, parse_name
from podium.store.modes import WRITE_MODES, WriteMode


def write_table(
    name: str,
    data: pa.Table,
    *,
    mode: WriteMode = "create",
    schema: Schema | None = None,
    properties: Mapping[str, str] | None = None,
    catalog: Catalog | None = None,
) -> Table:
    """Write `data` to table `name` in one commit and return the table.

    `create` fails if the table exists; `append` and `overwrite` fail if it does not
    (so a typo never silently creates a second table). `schema` fixes field ids and
    docs for new tables; by default the Arrow schema is used.
    """
    if mode not in WRITE_MODES:
        raise InvalidInput(f"Unknown write mode {mode!r}; use one of {', '.join(WRITE_MODES)}.")
    catalog = catalog or open_catalog()
    ident = parse_name(name)
    exists = catalog.table_exists(ident)
    props = {k: str(v) for k, v in (properties or {}).items()}
    if mode == "create":
        if exists:
            raise InvalidInput(
                f"Table {'.'.join(ident)} already exists; use --mode append or --mode overwrite."
            )
        ensure_namespace(ident[0], catalog)
        txn = catalog.create_table_transaction(
            ident, schema=schema if schema is not None else data.schema, properties=props
        )
        txn.append(data)
        txn.commit_transaction()
        return catalog.load_table(ident)
    if not exists:
        raise InvalidInput(f"Table {'.'.join(ident)} does not exist; use --mode create.")
    table = catalog.load_table(ident)
    with table.transaction() as txn:
        if props:
            txn.set_properties(props)
        if mode == "append":
            txn.append(data)
        else:
            txn.overwrite(data)
    return catalog.load_table(ident)


def set_properties(
    name: str, properties: Mapping[str, str], catalog: Catalog | None = None
) -> None:
    catalog = catalog or open_catalog()
    table = catalog.load_table(parse_name(name))
    with table.transaction() as txn:
        txn.set_properties({k: str(v) for k, v in properties.items()})


def drop_table(name: str, catalog: Catalog | None = None) -> None:
    catalog = catalog or open_catalog()
    catalog.purge_table(parse_name(name))
