"""One read-only connection per SQLite catalog file, kept for the process's life.

`metadata_location` asks an SQLite catalog for one row, twice a page and on every table
load in the app; opening a connection per call (the file opened, its schema parsed)
was 4.7% of the app's samples with ten sessions (docs/faults.md). A kept connection
still sees every commit: outside a transaction each SELECT reads the database as it
is. It is opened again when the file is replaced (another inode: a new home at the same
path) or in a forked child, and used by one thread at a time.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from podium.config import on_settings_reset

LOCATION_SQL = (
    "SELECT metadata_location FROM iceberg_tables "
    "WHERE catalog_name = :catalog AND table_namespace = :namespace AND table_name = :name"
)

_lock = threading.Lock()
# file -> (pid, (device, inode), connection)
_kept: dict[Path, tuple[int, tuple[int, int], sqlite3.Connection]] = {}
_MAX_FILES = 8  # one catalog per home; tests open many homes in one process
_opened = 0


def opened_count() -> int:
    """Connections opened so far in this process (what the tests count)."""
    return _opened


def fetch_all(
    database: Path, sql: str, params: dict[str, str] | tuple[str, ...]
) -> list[tuple[Any, ...]]:
    """`sql`'s rows on `database`, read only. Raises `OSError` when the file is missing
    and `sqlite3.Error` as sqlite3 does."""
    identity = database.stat()
    key = (identity.st_dev, identity.st_ino)
    with _lock:
        conn = _connection(database, key)
        try:
            rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
        except sqlite3.Error:
            _drop(database)  # the next call starts from a fresh connection
            raise
    return rows


def table_location(database: Path, catalog: str, namespace: str, table: str) -> str | None:
    """Table `namespace.table`'s metadata location in catalog file `database`, None when
    the catalog has no such table. Raises as `fetch_all`."""
    params = {"catalog": catalog, "namespace": namespace, "name": table}
    rows = fetch_all(database, LOCATION_SQL, params)
    return str(rows[0][0]) if rows and rows[0][0] else None


def location_in(database: Path, catalog: str, namespace: str, table: str) -> str | None:
    """`table_location`, or None also when it cannot be read (no catalog tables yet, the
    file missing or busy)."""
    try:
        return table_location(database, catalog, namespace, table)
    except (OSError, sqlite3.Error):
        return None


def _connection(database: Path, key: tuple[int, int]) -> sqlite3.Connection:
    global _opened
    kept = _kept.get(database)
    if kept is not None and kept[0] == os.getpid() and kept[1] == key:
        return kept[2]
    _drop(database)
    uri = database.resolve().as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=5, check_same_thread=False)
    _opened += 1
    if len(_kept) >= _MAX_FILES:
        _drop(next(iter(_kept)))
    _kept[database] = (os.getpid(), key, conn)
    return conn


def _drop(database: Path) -> None:
    kept = _kept.pop(database, None)
    if kept is not None and kept[0] == os.getpid():
        kept[2].close()


def _drop_all() -> None:
    with _lock:
        for database in list(_kept):
            _drop(database)


on_settings_reset(_drop_all)  # a test's home goes; its file's connection with it
