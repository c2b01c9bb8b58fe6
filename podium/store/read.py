"""Reading a table snapshot into Arrow, with a small in-process cache.

Paging and searching a snapshot run many queries over the same immutable data, so the
Arrow scan of a snapshot is kept (keyed by catalog, table and snapshot id: a snapshot
never changes) and DuckDB queries it in memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import pyarrow as pa
from pyiceberg.io.pyarrow import ArrowScan
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
        data = _scan_in_write_order(table, snapshot_id)
    with _lock:
        _cache[key] = data
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return data


def _scan_in_write_order(table: Table, snapshot_id: int) -> pa.Table:
    """The snapshot's rows, oldest commit first.

    pyiceberg plans the newest manifest first, so appended rows would come before the
    rows they were appended to; a person paging a table expects write order.
    """
    scan = table.scan(snapshot_id=snapshot_id)
    entries = table.inspect.entries(snapshot_id).select(["status", "sequence_number", "data_file"])
    sequence = {
        entry["data_file"]["file_path"]: entry["sequence_number"]
        for entry in entries.to_pylist()
        if entry["status"] != 2  # 2 = deleted
    }
    tasks = sorted(
        enumerate(scan.plan_files()), key=lambda it: (sequence.get(it[1].file.file_path, 0), it[0])
    )
    return ArrowScan(
        table.metadata, table.io, scan.projection(), scan.row_filter, scan.case_sensitive
    ).to_table([task for _, task in tasks])


def clear_cache() -> None:
    with _lock:
        _cache.clear()
