"""Reading a table snapshot into Arrow, with a small in-process cache.

Paging and searching a snapshot run many queries over the same immutable data, so the
Arrow scan of a snapshot is kept (keyed by catalog, table and snapshot id: a snapshot
never changes) and DuckDB queries it in memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import pyarrow as pa
from pyiceberg.table import Table

from podium.config import get_settings
from podium.store.catalog import full_name, load_table
from podium.store.snapshots import resolve_snapshot

_CACHE_SIZE = 4
_cache: OrderedDict[tuple[str, str, int | None], pa.Table] = OrderedDict()
_lock = threading.Lock()


def read_arrow(name: str, snapshot_id: int | str | None = None) -> tuple[pa.Table, int | None]:
    """The rows of `name` at `snapshot_id` (default: current) and the snapshot read."""
    table = load_table(name)
    sid = resolve_snapshot(table, snapshot_id)
    return read_table_arrow(table, sid), sid


def read_table_arrow(table: Table, snapshot_id: int | None) -> pa.Table:
    key = (get_settings().catalog_uri, full_name(".".join(table.name())), snapshot_id)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    if snapshot_id is None:
        data = table.schema().as_arrow().empty_table()
    else:
        data = table.scan(snapshot_id=snapshot_id).to_arrow()
    with _lock:
        _cache[key] = data
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return data


def clear_cache() -> None:
    with _lock:
        _cache.clear()
