"""Queries over a table snapshot through DuckDB: pages, search, filters, counts, SQL.

A snapshot is read once into Arrow (`podium.store.read`) and DuckDB queries it in
memory. Every connection has external access disabled, so a user's `--where` or
`podium sql` can read the registered tables and nothing else on the machine.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.store.catalog import list_tables, load_table
from podium.store.read import read_arrow, read_table_arrow
from podium.store.schema import PROP_MAPPING
from podium.store.search import rows_containing
from podium.store.snapshots import resolve_snapshot

FilterValue = str | int | float | bool | None | Collection[str | int | float | bool]


@dataclass
class Page:
    rows: list[dict[str, Any]]
    total: int  # rows matching the search and filters
    offset: int
    limit: int
    snapshot_id: int | None
    columns: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "offset": self.offset,
            "limit": self.limit,
            "snapshot_id": self.snapshot_id,
            "columns": self.columns,
            "rows": self.rows,
        }


def connect() -> duckdb.DuckDBPyConnection:
    return duckdb.connect(config={"enable_external_access": False})


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def mapped_view_sql(columns: list[str], mapping: Mapping[str, str]) -> str:
    """SELECT that exposes a foreign table under canonical SFT names.

    `mapping` maps canonical names to stored ones, e.g. {"messages": "conversations",
    "role": "from", "content": "value", "id": "uid"}: a ShareGPT-shaped table then reads
    as an SFT table without being rewritten.
    """
    select = []
    canonical_columns = ("id", "system", "source", "split", "tags", "metadata")
    renamed = {mapping[c] for c in (*canonical_columns, "messages") if c in mapping}
    for canonical in canonical_columns:
        stored = mapping.get(canonical)
        if stored and stored in columns:
            select.append(f"{_quote(stored)} AS {_quote(canonical)}")
    if "messages" in mapping and mapping["messages"] in columns:
        role, content = mapping.get("role", "role"), mapping.get("content", "content")
        select.append(
            f"list_transform({_quote(mapping['messages'])}, lambda m: "
            f"{{'role': m.{_quote(role)}, 'content': m.{_quote(content)}}}) AS messages"
        )
    select.extend(_quote(c) for c in columns if c not in renamed)
    return "SELECT " + ", ".join(select) + " FROM raw"


POS = "__pos"  # row position within the snapshot, added to the cached Arrow data

_views: OrderedDict[tuple[Any, ...], pa.Table] = OrderedDict()
_positions: OrderedDict[tuple[Any, ...], pa.Array] = OrderedDict()
_lock = threading.Lock()


def _cached(cache: OrderedDict, key: tuple[Any, ...], make: Callable[[], Any], size: int) -> Any:
    with _lock:
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
    value = make()
    with _lock:
        cache[key] = value
        while len(cache) > size:
            cache.popitem(last=False)
    return value


def snapshot_view(
    name: str, snapshot_id: int | str | None = None
) -> tuple[pa.Table, int | None, tuple]:
    """The snapshot's rows under canonical column names, plus a row-position column.

    Returns (data, snapshot id, cache key). Cached: a snapshot never changes.
    """
    table = load_table(name)
    sid = resolve_snapshot(table, snapshot_id)
    mapping = table_mapping(name)
    key = (
        get_settings().catalog_uri,
        ".".join(table.name()),
        sid,
        json.dumps(mapping, sort_keys=True),
    )

    def make() -> pa.Table:
        data = read_table_arrow(table, sid)
        if mapping:
            con = connect()
            con.register("raw", data)
            data = arrow_of(con, mapped_view_sql(data.column_names, mapping))
        return data.append_column(POS, pa.array(range(data.num_rows), pa.int64()))

    return _cached(_views, key, make, 4), sid, key


def connect_view(data: pa.Table) -> duckdb.DuckDBPyConnection:
    """A connection where `t` is the snapshot (without the position column)."""
    con = connect()
    con.register("base", data)
    con.execute(f"CREATE TEMP VIEW t AS SELECT * EXCLUDE ({POS}) FROM base")
    return con


def register_view(
    con: duckdb.DuckDBPyConnection, data: pa.Table, mapping: Mapping[str, str]
) -> None:
    """Register raw `data` as `t` under canonical names (for callers holding raw Arrow)."""
    if mapping:
        con.register("raw", data)
        con.execute("CREATE TEMP VIEW t AS " + mapped_view_sql(data.column_names, mapping))
    else:
        con.register("t", data)


def table_mapping(name: str) -> dict[str, str]:
    raw = load_table(name).properties.get(PROP_MAPPING)
    return json.loads(raw) if raw else {}


def check_expression(con: duckdb.DuckDBPyConnection, where: str) -> None:
    """Refuse anything but one boolean expression (no second statement, no DDL)."""
    try:
        statements = con.extract_statements(f"SELECT * FROM t WHERE ({where})")
    except duckdb.Error as exc:
        raise InvalidInput(f"Filter expression {where!r} does not parse: {exc}") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise InvalidInput(f"Filter expression {where!r} must be a single SQL condition.")


def _conditions(
    schema: pa.Schema,
    where: str | None,
    filters: Mapping[str, FilterValue] | None,
    params: dict[str, Any],
) -> list[str]:
    conds: list[str] = []
    if where:
        conds.append(f"({where})")
    for i, (column, value) in enumerate((filters or {}).items()):
        if column not in schema.names:
            raise InvalidInput(
                f"No column {column!r} to filter on; columns: {', '.join(schema.names)}."
            )
        col_type = schema.field(column).type
        is_list = pa.types.is_list(col_type) or pa.types.is_large_list(col_type)
        values = (
            [value] if isinstance(value, (str, int, float, bool)) or value is None else list(value)
        )
        if values == [None]:
            conds.append(f"{_quote(column)} IS NULL")
            continue
        key = f"f{i}"
        params[key] = values
        if is_list:
            conds.append(f"list_has_any({_quote(column)}, ${key})")
        else:
            conds.append(f"list_contains(${key}, {_quote(column)})")
    return conds


def arrow_of(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> pa.Table:
    try:
        return con.sql(sql, params=params or None).to_arrow_table()
    except duckdb.Error as exc:
        raise InvalidInput(f"Query failed: {exc}") from None


def matching_positions(
    data: pa.Table,
    key: tuple[Any, ...],
    search: str | None = None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    ids: Collection[str] | None = None,
) -> pa.Array:
    """Ascending positions of the rows that pass search, `where`, filters and ids.

    Cached per query, so paging through a search scans the snapshot once.
    """

    def compute() -> pa.Array:
        found = rows_containing(data, search) if search else None
        if where or filters or ids is not None:
            con = connect_view(data)
            if where:
                check_expression(con, where)
            params: dict[str, Any] = {}
            conds = _conditions(data.schema, where, filters, params)
            source = "base"
            if ids is not None:
                wanted = pa.table({"id": pa.array(sorted(set(ids)), pa.string())})
                con.register("wanted", wanted)
                source = "base SEMI JOIN wanted USING (id)"
            clause = (" WHERE " + " AND ".join(conds)) if conds else ""
            sql = f"SELECT {POS} FROM {source}{clause} ORDER BY {POS}"
            selected = arrow_of(con, sql, params)[POS].to_numpy()
            found = selected if found is None else np.intersect1d(found, selected, True)
        if found is None:
            return pa.array(np.arange(data.num_rows, dtype=np.int64))
        return pa.array(found, pa.int64())

    query_key = (
        *key,
        search,
        where,
        json.dumps(filters, sort_keys=True, default=list),
        None if ids is None else hash(frozenset(ids)),
    )
    return _cached(_positions, query_key, compute, 32)


def page(
    name: str,
    *,
    offset: int = 0,
    limit: int = 50,
    search: str | None = None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    ids: Collection[str] | None = None,
    snapshot_id: int | str | None = None,
) -> Page:
    """One page of rows in table order, after search (substring in any text), a SQL
    `where` condition, equality `filters` ({column: value or values}) and an id set."""
    if offset < 0 or limit < 0:
        raise InvalidInput("--offset and --limit must not be negative.")
    data, sid, key = snapshot_view(name, snapshot_id)
    columns = [c for c in data.column_names if c != POS]
    if not (search or where or filters or ids is not None):
        rows = data.slice(offset, limit).drop_columns([POS])
        return Page(rows.to_pylist(), data.num_rows, offset, limit, sid, columns)

    positions = matching_positions(data, key, search, where, filters, ids)
    rows = data.take(positions.slice(offset, limit)).drop_columns([POS])
    return Page(rows.to_pylist(), len(positions), offset, limit, sid, columns)


def clear_query_cache() -> None:
    """Forget cached views and search results (benchmarks use this to measure cold)."""
    with _lock:
        _views.clear()
        _positions.clear()


def count_by(
    name: str,
    column: str,
    *,
    snapshot_id: int | str | None = None,
    search: str | None = None,
    where: str | None = None,
    limit: int = 50,
) -> list[tuple[Any, int]]:
    """Row counts per value of `column` (per element for list columns), largest first."""
    data, _, key = snapshot_view(name, snapshot_id)
    schema = data.schema
    if column not in schema.names or column == POS:
        raise InvalidInput(f"No column {column!r}; columns: {', '.join(schema.names)}.")
    con = connect_view(data)
    source = "t"
    if search or where:
        con.register("hits", pa.table({POS: matching_positions(data, key, search, where)}))
        source = f"base SEMI JOIN hits USING ({POS})"
    col_type = schema.field(column).type
    expr = _quote(column)
    if pa.types.is_list(col_type) or pa.types.is_large_list(col_type):
        expr = f"unnest({expr})"
    sql = (
        f"SELECT value, count(*) AS n FROM (SELECT {expr} AS value FROM {source}) "
        "GROUP BY value ORDER BY n DESC, value NULLS LAST LIMIT $lim"
    )
    out = arrow_of(con, sql, {"lim": limit})
    return list(zip(out["value"].to_pylist(), out["n"].to_pylist(), strict=True))


_TABLE_REF = re.compile(r"\b([A-Za-z_][\w]*)\s*\.\s*([A-Za-z_][\w]*)\b")


def run_sql(sql: str, *, max_rows: int = 10_000) -> pa.Table:
    """Run one read-only SELECT over catalog tables named NAMESPACE.TABLE."""
    con = connect()
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise InvalidInput(f"SQL does not parse: {exc}") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise InvalidInput("Only a single SELECT query is allowed; podium sql is read-only.")
    known = set(list_tables())
    for ns, tbl in {m.groups() for m in _TABLE_REF.finditer(sql)}:
        full = f"{ns}.{tbl}"
        if full not in known:
            continue
        data, _ = read_arrow(full)
        alias = f"__{ns}__{tbl}"
        con.register(alias, data)
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {_quote(ns)}")
        con.execute(f"CREATE VIEW {_quote(ns)}.{_quote(tbl)} AS SELECT * FROM {_quote(alias)}")
    return arrow_of(con, sql).slice(0, max_rows)
