"""Where rows live: the data file and physical row of each id, found as a reader would
(manifest bounds on `id`, then Parquet row-group statistics, then the `id` column of the
few row groups left), so a few rows of a 2M-row table cost a few footers. Rows a
position delete removed (an edited row's old version) are not live and never found.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.conversions import from_bytes
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.manifest import DataFileContent
from pyiceberg.table import Table
from pyiceberg.table.refs import MAIN_BRANCH
from pyiceberg.types import StringType

from podium.errors import NotFound
from podium.store.read.plan import open_parquet, plan_snapshot, row_group_sizes
from podium.store.read.snapshots import resolve_snapshot
from podium.store.write.row_delta import live_files


def branch_head(table: Table, branch: str = MAIN_BRANCH) -> int | None:
    """The snapshot a branch points at (None: an empty table's main)."""
    if branch == MAIN_BRANCH:
        current = table.current_snapshot()
        return current.snapshot_id if current else None
    ref = table.refs().get(branch)
    if ref is None or ref.snapshot_ref_type.value != "branch":
        raise NotFound(
            f"Table {'.'.join(table.name())} has no branch {branch!r}; create it with "
            f"`podium branch {'.'.join(table.name())} {branch}`."
        )
    return ref.snapshot_id


def _bounds(table: Table, snapshot_id: int | None) -> dict[str, tuple[str | None, str | None]]:
    """Each live data file's `id` bounds from its manifest entry."""
    id_field = table.schema().find_field("id").field_id
    out: dict[str, tuple[str | None, str | None]] = {}
    for data_file, _ in live_files(table, snapshot_id):
        if data_file.content != DataFileContent.DATA:
            continue
        lo_raw = (data_file.lower_bounds or {}).get(id_field)
        hi_raw = (data_file.upper_bounds or {}).get(id_field)
        out[data_file.file_path] = (
            from_bytes(StringType(), lo_raw) if lo_raw is not None else None,
            from_bytes(StringType(), hi_raw) if hi_raw is not None else None,
        )
    return out


def locate_rows(
    table: Table, snapshot_id: int | None, ids: Sequence[str]
) -> dict[str, list[tuple[str, int]]]:
    """Where each of `ids` lives in a snapshot: (data file, physical row) of every live
    copy. Opens only files whose `id` bounds admit an id, and in them only the row groups
    whose statistics do, so a few rows of a 2M-row table cost a few footers. Rows deleted
    by position (an edited row's old version) are not live and not returned."""
    if snapshot_id is None:
        return {}
    plan = plan_snapshot(table, snapshot_id)
    runs: dict[str, list[tuple[int, int]]] = {}
    for f in plan.files:
        runs.setdefault(f.path, []).append((f.first, f.first + f.records))
    bounds = _bounds(table, snapshot_id)
    wanted = sorted(set(ids))
    out: dict[str, list[tuple[str, int]]] = {}
    for path, spans in runs.items():
        lo, hi = bounds.get(path, (None, None))
        candidates = [i for i in wanted if (lo is None or i >= lo) and (hi is None or i <= hi)]
        if not candidates:
            continue
        starts = [a for a, _ in spans]
        for row_id, row in _ids_in_file(table, path, candidates):
            k = bisect.bisect_right(starts, row) - 1
            if k >= 0 and row < spans[k][1]:
                out.setdefault(row_id, []).append((path, row))
    return out


def rows_by_id(
    table: Table, ids: Sequence[str], snapshot: int | str | None = None, branch: str = MAIN_BRANCH
) -> tuple[int | None, dict[str, dict[str, Any]]]:
    """The snapshot read (`snapshot`, else the branch head) and the rows of `ids` in it,
    found as an edit finds them (manifest bounds and row-group statistics on `id`), so
    reading the row an edit starts from costs a few footers, not a scan of the table."""
    sid = resolve_snapshot(table, snapshot) if snapshot is not None else branch_head(table, branch)
    located = locate_rows(table, sid, ids)
    found = [(i, places[0]) for i in ids if (places := located.get(i))]
    rows = read_rows_at(table, [place for _, place in found])
    return sid, {i: row for (i, _), row in zip(found, rows, strict=True)}


def files_holding(table: Table, snapshot_id: int | None, ids: Sequence[str]) -> dict[str, set[str]]:
    """The data files of a snapshot holding live copies of any of `ids`, with those ids."""
    out: dict[str, set[str]] = {}
    for row_id, places in locate_rows(table, snapshot_id, ids).items():
        for path, _ in places:
            out.setdefault(path, set()).add(row_id)
    return out


def _ids_in_file(table: Table, path: str, candidates: list[str]) -> list[tuple[str, int]]:
    """(id, physical row) of the rows of one data file whose id is a candidate."""
    parquet = open_parquet(table, path)
    column = parquet.schema_arrow.get_field_index("id")
    meta = parquet.metadata
    found: list[tuple[str, int]] = []
    start = 0
    for g in range(meta.num_row_groups):
        rows = meta.row_group(g).num_rows
        stats = meta.row_group(g).column(column).statistics
        if (
            stats is None
            or not stats.has_min_max
            or any(stats.min <= i <= stats.max for i in candidates)
        ):
            values = parquet.read_row_group(g, columns=["id"]).column("id")
            hits = pc.is_in(values, pa.array(candidates, pa.string()))
            for k in pc.indices_nonzero(hits).to_pylist():
                found.append((values[k].as_py(), start + k))
        start += rows
    return found


def read_rows_at(table: Table, places: Sequence[tuple[str, int]]) -> list[dict[str, Any]]:
    """The stored rows at (data file, physical row), in the order given."""
    schema = schema_to_pyarrow(table.schema(), include_field_ids=False)
    by_path: dict[str, list[int]] = {}
    for path, row in places:
        by_path.setdefault(path, []).append(row)
    got: dict[tuple[str, int], dict[str, Any]] = {}
    for path, rows in by_path.items():
        parquet = open_parquet(table, path)
        sizes = row_group_sizes(table, path, parquet)
        edges = list(itertools.accumulate(sizes, initial=0))
        for row in sorted(set(rows)):
            g = bisect.bisect_right(edges, row) - 1
            data = parquet.read_row_group(g).slice(row - edges[g], 1)
            got[(path, row)] = data.select(
                [c for c in schema.names if c in data.column_names]
            ).to_pylist()[0]
    return [got[p] for p in places]
