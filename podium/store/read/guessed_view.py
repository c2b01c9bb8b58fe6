"""A page read from the table's last seen metadata while the catalog is asked for the
current one, and answered only if the catalog names that same metadata.

A cold page on a PostgreSQL catalog asks the database for the table's metadata location
(the plan cache's key, `store.catalog.names.metadata_location`) before it can read: a
connection and a query, 3-290 ms of a cold command here as the load went from 5 to 18, in
series with the page's GET. The location changes only with a commit, so the read starts
from the location this home last found current (`plan_cache.last_seen`) while a thread
asks the catalog. If the catalog names that location, the page read is the very one the
plain path makes (the same cache entry, so the same plan and rows); if not (a commit
from any process since, a catalog that cannot be read cheaply), the guess is thrown away
and the page is read at the location the catalog gave. A guess is never an answer by
itself: a stale one costs one wasted read, never stale rows.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from podium.config import get_settings
from podium.store.catalog.names import metadata_location
from podium.store.catalog.sqlite_uri import sqlite_file
from podium.store.read import plan_cache
from podium.store.read.snapshot_view import SnapshotView, view_of


@dataclass
class Guess:
    view: SnapshotView  # the snapshot as the last seen metadata describes it
    location: str  # that metadata's location
    _parts: tuple[str, str]
    _answer: list[str | None] = field(default_factory=list)
    _asking: threading.Thread | None = None

    def ask(self) -> None:
        """Ask the catalog for the current location: on a thread of its own for a
        database across a connection, on this one for an SQLite file. Its row is read in
        well under a millisecond, and in an app serving ten sessions a thread's start
        waited for the interpreter's lock: 3.7% of the app's samples (docs/faults.md)."""
        if sqlite_file(get_settings().catalog_uri) is not None:
            self._ask()
            return
        self._asking = threading.Thread(target=self._ask, name="podium-location", daemon=True)
        self._asking.start()

    def _ask(self) -> None:
        try:
            self._answer.append(metadata_location(*self._parts))
        except Exception:  # noqa: BLE001 - any failure is "not confirmed": the plain path
            self._answer.append(None)  # then asks again and reports it

    def answer(self) -> str | None:
        """The catalog's current location (None: it could not be read cheaply)."""
        if self._asking is not None:
            self._asking.join()
        return self._answer[0] if self._answer else None

    @property
    def confirmed(self) -> bool:
        return self.answer() == self.location


def guess_view(name: str, snapshot_id: int | str | None) -> Guess | None:
    """The snapshot as the last seen metadata of `name` describes it, with the catalog
    being asked whether that metadata is still current; None when nothing was seen or
    cached (the caller then opens the view the plain way)."""
    sid = plan_cache.snapshot_number(snapshot_id)
    parts = plan_cache.table_parts(name)
    if sid is False or parts is None:
        return None
    table = ".".join(parts)
    last = plan_cache.last_seen(table)
    cached = plan_cache.lookup(table, last, sid) if last else None
    if last is None or cached is None:
        return None
    guess = Guess(view_of(None, cached.plan, cached.mapping), last, parts)
    guess.ask()
    return guess
