"""The SQL database that holds app state beside the Iceberg catalog.

Jobs, checkpoints, servers and vote indexes live in ordinary SQL tables in the same
database as the catalog, so one URL configures a deployment. Each package declares its
tables on `METADATA`; `engine()` creates whatever is missing.
"""

from __future__ import annotations

import functools

from sqlalchemy import Engine, MetaData, create_engine, event

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


def engine(settings: Settings | None = None) -> Engine:
    settings = settings or get_settings()
    settings.ensure_home()
    eng = _engine_for(settings.catalog_uri)
    METADATA.create_all(eng)
    return eng
