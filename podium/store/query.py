"""Queries over a table snapshot: pages, search, filters, counts, and the SQL console.

Nothing here holds a snapshot. A page without conditions is read from the row groups
that hold it (`podium.store.scan.read_span`). A search or filter runs one DuckDB scan
over the snapshot's Parquet files that returns only the matching row positions (a few
bytes a hit, cached per query, so paging through results does not search again); the
page's rows are then read by position. Counts and `count_by` are queries that follow
the same conditions.

Every connection can read the snapshot's own data files and nothing else, so a user's
`--where` or `podium sql` cannot read other files on the machine. The SQL console also
runs under a time limit and a memory cap, with `max_rows` pushed into the query.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.store import scan
from podium.store.plan import FilePlan, plan_snapshot
from podium.store.plan_cache import cached_snapshot
from podium.store.scan import POS, connect, mapped_view_sql, quote

if TYPE_CHECKING:
    import duckdb
    from pyiceberg.table import Table

# DuckDB and pyiceberg are imported inside the functions that use them: a cold page of a
# snapshot in the plan cache (`podium show`) needs neither.

__all__ = ["Page", "connect", "count_by", "mapped_view_sql", "page", "run_sql"]

FilterValue = str | int | float | bool | None | Collection[str | int | float | bool]

SQL_TIMEOUT_S = 60.0
SQL_MEMORY_LIMIT = "2GB"
_POSITIONS_BYTES = 64 * 2**20  # cache budget for search/filter results (int64 positions)


@dataclass
class Page:
    rows: list[dict[str, Any]]
    total: int | None  # rows matching the search and filters; None when not counted
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

    def connection(self, **settings: Any) -> duckdb.DuckDBPyConnection:
        """A guarded connection where `t` is the snapshot (canonical names + `__pos`)."""
        con = scan.connect_plans([self.plan], **settings)
        scan.register_snapshot(con, "t", self.table, self.plan, self.mapping)
        return con


def open_view(name: str, snapshot_id: int | str | None = None) -> SnapshotView:
    cached = cached_snapshot(name, snapshot_id)
    table: Table | None = None
    if cached is not None:
        plan, raw = cached.plan, cached.mapping
    else:
        from podium.store.catalog import load_table
        from podium.store.schema import PROP_MAPPING
        from podium.store.snapshots import resolve_snapshot

        table = load_table(name)
        plan = plan_snapshot(table, resolve_snapshot(table, snapshot_id))
        raw = table.properties.get(PROP_MAPPING)
    mapping = json.loads(raw) if raw else {}
    schema = plan.schema
    if mapping:
        schema = SnapshotView(table, plan, mapping, schema).canonical(schema.empty_table()).schema
    return SnapshotView(table, plan, mapping, schema)


def register_view(
    con: duckdb.DuckDBPyConnection,
    data: pa.Table | pa.RecordBatchReader,
    mapping: Mapping[str, str],
) -> None:
    """Register raw rows (a table or a stream of batches) as `t` under canonical names."""
    if mapping:
        con.register("raw", data)
        con.execute("CREATE TEMP VIEW t AS " + mapped_view_sql(data.schema.names, mapping))
    else:
        con.register("t", data)


def table_mapping(name: str) -> dict[str, str]:
    from podium.store.catalog import load_table
    from podium.store.schema import PROP_MAPPING

    raw = load_table(name).properties.get(PROP_MAPPING)
    return json.loads(raw) if raw else {}


def where_select(where: str) -> str:
    """`SELECT * FROM t WHERE <where>` rebuilt by DuckDB from its own parse tree.

    The expression is parsed alone, checked to be one condition over `t` (no subquery, so
    no table function such as read_csv, no ORDER BY/LIMIT/UNION tail) and then written
    back out from the tree, fully parenthesised. Callers use the result as a subquery:
    a payload such as `a') OR (1=1` cannot close it and escape the conditions and id
    sets that are ANDed around it, because its text never reaches the final query."""
    import duckdb

    sql = f"SELECT * FROM t WHERE {where}"
    con = duckdb.connect()
    tree = json.loads(_one_value(con, "SELECT json_serialize_sql($q)", {"q": sql}))
    shown = where if len(where) <= 200 else where[:200] + "..."
    if tree.get("error"):
        raise InvalidInput(
            f"Filter expression {shown!r} does not parse as a single SQL condition: "
            f"{tree.get('error_message')}. Write a condition such as \"split = 'test'\"."
        )
    statements = tree["statements"]
    node = statements[0]["node"] if len(statements) == 1 else {}
    if not _only_a_where(node):
        raise InvalidInput(
            f"Filter expression {shown!r} must be a single SQL condition (no ORDER BY, LIMIT, "
            "GROUP BY, UNION or a second statement)."
        )
    if _has_subquery(node["where_clause"]):
        raise InvalidInput(
            f"Filter expression {shown!r} contains a subquery; a filter may only use the "
            "row's own columns (no SELECT, and no table functions such as read_csv)."
        )
    return str(_one_value(con, "SELECT json_deserialize_sql($j)", {"j": json.dumps(tree)}))


def _one_value(con: duckdb.DuckDBPyConnection, sql: str, params: Mapping[str, Any]) -> Any:
    row = con.execute(sql, params).fetchone()
    if row is None:
        raise AssertionError(f"{sql} returned no row")  # a scalar SELECT always has one
    return row[0]


def _only_a_where(node: dict[str, Any]) -> bool:
    source = node.get("from_table") or {}
    star = node.get("select_list") or [{}]
    return (
        node.get("type") == "SELECT_NODE"
        and node.get("where_clause") is not None
        and not node.get("modifiers")
        and not (node.get("cte_map") or {}).get("map")
        and not node.get("group_expressions")
        and not node.get("group_sets")
        and node.get("having") is None
        and node.get("qualify") is None
        and node.get("sample") is None
        and source.get("type") == "BASE_TABLE"
        and source.get("table_name") == "t"
        and len(star) == 1
        and star[0].get("class") == "STAR"
    )


def _has_subquery(tree: Any) -> bool:
    if isinstance(tree, dict):
        if tree.get("class") == "SUBQUERY" or tree.get("type") in ("SELECT_NODE", "SUBQUERY"):
            return True
        return any(_has_subquery(v) for v in tree.values())
    if isinstance(tree, list):
        return any(_has_subquery(v) for v in tree)
    return False


def _is_list(t: pa.DataType) -> bool:
    return bool(pa.types.is_list(t) or pa.types.is_large_list(t))


def _is_text(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def search_condition(schema: pa.Schema, param: str) -> str:
    """SQL true when any text of a row (any string column, any message's content)
    matches `$param`, a pattern from `search_pattern`, ignoring case.

    A case-insensitive RE2 match of the escaped text measured fastest of DuckDB's ways
    on 200k rows of ~7.7 KB (see README): about 2x `ILIKE` and 2.5x `contains(lower())`.
    """
    parts = []
    for f in schema:
        if f.name == POS:
            continue
        if _is_text(f.type):
            parts.append(f"coalesce(regexp_matches({quote(f.name)}, ${param}, 'i'), false)")
        elif (
            _is_list(f.type)
            and pa.types.is_struct(f.type.value_type)
            and f.type.value_type.get_field_index("content") >= 0
        ):
            parts.append(
                f"coalesce(list_bool_or(list_transform({quote(f.name)}, "
                f"lambda m: regexp_matches(m.content, ${param}, 'i'))), false)"
            )
    return "(" + " OR ".join(parts) + ")" if parts else "false"


def search_pattern(text: str) -> str:
    """`text` as a regular expression matching exactly that text (no wildcards)."""
    import duckdb

    escaped = duckdb.connect().execute("SELECT regexp_escape($t)", {"t": text}).fetchone()
    return str(escaped[0]) if escaped else text


def conditions(
    schema: pa.Schema,
    *,
    search: str | None,
    filters: Mapping[str, FilterValue] | None,
    params: dict[str, Any],
) -> list[str]:
    """SQL conditions for a search and equality filters, values bound as parameters."""
    conds: list[str] = []
    if search:
        params["needle"] = search_pattern(search)
        conds.append(search_condition(schema, "needle"))
    for i, (column, value) in enumerate((filters or {}).items()):
        if column not in schema.names or column == POS:
            names = ", ".join(n for n in schema.names if n != POS)
            raise InvalidInput(f"No column {column!r} to filter on; columns: {names}.")
        values = (
            [value] if isinstance(value, (str, int, float, bool)) or value is None else list(value)
        )
        if values == [None]:
            conds.append(f"{quote(column)} IS NULL")
            continue
        key = f"f{i}"
        params[key] = values
        if _is_list(schema.field(column).type):
            conds.append(f"list_has_any({quote(column)}, ${key})")
        else:
            conds.append(f"list_contains(${key}, {quote(column)})")
    return conds


def arrow_of(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> pa.Table:
    import duckdb

    try:
        return _arrow(con, sql, params)
    except duckdb.Error as exc:
        raise InvalidInput(f"Query failed: {exc}") from None


def _arrow(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None
) -> pa.Table:
    relation = con.sql(sql, params=params or None)
    return relation.to_arrow_table() if relation is not None else pa.table({})


def filtered_source(
    con: duckdb.DuckDBPyConnection,
    view: SnapshotView,
    *,
    search: str | None,
    where: str | None,
    filters: Mapping[str, FilterValue] | None,
    ids: Collection[str] | None,
    params: dict[str, Any],
) -> str:
    """`FROM ...` clause of the rows passing every condition, on a connection with `t`.
    A `where` expression is a subquery rebuilt from its parse tree (`where_select`)."""
    conds = conditions(view.schema, search=search, filters=filters, params=params)
    source = f"({where_select(where)}) AS t" if where else "t"
    if ids is not None:
        con.register("wanted", pa.table({"id": pa.array(sorted(set(ids)), pa.string())}))
        source += " SEMI JOIN wanted USING (id)"
    return source + ((" WHERE " + " AND ".join(conds)) if conds else "")


_positions: OrderedDict[tuple[Any, ...], np.ndarray] = OrderedDict()
_lock = threading.Lock()


def matching_positions(
    view: SnapshotView,
    *,
    search: str | None = None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    ids: Collection[str] | None = None,
    first: int | None = None,
) -> np.ndarray:
    """Ascending positions of the rows passing every condition: all of them (cached),
    or only the `first` ones, found without scanning past them."""
    key = (
        *view.key,
        search,
        where,
        json.dumps(filters, sort_keys=True, default=list),
        None if ids is None else hash(frozenset(ids)),
    )
    with _lock:
        if key in _positions:
            _positions.move_to_end(key)
            found = _positions[key]
            return found if first is None else found[:first]
    con = view.connection()
    params: dict[str, Any] = {}
    source = filtered_source(
        con, view, search=search, where=where, filters=filters, ids=ids, params=params
    )
    # Without ORDER BY, DuckDB keeps the files' order, so LIMIT stops at the first hits.
    sql = f"SELECT {POS} FROM {source}" + (" LIMIT $first" if first is not None else "")
    if first is not None:
        params["first"] = first
    found = np.sort(arrow_of(con, sql, params)[POS].to_numpy())
    if first is None:
        with _lock:
            _positions[key] = found
            while sum(v.nbytes for v in _positions.values()) > _POSITIONS_BYTES:
                _positions.popitem(last=False)
    return found


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
    count: bool = True,
) -> Page:
    """One page of rows in table order, after search (substring in any text), a SQL
    `where` condition, equality `filters` ({column: value or values}) and an id set.

    With `count=False` a search stops at the page's last hit and `total` is None."""
    if offset < 0 or limit < 0:
        raise InvalidInput("--offset and --limit must not be negative.")
    view = open_view(name, snapshot_id)
    columns = list(view.schema.names)
    if not (search or where or filters or ids is not None):
        raw = scan.read_span(view.table, view.plan, offset, limit)
        rows = scan.to_rows(view.canonical(raw))
        return Page(rows, view.plan.total, offset, limit, view.snapshot_id, columns)
    found = matching_positions(
        view,
        search=search,
        where=where,
        filters=filters,
        ids=ids,
        first=None if count else offset + limit,
    )
    raw = scan.read_positions(view.table, view.plan, found[offset : offset + limit])
    total = len(found) if count else None
    return Page(scan.to_rows(view.canonical(raw)), total, offset, limit, view.snapshot_id, columns)


def clear_query_cache() -> None:
    """Forget cached plans and search results (benchmarks use this to measure cold)."""
    from podium.store.plan import clear_plans

    with _lock:
        _positions.clear()
    clear_plans()


def count_by(
    name: str,
    column: str,
    *,
    snapshot_id: int | str | None = None,
    search: str | None = None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    limit: int = 50,
) -> list[tuple[Any, int]]:
    """Row counts per value of `column` (per element for list columns), largest first,
    over the rows passing the search and filters."""
    view = open_view(name, snapshot_id)
    if column not in view.schema.names:
        raise InvalidInput(f"No column {column!r}; columns: {', '.join(view.schema.names)}.")
    con = view.connection()
    params: dict[str, Any] = {"lim": limit}
    source = filtered_source(
        con, view, search=search, where=where, filters=filters, ids=None, params=params
    )
    expr = quote(column)
    if _is_list(view.schema.field(column).type):
        expr = f"unnest({expr})"
    sql = (
        f"SELECT value, count(*) AS n FROM (SELECT {expr} AS value FROM {source}) "
        "GROUP BY value ORDER BY n DESC, value NULLS LAST LIMIT $lim"
    )
    out = arrow_of(con, sql, params)
    return list(zip(out["value"].to_pylist(), out["n"].to_pylist(), strict=True))


_TABLE_REF = re.compile(r"\b([A-Za-z_][\w]*)\s*\.\s*([A-Za-z_][\w]*)\b")


def _single_select(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise InvalidInput(f"SQL does not parse: {exc}") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise InvalidInput("Only a single SELECT query is allowed; podium sql is read-only.")


def run_guarded(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, Any] | None = None,
    *,
    timeout_s: float,
) -> pa.Table:
    """Run `sql`, interrupting it after `timeout_s`; limits become clear errors."""
    import duckdb

    timer = threading.Timer(timeout_s, con.interrupt)
    timer.daemon = True
    timer.start()
    try:
        return _arrow(con, sql, params)
    except duckdb.InterruptException:
        raise InvalidInput(
            f"The query was stopped after {timeout_s:g} s, its time limit. Narrow it "
            "(a WHERE, fewer columns, a LIMIT) or raise the limit with --timeout."
        ) from None
    except duckdb.OutOfMemoryException as exc:
        raise InvalidInput(
            f"The query needs more than its memory cap: {exc}. Narrow it or raise the "
            "cap with --memory."
        ) from None
    except duckdb.Error as exc:
        raise InvalidInput(f"Query failed: {exc}") from None
    finally:
        timer.cancel()
        # A live timer keeps `con.interrupt`, and so the connection, alive; a DuckDB
        # connection still alive at interpreter exit aborts the process.
        timer.join()


def run_sql(
    sql: str,
    *,
    max_rows: int = 10_000,
    timeout_s: float = SQL_TIMEOUT_S,
    memory_limit: str = SQL_MEMORY_LIMIT,
) -> pa.Table:
    """Run one read-only SELECT over catalog tables named NAMESPACE.TABLE.

    At most `max_rows` rows come back (a LIMIT around the query, so DuckDB stops
    early); the query is stopped after `timeout_s` and capped at `memory_limit`."""
    import duckdb

    from podium.store.catalog import list_tables, load_table
    from podium.store.snapshots import resolve_snapshot

    if max_rows < 0:
        raise InvalidInput("--max-rows must not be negative.")
    body = sql.strip().rstrip(";").strip()
    with duckdb.connect() as parser:
        _single_select(parser, body)
        wrapped = f"SELECT * FROM (\n{body}\n) AS __query LIMIT {int(max_rows)}"
        _single_select(parser, wrapped)  # a comment or quote must not escape the wrap
    known = set(list_tables())
    refs = sorted({f"{ns}.{tbl}" for ns, tbl in (m.groups() for m in _TABLE_REF.finditer(body))})
    opened = []
    for full in (r for r in refs if r in known):
        table = load_table(full)
        opened.append((full, table, plan_snapshot(table, resolve_snapshot(table, None))))
    con = scan.connect_plans([p for *_, p in opened], memory_limit=memory_limit)
    for full, table, plan in opened:
        ns, tbl = full.split(".")
        scan.register_snapshot(con, tbl, table, plan, schema=ns, with_pos=False)
    try:
        return run_guarded(con, wrapped, timeout_s=timeout_s)
    finally:
        con.close()
