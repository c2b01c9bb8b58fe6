"""Guarded DuckDB connections: each may read the planned data files and nothing else
(`allowed_paths` with external access disabled, then the configuration locked), so a
user's `--where` or `podium sql` cannot read other files on the machine; and the SQL
quoting for what views cannot take as parameters.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from podium.store.private_tmp import private_dir
from podium.store.read.file_plan import FilePlan
from podium.store.read.kept import Kept

if TYPE_CHECKING:
    import duckdb


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def literal(text: str) -> str:
    """A SQL string literal (views cannot take parameters; '' is the only escape)."""
    return "'" + text.replace("'", "''") + "'"


def connect(
    paths: Iterable[str] = (), *, memory_limit: str | None = None, threads: int | None = None
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection that can read `paths` and no other file, settings locked."""
    import duckdb

    con = duckdb.connect()
    # Spills (a query over its memory cap) go to a directory only this user can read.
    con.execute("SET temp_directory = $1", [str(private_dir("duckdb"))])
    allowed = sorted(set(paths))
    if allowed:
        con.execute("SET allowed_paths = $1", [allowed])
    con.execute("SET enable_external_access = false")
    if memory_limit:
        con.execute("SET memory_limit = $1", [memory_limit])
    if threads:
        con.execute("SET threads = $1", [threads])
    con.execute("SET lock_configuration = true")
    return con


# DuckDB databases kept by what they may read and their settings. Opening one costs
# ~10-75 ms (most of it DuckDB's own start), a connection to a kept one ~1-2 ms: ten
# Browse sessions spent 13% of the app's time opening databases for the same snapshots
# (py-spy, 2026-12-02). The settings are the database's and locked, so a connection to
# it can read these paths and nothing else, as one from `connect`.
_databases: Kept[tuple[Any, ...], duckdb.DuckDBPyConnection] = Kept(16)
_cursor_lock = threading.Lock()


def connect_plans(
    plans: Sequence[FilePlan], *, shared: bool = True, **settings: str | int | None
) -> duckdb.DuckDBPyConnection:
    """A connection that can read the plans' local files and no other file.

    `shared`: a new connection to a database kept for these files and settings, whose
    views and registered tables are its own only if TEMP (what `register_snapshot`
    makes without a `schema`); `shared=False` opens a database of its own."""
    paths = sorted({f.local_path for p in plans if p.direct for f in p.files if f.local_path})
    if not shared:
        return connect(paths, **settings)  # type: ignore[arg-type]
    key = (tuple(paths), tuple(sorted(settings.items())))
    base = _databases.get(key, lambda: connect(paths, **settings))  # type: ignore[arg-type]
    with _cursor_lock:  # one DuckDB connection object is not for threads at once
        return base.cursor()
