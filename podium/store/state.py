"""The SQL database that holds app state beside the Iceberg catalog.

Jobs, checkpoints, servers and vote indexes live in ordinary SQL tables in the same
database as the catalog, so one URL configures a deployment. Each package declares its
tables on `METADATA`; `engine()` creates whatever is missing.
"""

from __future__ import annotations

import functools
import threading

from sqlalchemy import Engine, MetaData, create_engine, event
from sqlalchemy.exc import OperationalError, ProgrammingError

from podium.config import Settings, get_settings

METADATA = MetaData()


@functools.cache
def _engine_for(uri: str) -> Engine:
    if uri.startswith("sqlite"):
        eng = create_engine(uri, connect_args={"timeout": 30})

        @event.listens_for(eng, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):  # type: ignore[no-untyped-def]
            # WAL lets the worker write while the app and CLI read.
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return eng
    return create_engine(uri, pool_pre_ping=True)


_created: dict[str, frozenset[str]] = {}
_create_lock = threading.Lock()


def engine(settings: Settings | None = None) -> Engine:
    """The state database's engine, with every table declared so far created.

    Tables are created once per URI (again only when a newly imported module declared
    more), under a lock so threads never race; another process may still win the race,
    and its "already exists" is harmless.
    """
    settings = settings or get_settings()
    uri = settings.catalog_uri
    eng = _engine_for(uri)
    declared = frozenset(METADATA.tables)
    if _created.get(uri) == declared:
        return eng
    with _create_lock:
        if _created.get(uri) != declared:
            settings.ensure_home()
            try:
                METADATA.create_all(eng)
            except (OperationalError, ProgrammingError) as exc:
                if "already exists" not in str(exc):
                    raise
                METADATA.create_all(eng)
            _created[uri] = declared
    return eng
