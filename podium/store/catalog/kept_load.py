"""Loading a table of an SQLite catalog file without reading its metadata file again
while the catalog still names the same one.

A metadata file never changes once written (a commit writes a new one and moves the
catalog's row to it), so its parsed `TableMetadata` (frozen) is kept by location and
every load that finds the row unchanged builds a `Table` around it. The app loads the
page's table and its annotations table on every rerun: pyiceberg's `load_table` over
SQLAlchemy, then the metadata file read and parsed, was 5.3% of the app's samples with
ten sessions (docs/faults.md). The row itself is read each time (one kept connection:
`sqlite_kept`), so a commit by any process is seen at the next load.
"""

from __future__ import annotations

import functools
import sqlite3

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.io import load_file_io
from pyiceberg.serializers import FromInputFile
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata

from podium.config import get_settings, on_settings_reset
from podium.store.catalog.iceberg_internals import catalog_file_io
from podium.store.catalog.sqlite_kept import table_location
from podium.store.catalog.sqlite_uri import plain_sqlite_file


def load_kept(catalog: Catalog, ident: tuple[str, str]) -> Table | None:
    """Table `ident` of `catalog` (the settings' own) at the location its row names, its
    metadata parsed once per location. Raises `NoSuchTableError` when the catalog has no
    such row; None when it is not an SQLite file or cannot be read (the caller then
    loads it through pyiceberg, whose errors say why)."""
    settings = get_settings()
    uri = settings.catalog_uri
    database = plain_sqlite_file(uri)
    if database is None:
        return None  # PostgreSQL and REST: a connection per read would cost more
    try:
        location = table_location(database, settings.catalog_name, *ident)
    except (OSError, sqlite3.Error):
        return None  # pyiceberg's own load says what is wrong
    if location is None:  # Browse asks for a report that is not there on every rerun
        raise NoSuchTableError(f"Table does not exist: {'.'.join(ident)}")
    properties = tuple(sorted(catalog.properties.items()))
    metadata = _metadata_at(uri, location, properties)
    return Table(
        identifier=ident,
        metadata=metadata,
        metadata_location=location,
        io=catalog_file_io(catalog, metadata.properties, location),
        catalog=catalog,
    )


@functools.lru_cache(maxsize=64)
def _metadata_at(uri: str, location: str, properties: tuple[tuple[str, str], ...]) -> TableMetadata:
    io = load_file_io(properties=dict(properties), location=location)
    return FromInputFile.table_metadata(io.new_input(location))


on_settings_reset(_metadata_at.cache_clear)
