"""Files under the warehouse that belong to no table the catalog knows.

A first import SIGKILLed before its first commit (the table is created in that same
commit) leaves its data files under `WAREHOUSE/NS/TABLE/data/` with no catalog row,
so no table-level orphan removal ever sees them; a dropped table leaves all of its files.
`warehouse_orphans` lists such files; `remove_warehouse_orphans` deletes the ones older
than the grace period. File age is the right clock here: no table references these
files, so only a write still in flight (a first import that has not committed yet) could
want them, and its files are young.

Only files laid out as a table's are candidates: Parquet, Avro, ORC, Puffin and
metadata JSON files in `NS/TABLE/data/` or `NS/TABLE/metadata/` (or `NS.db/...`, the
Hive layout) under the warehouse location; anything else there (and the catalog
database, wherever it is) is never touched, nor are shards staged by resumable jobs
(`data/staged-*`, theirs to clean). No file under any table's location is a
candidate, nor any file a table references (`store.maintenance.orphans.take_guard`
reads every table of the catalog, at any namespace depth and under any name); while a
table cannot be read, nothing is deleted. The warehouse is assumed to be this catalog's
alone: a table another catalog keeps in the same warehouse would look like an orphan.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from pyiceberg.io import load_file_io

from podium.config import get_settings
from podium.failpoints import hit
from podium.store.catalog.sqlite_uri import sqlite_file
from podium.store.maintenance.orphans import Guard, take_guard
from podium.store.maintenance.table_files import STAGED_DIR, location_filesystem, normal_path

log = logging.getLogger("podium")

TABLE_FOLDERS = ("data", "metadata")
TABLE_FILES = (".parquet", ".avro", ".orc", ".puffin", ".stats", ".metadata.json", ".json.gz")


@dataclass(frozen=True)
class Orphan:
    path: str  # as the warehouse's FileIO names it
    size: int
    mtime: float


def warehouse_orphans() -> list[Orphan]:
    """Files under the warehouse in a table's layout whose table the catalog does not know;
    InvalidInput when some table of the catalog cannot be read."""
    from pyarrow.fs import FileSelector, FileType

    settings = get_settings()
    io = load_file_io(settings.catalog_properties, settings.warehouse)
    fs, root, prefix = location_filesystem(settings.warehouse, io)
    try:
        infos = fs.get_file_info(FileSelector(root, recursive=True))
    except FileNotFoundError:
        return []
    # Read after the walk: a table committed while it ran is known (its files are young
    # anyway, so the grace period keeps them when it is not forced to zero).
    guard: Guard = take_guard()
    guard.check_readable("the warehouse sweep")
    known = [where for where, _ in guard.locations]
    database = sqlite_file(settings.catalog_uri)
    never = {normal_path(str(database))} if database is not None else set()
    root_path = normal_path(prefix + root).rstrip("/") + "/"
    out = []
    for info in infos:
        if info.type != FileType.File:
            continue
        path = prefix + info.path
        normal = normal_path(path)
        if not normal.startswith(root_path) or normal in never or f"/{STAGED_DIR}" in normal:
            continue
        parts = normal[len(root_path) :].split("/")
        if len(parts) < 4 or parts[2] not in TABLE_FOLDERS or not normal.endswith(TABLE_FILES):
            continue
        if normal in guard.referenced or any(normal.startswith(where) for where in known):
            continue
        mtime = info.mtime.timestamp() if info.mtime is not None else 0.0
        out.append(Orphan(path, int(info.size or 0), mtime))
    return out


def remove_warehouse_orphans(*, grace_s: float, now: float | None = None) -> tuple[int, int]:
    """Delete the warehouse's orphans older than `grace_s`; returns (files, bytes)."""
    settings = get_settings()
    now = time.time() if now is None else now
    doomed = [o for o in warehouse_orphans() if now - o.mtime >= grace_s]
    hit("maintain.orphans.before_delete")
    io = load_file_io(settings.catalog_properties, settings.warehouse)
    files = removed = 0
    for orphan in doomed:
        try:
            io.delete(orphan.path)
        except OSError as exc:
            log.warning("could not remove orphan file %s: %s", orphan.path, exc)
            continue
        files += 1
        removed += orphan.size
    return files, removed
