"""Tables another engine made in Podium's catalog: in nested namespaces, with names
outside Podium's rule, at locations inside other tables' folders, with files another
table references. Made with pyiceberg itself, as Spark or Trino would make them."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table import Table

from podium.config import get_settings
from podium.store.catalog.catalog import open_catalog

SCHEMA = pa.schema([pa.field("k", pa.int64()), pa.field("v", pa.string())])


def batch(n: int, start: int = 0) -> pa.Table:
    return pa.table({"k": list(range(start, start + n)), "v": [f"v{i}" for i in range(n)]})


def foreign_table(ident: tuple[str, ...], rows: int = 20, location: str | None = None) -> Table:
    """A table at `ident` (any depth), two appends of `rows`; at `location` if given."""
    catalog = open_catalog()
    catalog.create_namespace_if_not_exists(ident[:-1])
    kwargs: dict[str, Any] = {"location": location} if location else {}
    table = catalog.create_table(ident, schema=SCHEMA, **kwargs)
    table.append(batch(rows))
    table.append(batch(rows, start=rows))
    return catalog.load_table(ident)


def foreign_rows(ident: tuple[str, ...]) -> list[dict[str, Any]]:
    rows = open_catalog().load_table(ident).scan().to_arrow().to_pylist()
    return sorted(rows, key=lambda r: r["k"])


def local(location: str) -> Path:
    return Path(location.removeprefix("file://"))


def warehouse() -> Path:
    return local(get_settings().warehouse)


def files_under(path: Path) -> set[Path]:
    return {p for p in path.rglob("*") if p.is_file()} if path.exists() else set()


def age(paths: set[Path] | Path, seconds: float = 3 * 86400) -> None:
    """Make every file (or every file under a folder) look written `seconds` ago."""
    then = time.time() - seconds
    for path in files_under(paths) if isinstance(paths, Path) else paths:
        os.utime(path, (then, then))


def add_foreign_file(table: Table, path: Path, rows: int = 5) -> None:
    """Write a Parquet file at `path` (anywhere) and add it to `table` as it is."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(batch(rows, start=1000), path)
    table.add_files([f"file://{path}"])
