"""Every table the catalog holds, as the catalog holds it: any namespace depth, any name.

`catalog.list_tables` gives the names Podium's rule allows (NAMESPACE.TABLE), which is
what pages and commands show and take. What deletes files or guards them (orphan
removal, the warehouse sweep, export's refusal to write into a table's folder) must
see every table: another engine's `ext2.lvl.nested` (pyiceberg lists namespaces one
level at a time) and `ext.bad-name` too; and one table whose metadata cannot be read
must be named as such, not end the listing or be passed over as if it did not exist.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyiceberg.catalog import Catalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table

from podium.store.catalog.catalog import open_catalog
from podium.store.catalog.names import metadata_location

log = logging.getLogger("podium")

Identifier = tuple[str, ...]


@dataclass(frozen=True)
class CatalogTable:
    ident: Identifier
    table: Table | None  # None: the catalog lists it but it could not be loaded
    problem: str = ""  # why it could not be loaded
    metadata_location: str | None = None  # the catalog's pointer, loaded or not, when known

    @property
    def name(self) -> str:
        return ".".join(self.ident)


def table_identifiers(catalog: Catalog | None = None) -> list[Identifier]:
    """Every table's identifier, namespaces walked to any depth, sorted."""
    catalog = catalog or open_catalog()
    out: list[Identifier] = []
    seen: set[Identifier] = set()
    pending: list[Identifier] = [tuple(ns) for ns in catalog.list_namespaces()]
    while pending:
        namespace = pending.pop()
        if namespace in seen:
            continue
        seen.add(namespace)
        out.extend(tuple(ident) for ident in catalog.list_tables(namespace))
        pending.extend(
            tuple(child)
            for child in catalog.list_namespaces(namespace)
            if tuple(child) != namespace
        )
    return sorted(set(out))


def every_table(catalog: Catalog | None = None) -> list[CatalogTable]:
    """Every table loaded, or with the reason it could not be."""
    catalog = catalog or open_catalog()
    out = []
    for ident in table_identifiers(catalog):
        try:
            table = catalog.load_table(ident)
        except NoSuchTableError:  # dropped since it was listed
            continue
        except Exception as exc:  # noqa: BLE001 - any failure makes it unreadable, not fatal
            problem = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            log.warning("table %s cannot be read: %s", ".".join(ident), problem)
            where = metadata_location(".".join(ident[:-1]), ident[-1])
            out.append(CatalogTable(ident, None, problem, where))
            continue
        out.append(CatalogTable(ident, table, "", table.metadata_location))
    return out
