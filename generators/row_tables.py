"""Tables that people append to one row at a time: vibe-check prompts, blind votes.

Many people write at once, so the first writers may race to create the table (and, in a
fresh home, the catalog's own SQL tables): threads and processes take turns creating
it. Each row is then one Iceberg append; pyiceberg retries a commit that lost a race
(with room to: see `_RETRIES`), and a few more attempts cover a busy moment beyond
that, so concurrent writers lose nothing. A failed commit leaves nothing behind.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyiceberg.exceptions import CommitFailedException

from podium.config import get_settings
from podium.locks import file_lock
from podium.store.catalog.catalog import ensure_namespace, open_catalog, parse_name, table_exists
from podium.store.schema import PROP_KIND
from podium.store.write.write import write_table

_RETRIES = {"commit.retry.num-retries": "20", "commit.retry.min-wait-ms": "20"}
_WRITE_ATTEMPTS = 5
_create_lock = threading.Lock()


def ensure_row_table(name: str, schema: pa.Schema, kind: str) -> None:
    """Create table `name` (property `podium.kind` = `kind`) unless it exists."""
    if table_exists(name):
        return
    with _create_lock, file_lock(get_settings().ensure_home() / f".{name}.create.lock"):
        if table_exists(name):
            return
        catalog = open_catalog()
        ns, table = parse_name(name)
        ensure_namespace(ns, catalog)
        catalog.create_table_if_not_exists(
            (ns, table), schema=schema, properties={PROP_KIND: kind, **_RETRIES}
        )


def append_row(name: str, schema: pa.Schema, row: Mapping[str, Any]) -> None:
    """One append of `row` to table `name` (made by `ensure_row_table`)."""
    data = pa.Table.from_pylist([dict(row)], schema=schema)
    for attempt in range(_WRITE_ATTEMPTS):
        try:
            write_table(name, data, mode="append")
            return
        except CommitFailedException:
            if attempt == _WRITE_ATTEMPTS - 1:
                raise
