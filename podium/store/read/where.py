"""A user's `--where` filter, made safe to splice into a query: DuckDB parses it, the
tree is checked to be one condition over the row, and the SQL is rebuilt from the tree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from podium.errors import InvalidInput

if TYPE_CHECKING:
    import duckdb


def where_select(where: str) -> str:
    """`SELECT * FROM t WHERE <where>` rebuilt by DuckDB from its own parse tree.

    The expression is parsed alone, checked to be one condition over `t` (no subquery, so
    no table function such as read_csv, no ORDER BY/LIMIT/UNION tail) and then written
    back out from the tree, fully parenthesised. Callers use the result as a subquery:
    a payload such as `a') OR (1=1` cannot close it and escape the conditions and id
    sets that are ANDed around it, because its text never reaches the final query."""
    shown = where if len(where) <= 200 else where[:200] + "..."
    con, tree = parse_tree(f"SELECT * FROM t WHERE {where}", f"Filter expression {shown!r}")
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
    revealing = revealing_calls(node["where_clause"])
    if revealing:
        raise InvalidInput(
            f"Filter expression {shown!r} calls {', '.join(revealing)}, which "
            "reads the server's settings or state rather than the row; a filter may only "
            "test the row's own columns."
        )
    return str(_one_value(con, "SELECT json_deserialize_sql($j)", {"j": json.dumps(tree)}))


def columns_read(
    names: Sequence[str],
    *,
    search: str | None,
    where: str | None,
    filters: Iterable[str] | None,
    ids: bool,
) -> list[str] | None:
    """The columns of `names` that a query for rows passing these conditions reads: a
    `where`'s columns, the filtered ones, `id` for an id set; None (every column) for a
    search, which reads every text."""
    if search:
        return None
    wanted = set(filters or ()) | ({"id"} if ids else set())
    if where:
        wanted |= set(where_columns(where, names))
    # A condition on no column (`1 = 1`) still needs one to count the rows by.
    return [n for n in names if n in wanted] or list(names[:1])


def where_columns(where: str, names: Sequence[str]) -> list[str]:
    """The columns of `names` that condition `where` (already accepted by `where_select`)
    refers to, matched as DuckDB matches identifiers (ignoring case). A name that is no
    column (a lambda's parameter, the alias `t`) is left out; a struct field that shares a
    column's name only adds that column."""
    _, tree = parse_tree(f"SELECT * FROM t WHERE {where}", "Filter expression")
    tree = tree["statements"][0]["node"]["where_clause"]  # not `SELECT *` around it
    if _reads_whole_rows(tree):
        return list(names)
    refs = {name.lower() for name in _column_refs(tree)}
    return [name for name in names if name.lower() in refs]


# How deep a query or condition may nest. DuckDB's parse tree comes back as JSON about
# three levels per level of the SQL, and reading it (json, the checks below and in
# podium sql) recurses once a level: a few hundred NOTs (DuckDB's own limit is 1,000
# expression levels) or nested FROM subqueries (no limit) ended in a RecursionError.
MAX_DEPTH = 100
_MAX_TREE_DEPTH = 3 * MAX_DEPTH + 20
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_BRACKET = re.compile(r"[\[\]{}]")


def parse_tree(
    sql: str, what: str, con: duckdb.DuckDBPyConnection | None = None
) -> tuple[duckdb.DuckDBPyConnection, dict[str, Any]]:
    """The connection that parsed (`con`, else a fresh one; it parses no deeper than
    MAX_DEPTH from now on) and DuckDB's parse tree of `sql` (`error` set when it does not
    parse); InvalidInput naming `what` when it nests more than MAX_DEPTH levels."""
    import duckdb

    con = con or duckdb.connect()
    con.execute(f"SET max_expression_depth = {MAX_DEPTH}")
    text = str(_one_value(con, "SELECT json_serialize_sql($q)", {"q": sql}))
    if _json_depth(text) <= _MAX_TREE_DEPTH:
        tree: dict[str, Any] = json.loads(text)
        if "max_expression_depth" not in str(tree.get("error_message")):
            return con, tree
    raise InvalidInput(
        f"{what} is nested too deeply (more than about {MAX_DEPTH} levels of operators, "
        "calls or subqueries); write it with fewer nested parts."
    )


def _json_depth(text: str) -> int:
    """How deep JSON `text` nests, counted without recursion (strings skipped)."""
    depth = deepest = 0
    for bracket in _JSON_BRACKET.findall(_JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _reads_whole_rows(tree: Any) -> bool:
    """`COLUMNS(...)`, `*`, or the row itself (`t`): every column, whatever it names."""
    if isinstance(tree, dict):
        if tree.get("class") == "STAR" or (
            tree.get("class") == "COLUMN_REF" and tree.get("column_names") == ["t"]
        ):
            return True
        return any(_reads_whole_rows(v) for v in tree.values())
    if isinstance(tree, list):
        return any(_reads_whole_rows(v) for v in tree)
    return False


def _column_refs(tree: Any) -> Iterator[str]:
    if isinstance(tree, dict):
        if tree.get("class") == "COLUMN_REF":
            yield from (n for n in tree.get("column_names", ()) if isinstance(n, str))
        for value in tree.values():
            yield from _column_refs(value)
    elif isinstance(tree, list):
        for value in tree:
            yield from _column_refs(value)


# Functions that tell about the server, not the row: settings (temp_directory and the
# allowed paths name server folders), variables, the query text, the environment.
_REVEALING = frozenset(
    {
        "current_setting", "getvariable", "getenv", "current_query", "current_query_id",
        "current_database", "current_catalog", "current_schema", "current_schemas",
        "current_user", "current_role", "session_user", "user", "current_connection_id",
        "current_transaction_id", "txid_current", "version", "which_secret",
    }
)  # fmt: skip
_REVEALING_PREFIXES = ("duckdb_", "pg_", "pragma_", "read_", "glob", "sql_", "query")


def _functions(tree: Any) -> set[str]:
    """Lower-cased names of every function called anywhere in `tree`."""
    found: set[str] = set()
    if isinstance(tree, dict):
        if tree.get("class") == "FUNCTION" and isinstance(tree.get("function_name"), str):
            found.add(tree["function_name"].lower())
        for value in tree.values():
            found |= _functions(value)
    elif isinstance(tree, list):
        for value in tree:
            found |= _functions(value)
    return found


def revealing_calls(tree: Any) -> list[str]:
    """The functions called anywhere in a parse tree (`json_serialize_sql`) that read the
    server's settings, state or files rather than rows (a filter's or `podium sql`'s)."""
    called = _functions(tree)
    return sorted(called & _REVEALING | {f for f in called if f.startswith(_REVEALING_PREFIXES)})


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
