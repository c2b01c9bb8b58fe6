"""Table names without opening the catalog, for `podium tables` and other quick listings.

Importing pyiceberg costs ~0.4 s. For a SQL catalog (the embedded SQLite default and
PostgreSQL) the names are rows of the catalog's own `iceberg_tables` table, which
SQLAlchemy reads in a few milliseconds; other catalogs (REST) go through pyiceberg.
"""

from __future__ import annotations

from podium.config import get_settings


def table_names() -> list[str]:
    """Every table as NAMESPACE.TABLE, sorted by namespace then name."""
    settings = get_settings()
    if settings.catalog_uri.startswith("rest+"):
        from podium.store.catalog import list_tables

        return list_tables()
    import sqlalchemy as sa

    settings.ensure_home()
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
