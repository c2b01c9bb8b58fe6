"""A table snapshot opened for querying (its plan, column mapping and canonical columns),
a page of its rows, and DuckDB results as Arrow. `podium.store.read.query` builds on it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.store.read import connections, duckdb_views
from podium.store.read.connections import connect
from podium.store.read.duckdb_views import mapped_view_sql
from podium.store.read.file_plan import FilePlan
from podium.store.read.plan import plan_snapshot
from podium.store.read.plan_cache import cached_snapshot

if TYPE_CHECKING:
    import duckdb
    from pyiceberg.table import Table


@dataclass
class Page:
    rows: list[dict[str, Any]]
    total: int | None  # rows matching the search and filters; None when not counted
    offset: int
    limit: int
    snapshot_id: int | None
    columns: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))  # shallow: a page's rows are not copied again


@dataclass(frozen=True)
class SnapshotView:
    """A snapshot opened for querying: its plan, its column mapping, its columns.
    `table` is None when the plan came from the on-disk plan cache (a direct plan)."""

    table: Table | None
    plan: FilePlan
    mapping: dict[str, str]
    schema: pa.Schema  # under canonical names (after the mapping)

    @property
    def snapshot_id(self) -> int | None:
        return self.plan.snapshot_id

    @property
    def key(self) -> tuple[Any, ...]:
        uri = get_settings().catalog_uri
        return (
            uri,
            self.plan.table,
            self.plan.snapshot_id,
            json.dumps(self.mapping, sort_keys=True),
        )

    def canonical(self, raw: pa.Table) -> pa.Table:
        """A few raw rows under canonical column names."""
        if not self.mapping:
            return raw
        con = connect()
        con.register("raw", raw)
        return arrow_of(con, mapped_view_sql(raw.column_names, self.mapping))

    def connection(
        self, columns: Sequence[str] | None = None, **settings: Any
    ) -> duckdb.DuckDBPyConnection:
        """A guarded connection where `t` is the snapshot (canonical names + `__pos`);
        `columns`: all the caller's query reads (None: it may read any)."""
        con = connections.connect_plans([self.plan], **settings)
        duckdb_views.register_snapshot(
            con, "t", self.table, self.plan, self.mapping, columns=columns
        )
        return con


def open_view(
    name: str, snapshot_id: int | str | None = None, location: str | None = None
) -> SnapshotView:
    """`location`: the table's current metadata location, when the caller just read it."""
    cached = cached_snapshot(name, snapshot_id, location)
    if cached is not None:
        return view_of(None, cached.plan, cached.mapping)
    from podium.store.catalog.catalog import load_table
    from podium.store.read.snapshots import resolve_snapshot
    from podium.store.schema import PROP_MAPPING

    table = load_table(name)
    plan = plan_snapshot(table, resolve_snapshot(table, snapshot_id))
    return view_of(table, plan, table.properties.get(PROP_MAPPING))


def view_of(table: Table | None, plan: FilePlan, raw: str | None) -> SnapshotView:
    mapping = json.loads(raw) if raw else {}
    schema = plan.schema
    if mapping:
        schema = SnapshotView(table, plan, mapping, schema).canonical(schema.empty_table()).schema
    return SnapshotView(table, plan, mapping, schema)


def arrow_of(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> pa.Table:
    import duckdb

    try:
        return run_relation(con, sql, params)
    except duckdb.Error as exc:
        raise InvalidInput(f"Query failed: {exc}") from None


def run_relation(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> pa.Table:
    """The result of `sql` as Arrow; DuckDB's errors reach the caller, which names them."""
    relation = con.sql(sql, params=params or None)
    return relation.to_arrow_table() if relation is not None else pa.table({})
