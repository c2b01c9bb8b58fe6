"""Table names without opening the catalog, for `podium tables` and other quick listings.

Importing pyiceberg costs ~0.4 s. For a SQL catalog (the embedded SQLite default and
PostgreSQL) the names are rows of the catalog's own `iceberg_tables` table, which
SQLAlchemy reads in a few milliseconds (SQLite: the standard library's sqlite3, less);
other catalogs (REST) go through pyiceberg.
`metadata_location` reads a table's row the same way (with the standard library's
sqlite3 for SQLite, since importing SQLAlchemy alone costs ~0.3 s): the key a cold read
looks its cached file plan up by (`podium.store.read.plan_cache`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from podium.config import get_settings
from podium.store.catalog.sqlite_kept import LOCATION_SQL, fetch_all, location_in
from podium.store.catalog.sqlite_uri import sqlite_file

_NAMES_SQL = (
    "SELECT table_namespace, table_name FROM iceberg_tables WHERE catalog_name = ? "
    "ORDER BY table_namespace, table_name"
)


def table_names() -> list[str]:
    """Every table as NAMESPACE.TABLE, sorted by namespace then name."""
    settings = get_settings()
    if settings.catalog_uri.startswith("rest+"):
        from podium.store.catalog.catalog import list_tables

        return list_tables()
    # A person's first command makes their home, private (0700, its catalog 0600), as
    # the SQLAlchemy engine below did for every catalog before SQLite had its own read.
    settings.ensure_home()
    database = sqlite_file(settings.catalog_uri)
    if database is not None:
        return _sqlite_names(database, settings.catalog_name)
    import sqlalchemy as sa

    engine = sa.create_engine(settings.catalog_uri)
    try:
        if not sa.inspect(engine).has_table("iceberg_tables"):
            return []  # pyiceberg creates it when the catalog is first opened
        rows = sa.table(
            "iceberg_tables",
            sa.column("catalog_name"),
            sa.column("table_namespace"),
            sa.column("table_name"),
        )
        query = (
            sa.select(rows.c.table_namespace, rows.c.table_name)
            .where(rows.c.catalog_name == settings.catalog_name)
            .order_by(rows.c.table_namespace, rows.c.table_name)
        )
        with engine.connect() as conn:
            return [f"{ns}.{name}" for ns, name in conn.execute(query)]
    finally:
        engine.dispose()


def _sqlite_names(database: Path, catalog: str) -> list[str]:
    """`table_names` of an SQLite catalog file, read with the standard library: Browse
    asks for every open sample (a table's signals are the tables named beside it), and
    a SQLAlchemy engine made, inspected and disposed of each time was 6.2% of the app's
    samples with ten sessions (docs/faults.md)."""
    if not database.exists():
        return []  # no catalog opened yet, as a missing `iceberg_tables` below
    try:
        rows = fetch_all(database, _NAMES_SQL, (catalog,))  # a connection kept per file
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []  # pyiceberg creates it when the catalog is first opened
        raise
    return [f"{ns}.{name}" for ns, name in rows]


def metadata_location(namespace: str, table: str) -> str | None:
    """Where the catalog says the table's current metadata file is, or None when that
    cannot be read cheaply (a REST catalog, no such row, a database missing or busy):
    the caller then opens the table with pyiceberg, whose errors explain any problem."""
    settings = get_settings()
    params = {"catalog": settings.catalog_name, "namespace": namespace, "name": table}
    uri = settings.catalog_uri
    if uri.startswith("rest+"):
        return None
    database = sqlite_file(uri)
    if database is not None:
        return location_in(database, settings.catalog_name, namespace, table)
    if uri.startswith("sqlite"):
        return None  # an in-memory catalog: nothing outlives the process
    return _sqlalchemy_location(uri, params)


def _sqlalchemy_location(uri: str, params: dict[str, str]) -> str | None:
    dsn = _libpq_dsn(uri)
    if dsn is not None:
        return _psycopg2_location(dsn, params)
    import sqlalchemy as sa

    try:
        engine = sa.create_engine(uri)
        try:
            with engine.connect() as conn:
                value = conn.execute(sa.text(LOCATION_SQL), params).scalar()
        finally:
            engine.dispose()
    except (sa.exc.SQLAlchemyError, ImportError):
        return None
    return str(value) if value else None


def _libpq_dsn(uri: str) -> str | None:
    """A `postgresql[+psycopg2]://` SQLAlchemy URL as the libpq URI psycopg2 takes (the
    same user, password, host, database and query parameters), or None for any other
    database or driver. Importing SQLAlchemy costs a cold read ~0.3 s, psycopg2 alone
    less, and the cached plan needs one row."""
    for prefix in ("postgresql+psycopg2://", "postgresql://", "postgres://"):
        if uri.startswith(prefix):
            return "postgresql://" + uri.removeprefix(prefix)
    return None


def _psycopg2_location(dsn: str, params: dict[str, str]) -> str | None:
    try:
        import psycopg2  # type: ignore[import-untyped]
    except ImportError:
        return None
    sql = (
        "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = %(catalog)s "
        "AND table_namespace = %(namespace)s AND table_name = %(name)s"
    )
    try:
        with contextlib.closing(psycopg2.connect(dsn, connect_timeout=10)) as conn:
            with conn.cursor() as cursor:
                cursor.execute(sql, params)
                row = cursor.fetchone()
            conn.rollback()
    except psycopg2.Error:
        return None
    return str(row[0]) if row and row[0] else None
