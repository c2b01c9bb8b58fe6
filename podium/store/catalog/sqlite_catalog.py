"""pyiceberg's SQL catalog on an SQLite file, loading and committing tables without
SQLAlchemy, for one-shot commands that load a table and commit to it once.

Importing SQLAlchemy (pyiceberg's `SqlCatalog` declares its tables with the ORM) costs a
cold `podium edit` ~0.4 s of CPU, more than the edit itself. Loading a table is one
`SELECT metadata_location` and committing one is one compare-and-swap `UPDATE` of that
row, so for an SQLite catalog file this class runs exactly `SqlCatalog`'s statements
with the standard library's sqlite3: the same row filter (a v1 catalog's tables only,
`iceberg_type` 'TABLE' or NULL), the same metadata file written first, and the same
`CommitFailedException` when another writer moved the table in between. Everything
else (creating tables and namespaces, listing, dropping, a commit that creates a
table, a catalog file whose tables do not exist yet) goes to a real `SqlCatalog`,
opened on first need. `tests/store/test_sqlite_catalog.py` holds it to `SqlCatalog`, and
`tests/store/test_lean_catalog_pinned.py` to the statements pyiceberg runs.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import CommitFailedException, NoSuchTableError
from pyiceberg.io import load_file_io
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import CommitTableResponse, Table

from podium.failpoints import hit
from podium.store.catalog.commit_outcome import note_landed, stale_plans_refused
from podium.store.catalog.iceberg_internals import StagingCatalog

if TYPE_CHECKING:
    from pyiceberg.table.update import TableRequirement, TableUpdate
    from pyiceberg.typedef import Identifier

_TABLE_TYPE = "TABLE"  # pyiceberg.catalog.sql.ICEBERG_TABLE_TYPE
# SqlCatalog's statements, as SQLAlchemy compiles them for SQLite (less the columns a load
# does not read); tests/store/test_lean_catalog_pinned.py fails when pyiceberg's differ.
LOAD_SQL = (
    "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? "
    "AND table_namespace = ? AND table_name = ?"
)
TABLE_TYPE_FILTER_SQL = " AND (iceberg_type = ? OR iceberg_type IS NULL)"
COMMIT_SQL = (
    "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
    "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? "
    "AND metadata_location = ?"
)
_TIMEOUT_S = 5.0  # SQLAlchemy's pysqlite default, which SqlCatalog's engine uses


class LeanSqliteCatalog(StagingCatalog):
    """`SqlCatalog`'s `load_table` and `commit_table` on an SQLite file via sqlite3;
    every other method is the real `SqlCatalog`'s (`full()`)."""

    def __init__(
        self, name: str, database: Path, full: Callable[[], Catalog], **properties: str
    ) -> None:
        super().__init__(name, **properties)
        self._database = database
        self._full_factory = full
        self._full: Catalog | None = None

    def full(self) -> Catalog:
        """The real `SqlCatalog` (imports SQLAlchemy; creates the catalog tables if new)."""
        if self._full is None:
            self._full = self._full_factory()
        return self._full

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self._database, timeout=_TIMEOUT_S)

    def _row(self, namespace: str, table_name: str) -> tuple[bool, Any]:
        """(catalog tables exist, the table's metadata_location row or None)."""
        if not self._database.is_file():
            return False, None
        with contextlib.closing(self._connect()) as conn:
            columns = {r[1] for r in conn.execute("PRAGMA table_info(iceberg_tables)")}
            if not columns:
                return False, None
            if "iceberg_type" in columns:  # a v1 catalog: views are rows too
                sql = LOAD_SQL + TABLE_TYPE_FILTER_SQL
                params: tuple[str, ...] = (self.name, namespace, table_name, _TABLE_TYPE)
            else:
                sql, params = LOAD_SQL, (self.name, namespace, table_name)
            return True, conn.execute(sql, params).fetchone()

    def load_table(self, identifier: str | Identifier) -> Table:
        namespace = Catalog.namespace_to_string(Catalog.namespace_from(identifier))
        table_name = Catalog.table_name_from(identifier)
        ready, row = self._row(namespace, table_name)
        if not ready:
            return self.full().load_table(identifier)
        if row is None:
            raise NoSuchTableError(f"Table does not exist: {namespace}.{table_name}")
        metadata_location = row[0]
        if not metadata_location:
            raise NoSuchTableError("Table property metadata_location is missing")
        io = load_file_io(properties=self.properties, location=metadata_location)
        metadata = FromInputFile.table_metadata(io.new_input(metadata_location))
        return Table(
            identifier=Catalog.identifier_to_tuple(namespace) + (table_name,),
            metadata=metadata,
            metadata_location=metadata_location,
            io=self.file_io_for(metadata.properties, metadata_location),
            catalog=self,
        )

    def commit_table(
        self,
        table: Table,
        requirements: tuple[TableRequirement, ...],
        updates: tuple[TableUpdate, ...],
    ) -> CommitTableResponse:
        identifier = table.name()
        namespace = Catalog.namespace_to_string(Catalog.namespace_from(identifier))
        table_name = Catalog.table_name_from(identifier)
        try:
            current = self.load_table(identifier)
        except NoSuchTableError:
            return self.full().commit_table(table, requirements, updates)  # creates the row
        with stale_plans_refused():
            staged = self.stage_update(current, identifier, requirements, updates)
        if staged.metadata == current.metadata:
            return CommitTableResponse(
                metadata=current.metadata, metadata_location=current.metadata_location
            )
        hit("commit.before")
        self.write_metadata_file(staged.metadata, staged.io, staged.metadata_location)
        with contextlib.closing(self._connect()) as conn, conn:
            moved = conn.execute(
                COMMIT_SQL,
                (
                    staged.metadata_location,
                    current.metadata_location,
                    self.name,
                    namespace,
                    table_name,
                    current.metadata_location,
                ),
            )
            if moved.rowcount < 1:
                raise CommitFailedException(
                    f"Table has been updated by another process: {namespace}.{table_name}"
                )
        note_landed(f"{namespace}.{table_name}", updates)
        hit("commit.after")
        return CommitTableResponse(
            metadata=staged.metadata, metadata_location=staged.metadata_location
        )

    # Everything else is SqlCatalog's: what a one-row write never does.

    def close(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().close(*args, **kwargs)

    def create_namespace(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().create_namespace(*args, **kwargs)

    def create_table(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().create_table(*args, **kwargs)

    def drop_namespace(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().drop_namespace(*args, **kwargs)

    def drop_table(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().drop_table(*args, **kwargs)

    def drop_view(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().drop_view(*args, **kwargs)

    def list_namespaces(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().list_namespaces(*args, **kwargs)

    def list_tables(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().list_tables(*args, **kwargs)

    def list_views(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().list_views(*args, **kwargs)

    def load_namespace_properties(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().load_namespace_properties(*args, **kwargs)

    def load_view(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().load_view(*args, **kwargs)

    def namespace_exists(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().namespace_exists(*args, **kwargs)

    def register_table(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().register_table(*args, **kwargs)

    def register_view(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().register_view(*args, **kwargs)

    def rename_table(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().rename_table(*args, **kwargs)

    def update_namespace_properties(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().update_namespace_properties(*args, **kwargs)

    def view_exists(self, *args: Any, **kwargs: Any) -> Any:
        return self.full().view_exists(*args, **kwargs)
