"""Orphan removal that never deletes a file another table needs.

A table's folder may hold another table: one another engine made at `LOCATION/inner`,
or every table of a namespace when a table's location is the namespace's folder; and a
table may reference files under another's location (`add_files`, a registered copy).
So before anything is deleted the whole catalog is read (`take_guard`: every table at
any namespace depth, under any name, with its location and every file it references),
and orphan removal of a table:
- deletes no file that any table of the catalog references;
- sweeps no folder that is another table's location (a table sharing its location with
  another is not swept at all), nor one that holds the warehouse root, Podium's home or
  its catalog database (a table located there is not swept at all);
- deletes nothing while some table cannot be read (its metadata gone or corrupt): which
  files that table needs is unknown, and a restored metadata file would need them all.
Files staged by resumable jobs (`data/staged-*`) are theirs to clean. Only files older
than the grace period go, so a write in flight keeps its files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from pyiceberg.table import Table

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.failpoints import hit
from podium.store.catalog.catalog import load_table, open_catalog
from podium.store.catalog.every_table import every_table
from podium.store.catalog.sqlite_uri import sqlite_file
from podium.store.maintenance.table_files import (
    STAGED_DIR,
    normal_path,
    referenced_files,
    walk_files,
)

log = logging.getLogger("podium")


def folder(location: str) -> str:
    """A location as compared: scheme-less, with one trailing '/' (so `t` is not `t2`)."""
    return normal_path(location).rstrip("/") + "/"


@dataclass(frozen=True)
class Guard:
    """What no orphan removal may delete, read from the whole catalog at one moment."""

    locations: tuple[tuple[str, str], ...]  # (folder(location), table name) of each table
    referenced: frozenset[str]  # normal paths of every file any table references
    unreadable: dict[str, str] = field(default_factory=dict)  # table name -> why
    podiums_own: tuple[tuple[str, str], ...] = ()  # (normal path, what): home, catalog file

    def check_readable(self, what: str) -> None:
        """InvalidInput naming every unreadable table, when there is one."""
        if not self.unreadable:
            return
        tables = "; ".join(f"{name} ({why})" for name, why in sorted(self.unreadable.items()))
        raise InvalidInput(
            f"{what} skipped, nothing deleted: the catalog lists tables that cannot be read, "
            f"so which files they need is unknown: {tables}. Restore their metadata (or "
            "drop them from the catalog), then run maintain again."
        )

    def others_under(self, location: str, name: str) -> list[tuple[str, str]]:
        """(folder, table) of every other table whose location lies in `location`."""
        return [
            (where, other)
            for where, other in self.locations
            if other != name and where.startswith(location)
        ]


def take_guard() -> Guard:
    """Every table's location and referenced files, and which tables cannot be read."""
    catalog = open_catalog()
    locations: list[tuple[str, str]] = []
    referenced: set[str] = set()
    unreadable: dict[str, str] = {}
    for entry in every_table(catalog):
        if entry.table is None:
            unreadable[entry.name] = entry.problem
            continue
        try:
            needs = referenced_files(entry.table)
        except Exception as exc:  # noqa: BLE001 - a manifest gone or corrupt: unreadable
            unreadable[entry.name] = f"{type(exc).__name__}: {exc}".splitlines()[0]
            continue
        locations.append((folder(entry.table.metadata.location), entry.name))
        referenced.update(normal_path(p) for p in needs)
    return Guard(tuple(locations), frozenset(referenced), unreadable, _podiums_own())


def _podiums_own() -> tuple[tuple[str, str], ...]:
    settings = get_settings()
    own = [
        (folder(str(settings.home)), "Podium's home (settings, secrets, state)"),
        (folder(settings.warehouse), "the warehouse root (every table's folder)"),
    ]
    database = sqlite_file(settings.catalog_uri)
    if database is not None:
        own.append((normal_path(str(database)), "the catalog database"))
    return tuple(own)


def sweepable(table: Table, name: str, guard: Guard) -> Iterator[tuple[str, int, float]]:
    """(path, size, mtime) of the files under the table's location that no table needs
    and no other table's folder holds; InvalidInput when its folder may not be swept."""
    guard.check_readable(f"orphan removal of {name}")
    location = folder(table.metadata.location)
    for path, what in guard.podiums_own:
        if path.startswith(location):
            raise InvalidInput(
                f"orphan removal of {name} skipped, nothing deleted: its location "
                f"{table.metadata.location} holds {what}. Move the table elsewhere."
            )
    nested = guard.others_under(location, name)
    for where, other in nested:
        if where == location:
            raise InvalidInput(
                f"orphan removal of {name} skipped, nothing deleted: table {other} has the "
                f"same location ({table.metadata.location}), so a file one of them does "
                "not name may be the other's write in flight."
            )
    needed = guard.referenced | {normal_path(p) for p in referenced_files(table)}
    for path, size, mtime in walk_files(table):
        normal = normal_path(path)
        if normal in needed or f"/{STAGED_DIR}" in path:
            continue
        if any(normal.startswith(where) for where, _ in nested):
            continue  # another table's folder: that table's to clean
        yield path, size, mtime


def remove_orphans(
    name: str, *, grace_s: float, now: float | None = None, guard: Guard | None = None
) -> tuple[int, int]:
    """Delete `name`'s unreferenced files older than `grace_s` (see the module's rules);
    returns (files, bytes) removed. `guard` is taken now when not given."""
    table = load_table(name)
    guard = guard or take_guard()
    now = time.time() if now is None else now
    orphans = [
        (p, size) for p, size, mtime in sweepable(table, name, guard) if now - mtime >= grace_s
    ]
    hit("maintain.orphans.before_delete")
    files = removed_bytes = 0
    for path, size in orphans:
        try:
            table.io.delete(path)
        except OSError as exc:
            log.warning("could not remove orphan file %s: %s", path, exc)
            continue
        files += 1
        removed_bytes += size
    return files, removed_bytes


def unreferenced_files(name: str, guard: Guard | None = None) -> list[str]:
    """Files under the table's location that orphan removal would delete, whatever their
    age."""
    return [p for p, _, _ in sweepable(load_table(name), name, guard or take_guard())]
