"""`podium sql`: one read-only SELECT over catalog tables, with a time limit, a memory
cap and a row limit pushed into the query.

The query runs in a child process that is killed past its memory cap or time limit
(`podium.store.read.guarded`): DuckDB's own `memory_limit` and `interrupt()` do not stop an
expression that builds a huge list inside one chunk (`--memory 100MB --timeout 2` let
such a query use 3.6 GB for 20 s).

A query reads catalog tables (NAMESPACE.TABLE) and its own CTEs, nothing else: DuckDB's
own catalog (`duckdb_views()`, `information_schema`, `pg_catalog`), its settings and a
file named in FROM are refused before it runs, as the functions a `--where` may not call
are: the views Podium registers name every data file of a snapshot, and the settings
name the server's folders."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from podium.errors import InvalidInput
from podium.store.read import connections, duckdb_views
from podium.store.read.guarded import Limits, call_guarded, parse_size
from podium.store.read.plan import plan_snapshot
from podium.store.read.query import run_relation
from podium.store.read.where import parse_tree, revealing_calls

if TYPE_CHECKING:
    import duckdb

SQL_TIMEOUT_S = 60.0
SQL_MEMORY_LIMIT = "2GB"

# The child's interpreter, DuckDB and pyarrow (~150 MB) on top of the query's own cap.
_PROCESS_ALLOWANCE = 256 * 2**20
# Past the time limit DuckDB's interrupt answers first (a clearer error); the kill follows.
_KILL_GRACE_S = 2.0

_TABLE_REF = re.compile(r"\b([A-Za-z_][\w]*)\s*\.\s*([A-Za-z_][\w]*)\b")


def _single_select(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise InvalidInput(f"SQL does not parse: {exc}") from None
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        raise InvalidInput("Only a single SELECT query is allowed; podium sql is read-only.")


def check_reads_only_tables(con: duckdb.DuckDBPyConnection, sql: str, known: set[str]) -> None:
    """Refuse `sql` unless every table it reads is a catalog table in `known` or a CTE of
    its own, and it calls nothing that reads the server's settings, state or files."""
    _, tree = parse_tree(sql, "The query", con)
    if tree.get("error"):
        raise InvalidInput(f"SQL does not parse: {tree.get('error_message')}")
    nodes = list(_nodes(tree))
    ctes = {item["key"] for n in nodes for item in (n.get("cte_map") or {}).get("map", [])}
    for node in nodes:
        if node.get("type") == "BASE_TABLE":
            catalog, schema, name = (
                node.get(k) or "" for k in ("catalog_name", "schema_name", "table_name")
            )
            full = ".".join(p for p in (catalog, schema, name) if p)
            if not catalog and (full in known or (not schema and name in ctes)):
                continue
            what = repr(full)
        elif node.get("type") == "SHOW_REF" and node.get("table_name"):
            what = "DuckDB's own catalog (SHOW)"
        else:
            continue
        raise InvalidInput(
            f"The query reads {what}, which is no catalog table: podium sql reads tables "
            "named NAMESPACE.TABLE (see `podium tables`) and the query's own WITH names."
        )
    revealing = revealing_calls(tree)
    if revealing:
        raise InvalidInput(
            f"The query calls {', '.join(revealing)}, which reads the server's settings, "
            "state or files rather than a table's rows; podium sql reads catalog tables only."
        )


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    if isinstance(tree, dict):
        yield tree
        for value in tree.values():
            yield from _nodes(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _nodes(value)


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
        return run_relation(con, sql, params)
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
    early); the query is stopped after `timeout_s` and capped at `memory_limit`, in a
    child process killed if DuckDB's own limits do not hold."""
    if max_rows < 0:
        raise InvalidInput("--max-rows must not be negative.")
    if timeout_s <= 0:
        raise InvalidInput("--timeout must be a positive number of seconds.")
    limits = Limits(
        memory_bytes=parse_size(memory_limit) + _PROCESS_ALLOWANCE,
        timeout_s=timeout_s,
        grace_s=_KILL_GRACE_S,
        what="The query",
        how_to_fix="Narrow it (a WHERE, fewer columns, a LIMIT) or raise --memory / --timeout.",
    )
    return call_guarded(
        _run_sql,
        sql,
        max_rows=max_rows,
        timeout_s=timeout_s,
        memory_limit=memory_limit,
        limits=limits,
    )


def _run_sql(sql: str, *, max_rows: int, timeout_s: float, memory_limit: str) -> pa.Table:
    """`run_sql`'s work, in the guarded child."""
    import duckdb

    from podium.store.catalog.catalog import list_tables, load_table
    from podium.store.read.snapshots import resolve_snapshot

    body = sql.strip().rstrip(";").strip()
    known = set(list_tables())
    with duckdb.connect() as parser:
        _single_select(parser, body)
        wrapped = f"SELECT * FROM (\n{body}\n) AS __query LIMIT {int(max_rows)}"
        _single_select(parser, wrapped)  # a comment or quote must not escape the wrap
        check_reads_only_tables(parser, body, known)
    refs = sorted({f"{ns}.{tbl}" for ns, tbl in (m.groups() for m in _TABLE_REF.finditer(body))})
    opened = []
    for full in (r for r in refs if r in known):
        table = load_table(full)
        opened.append((full, table, plan_snapshot(table, resolve_snapshot(table, None))))
    # its views live in schemas named after the namespaces: a database of its own
    con = connections.connect_plans(
        [p for *_, p in opened], shared=False, memory_limit=memory_limit
    )
    for full, table, plan in opened:
        ns, tbl = full.split(".")
        duckdb_views.register_snapshot(con, tbl, table, plan, schema=ns, with_pos=False)
    try:
        return run_guarded(con, wrapped, timeout_s=timeout_s)
    finally:
        con.close()
