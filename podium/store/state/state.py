"""The SQL database that holds app state beside the Iceberg catalog.

Jobs, checkpoints, servers, users and vote indexes live in ordinary SQL tables in the
same database as the catalog, so one URL configures a deployment. Each package declares
its tables on `METADATA`; the schema itself is made by the Alembic migrations in
`podium.store.state.migrations` (its docstring says how to add one), which `engine()` runs
once per database and process.
"""

from __future__ import annotations

import functools
import re
import threading
from pathlib import Path

from sqlalchemy import Engine, MetaData, create_engine, event, inspect, text

from podium.config import Settings, get_settings, on_settings_reset

METADATA = MetaData()


@functools.cache
def _engine_for(uri: str) -> Engine:
    eng = _new_engine(uri)
    _engines.append(eng)
    return eng


_engines: list[Engine] = []


def _close_engines() -> None:
    """Close the pooled connections of every engine made so far and forget them: the
    settings changed (another home), and the next `engine()` makes its own. An engine
    still held elsewhere keeps working; its connections open again as it needs them."""
    _engine_for.cache_clear()
    while _engines:
        _engines.pop().dispose()


on_settings_reset(_close_engines)


def _new_engine(uri: str) -> Engine:
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
_VERSIONS = Path(__file__).resolve().parent / "migrations" / "versions"
_REVISION = re.compile(r'^(down_)?revision\s*=\s*(None|"([^"]+)")', re.M)


@functools.cache
def newest_revision() -> str | None:
    """The head of the migration files, read from their `revision`/`down_revision` lines
    without importing Alembic (which costs a cold command ~0.3 s); None if unclear, and
    then Alembic decides. `tests/store/test_migrations.py` checks it equals Alembic's."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in _VERSIONS.glob("*.py"):
        found = {bool(m.group(1)): m.group(3) for m in _REVISION.finditer(path.read_text("utf-8"))}
        if False not in found or found[False] is None:
            continue
        revisions.add(found[False])
        if found.get(True):
            parents.add(found[True])
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def _at_head(eng: Engine) -> bool:
    """The database already carries the newest migration (most opens: nothing to do)."""
    head = newest_revision()
    if head is None:
        return False
    try:
        with eng.connect() as conn:
            current = conn.execute(text("SELECT version_num FROM alembic_version")).scalars()
            return list(current) == [head]
    except Exception:  # noqa: BLE001 - no version table yet: a new database, Alembic makes it
        return False


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
            settings.ensure_home()
            if not _at_head(eng):
                from podium.store.state import migrations  # Alembic loads only to upgrade

                migrations.upgrade(eng)
            _migrated.add(uri)
        missing = sorted(declared - set(inspect(eng).get_table_names()))
        if missing:
            raise RuntimeError(
                f"State tables {missing} are declared but no migration creates them: add "
                "one under podium/store/state/migrations/versions (see that package's docstring)."
            )
        _checked[uri] = declared
    return eng
