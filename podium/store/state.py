"""The SQL database that holds app state beside the Iceberg catalog.

Jobs, checkpoints, servers, users and vote indexes live in ordinary SQL tables in the
same database as the catalog, so one URL configures a deployment. Each package declares
its tables on `METADATA`; the schema itself is made by the Alembic migrations in
`podium.store.migrations` (its docstring says how to add one), which `engine()` runs
once per database and process.
"""

from __future__ import annotations

import functools
import threading

from sqlalchemy import Engine, MetaData, create_engine, event, inspect

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


_migrated: set[str] = set()
_checked: dict[str, frozenset[str]] = {}
_migrate_lock = threading.Lock()


def engine(settings: Settings | None = None) -> Engine:
    """The state database's engine, its schema upgraded to the newest migration.

    Migrations run once per URI and process, under a lock so threads never race (other
    processes wait in `migrations.upgrade`). A table declared on METADATA that no
    migration creates is a programming error, reported the first time it is used.
    """
    settings = settings or get_settings()
    uri = settings.catalog_uri
    eng = _engine_for(uri)
    declared = frozenset(METADATA.tables)
    if _checked.get(uri) == declared:
        return eng
    with _migrate_lock:
        if uri not in _migrated:
            from podium.store import migrations  # Alembic loads only when a DB opens

            settings.ensure_home()
            migrations.upgrade(eng)
            _migrated.add(uri)
        missing = sorted(declared - set(inspect(eng).get_table_names()))
        if missing:
            raise RuntimeError(
                f"State tables {missing} are declared but no migration creates them: add "
                "one under podium/store/migrations/versions (see that package's docstring)."
            )
        _checked[uri] = declared
    return eng
