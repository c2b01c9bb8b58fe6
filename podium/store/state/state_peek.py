"""Asking the state database whether a row exists, without SQLAlchemy, when it is the
embedded SQLite file: so a one-row CLI write can skip work that has nothing to do
(marking a labelled row reviewed in a table with no review queue) instead of importing
SQLAlchemy (~0.3 s of CPU) and running migrations to learn that.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence

from podium.config import get_settings
from podium.store.catalog.sqlite_uri import sqlite_file


def may_hold_rows(sql: str, params: Sequence[object]) -> bool:
    """False only when the state database is an SQLite file and `sql` finds no row there
    (or its table does not exist yet: no migration made it, so nothing was written).
    True when it finds one, and whenever it cannot tell cheaply (another database, a
    busy or damaged file): the caller then does the work as usual."""
    database = sqlite_file(get_settings().catalog_uri)
    if database is None or not database.is_file():
        return True
    try:
        uri = database.resolve().as_uri() + "?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
            return conn.execute(sql, tuple(params)).fetchone() is not None
    except sqlite3.OperationalError as exc:
        return not str(exc).startswith("no such table")
    except (OSError, sqlite3.Error):
        return True
