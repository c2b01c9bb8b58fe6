"""Opening the Iceberg catalog and resolving table names.

The embedded default is a pyiceberg `SqlCatalog` on SQLite with a local warehouse; a
PostgreSQL URI and an S3 warehouse work unchanged. A `rest` or other catalog can be
named with `catalog_uri = "rest+http://..."` and goes through pyiceberg's own loader.

A one-shot command that loads a table and commits to it once (`podium edit`,
`delete-rows`, `label`) calls `prefer_lean_catalog()` first: an SQLite catalog file is
then opened as `store.catalog.sqlite_catalog.LeanSqliteCatalog`, the same statements without
importing SQLAlchemy (~0.4 s of CPU, more than the edit). Everything else keeps
pyiceberg's `SqlCatalog`, imported only when a catalog is opened.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table

from podium.config import Settings, get_settings, on_settings_reset
from podium.errors import InvalidInput, NotFound
from podium.store.catalog.kept_load import load_kept
from podium.store.catalog.sqlite_uri import plain_sqlite_file
from podium.store.catalog.table_name import split_table_name
from podium.store.s3_exit import S3_SCHEMES, release_at_exit

if TYPE_CHECKING:
    from pyiceberg.catalog.sql import SqlCatalog


@functools.cache
def _catalog_for(
    name: str, uri: str, warehouse: str, extra: tuple[tuple[str, str], ...]
) -> Catalog:
    _release_s3_at_exit(warehouse)
    if uri.startswith("rest+"):
        return load_catalog(
            name, type="rest", uri=uri.removeprefix("rest+"), warehouse=warehouse, **dict(extra)
        )
    from podium.store.catalog.commit_outcome import checked_sql_catalog

    properties = dict(extra)
    if not uri.startswith("sqlite"):
        # A pooled connection the server dropped (a restart, a failover, an idle cut) is
        # replaced when it is taken, not found dead by the next statement: that was a job
        # whose output had landed failing as it recorded it.
        properties.setdefault("pool_pre_ping", "true")
    catalog = _sql_catalog(checked_sql_catalog(), name, uri, warehouse, properties)
    _opened.append(catalog)
    return catalog


_opened: list[Catalog] = []


def _sql_catalog(
    cls: type[SqlCatalog], name: str, uri: str, warehouse: str, properties: dict[str, str]
) -> SqlCatalog:
    """pyiceberg creates a new home's catalog tables when it opens it: a check, then a
    CREATE. Two processes opening one new home at once can both pass the check, and the
    second CREATE fails with "already exists" (CI: one of two concurrent report writers
    failed). The tables are there then, so opening again finds them."""
    from sqlalchemy.exc import DBAPIError

    try:
        return cls(name, uri=uri, warehouse=warehouse, **properties)
    except DBAPIError as exc:
        if "already exists" not in str(exc.orig):
            raise
        return cls(name, uri=uri, warehouse=warehouse, **properties)


def _release_s3_at_exit(warehouse: str) -> None:
    """The FileIOs of a warehouse on S3 cache pyarrow S3 filesystems that must be gone
    before pyarrow's exit finalizer (`store.s3_exit`)."""
    if urlparse(warehouse).scheme in S3_SCHEMES:
        release_at_exit()


def _close_catalogs() -> None:
    """Close the pooled connections of every SQL catalog opened so far and forget them
    (the settings changed: the next `open_catalog()` opens the new home's)."""
    _catalog_for.cache_clear()
    _lean_catalog_for.cache_clear()
    while _opened:
        engine = getattr(_opened.pop(), "engine", None)
        if engine is not None:
            engine.dispose()


@functools.cache
def _lean_catalog_for(
    name: str, uri: str, warehouse: str, extra: tuple[tuple[str, str], ...]
) -> Catalog:
    from podium.store.catalog.sqlite_catalog import LeanSqliteCatalog

    _release_s3_at_exit(warehouse)
    return LeanSqliteCatalog(
        name,
        plain_sqlite_file(uri) or Path(),
        functools.partial(_catalog_for, name, uri, warehouse, extra),
        uri=uri,
        warehouse=warehouse,
        **dict(extra),
    )


on_settings_reset(_close_catalogs)


_lean = False


def prefer_lean_catalog() -> None:
    """Open an SQLite catalog file without SQLAlchemy from now on in this process (for
    one-shot CLI writes; see the module docstring)."""
    global _lean
    _lean = True


_open_lock = threading.Lock()


def open_catalog(settings: Settings | None = None) -> Catalog:
    settings = settings or get_settings()
    settings.ensure_home()
    extra = tuple(sorted(settings.catalog_properties.items()))
    # SqlCatalog creates its tables on first open: threads must not race to do it.
    with _open_lock:
        if _lean and plain_sqlite_file(settings.catalog_uri) is not None:
            return _lean_catalog_for(
                settings.catalog_name, settings.catalog_uri, settings.warehouse, extra
            )
        return _catalog_for(settings.catalog_name, settings.catalog_uri, settings.warehouse, extra)


def parse_name(name: str, settings: Settings | None = None) -> tuple[str, str]:
    """`ns.table` -> ("ns", "table"); a bare name goes to the default namespace.
    Refuses names outside the one naming rule (`podium.store.catalog.table_name`)."""
    settings = settings or get_settings()
    return split_table_name(name, settings.default_namespace)


def full_name(name: str) -> str:
    return ".".join(parse_name(name))


def _load(ident: tuple[str, str], catalog: Catalog | None) -> Table:
    """Table `ident`; from the settings' catalog its metadata parsed once per location
    (`kept_load`), from any other as the catalog loads it."""
    if catalog is None:
        catalog = open_catalog()
        kept = load_kept(catalog, ident)
        if kept is not None:
            return kept
    return catalog.load_table(ident)


def load_table(name: str, catalog: Catalog | None = None) -> Table:
    ident = parse_name(name)
    try:
        return _load(ident, catalog)
    except NoSuchTableError:
        catalog = catalog or open_catalog()
        known = ", ".join(list_tables(catalog)) or "none yet"
        raise NotFound(
            f"No table named {'.'.join(ident)}. Known tables: {known}. "
            "Create one with `podium import PATH --out NS.NAME`."
        ) from None


def load_or_none(name: str, catalog: Catalog | None = None) -> Table | None:
    """Table `name`, or None when there is none: one catalog load, where `table_exists`
    then `load_table` are two."""
    try:
        return _load(parse_name(name), catalog)
    except NoSuchTableError:
        return None


def name_of(table: Table) -> str:
    """A loaded table's full name, `ns.table`."""
    return ".".join(table.name())


def table_exists(name: str, catalog: Catalog | None = None) -> bool:
    catalog = catalog or open_catalog()
    return catalog.table_exists(parse_name(name))


def check_unique_name(ident: tuple[str, str], catalog: Catalog) -> None:
    """Refuse to create table `ident` when one whose name differs only in case exists:
    DuckDB, Trino and case-insensitive file systems take the two for one table."""
    wanted = ".".join(ident).lower()
    same = [
        tuple(existing)
        for (namespace,) in catalog.list_namespaces()
        if namespace.lower() == ident[0].lower()
        for existing in catalog.list_tables(namespace)
        if ".".join(existing).lower() == wanted
    ]
    if not same or tuple(ident) in same:  # new, or the table itself (nothing is created)
        return
    name = ".".join(same[0])
    raise InvalidInput(
        f"Table {name} exists; {'.'.join(ident)} differs from it only in case, and table "
        f"names are unique whatever their case. Choose another name (or write to {name})."
    )


def ensure_namespace(namespace: str, catalog: Catalog | None = None) -> None:
    catalog = catalog or open_catalog()
    catalog.create_namespace_if_not_exists(namespace)


def list_tables(catalog: Catalog | None = None) -> list[str]:
    catalog = catalog or open_catalog()
    names: list[str] = []
    for (ns,) in sorted(catalog.list_namespaces()):
        names.extend(".".join(ident) for ident in sorted(catalog.list_tables(ns)))
    return names
