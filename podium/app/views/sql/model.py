"""What the SQL page runs and shows, without Streamlit: one read-only SELECT through
`podium sql`'s guarded runner (`podium.store.read.sql_console.run_sql`), with its limits
(time, memory, rows), and the result as a frame for a grid.

Nested values (a conversation's messages, tags) come back as JSON text: the grid
shows them whole instead of as "[object]".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa

from podium.errors import InvalidInput
from podium.store.catalog.catalog import list_tables as list_tables
from podium.store.read.sql_console import SQL_MEMORY_LIMIT, SQL_TIMEOUT_S, run_sql

DEFAULT_ROWS = 100  # `podium sql --max-rows`'s default
MOST_ROWS = 10_000  # a grid past this is not read; narrow the query instead
EXAMPLE = "SELECT split, count(*) AS n FROM demo.chat GROUP BY split ORDER BY n DESC"


def limits_text(max_rows: int) -> str:
    return (
        f"Read-only: one SELECT (DuckDB dialect) over tables named NAMESPACE.TABLE, each "
        f"read at its current snapshot. At most {max_rows:,} rows come back; the query is "
        f"stopped after {SQL_TIMEOUT_S:g} s and capped at {SQL_MEMORY_LIMIT} of memory, "
        "the limits of `podium sql`."
    )


@dataclass(frozen=True)
class SqlResult:
    frame: pd.DataFrame
    caption: str  # '3 rows · 2 columns', and whether the row limit cut it
    value: tuple[str, Any] | None = None  # a one-row, one-column answer: (column, value)


def _plain(value: Any) -> Any:
    return json.dumps(value, default=str, ensure_ascii=False) if value is not None else None


def _frame(table: pa.Table) -> pd.DataFrame:
    nested = (pa.types.is_nested(f.type) for f in table.schema)
    columns = {
        name: [_plain(v) for v in table.column(name).to_pylist()]
        if is_nested
        else table.column(name).to_pylist()
        for name, is_nested in zip(table.column_names, nested, strict=True)
    }
    return pd.DataFrame(columns, columns=table.column_names)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def run_query(sql: str, max_rows: int = DEFAULT_ROWS) -> SqlResult:
    """Run `sql` as `podium sql` does; a refusal, a parse error or a limit is an
    `InvalidInput` whose message says what to change."""
    if not sql.strip():
        raise InvalidInput(f"Write a SELECT first, e.g. {EXAMPLE}")
    if not 1 <= max_rows <= MOST_ROWS:
        raise InvalidInput(f"Rows to show must be between 1 and {MOST_ROWS:,}.")
    table = run_sql(sql, max_rows=max_rows, timeout_s=SQL_TIMEOUT_S, memory_limit=SQL_MEMORY_LIMIT)
    rows, columns = table.num_rows, table.num_columns
    caption = (
        f"{rows:,} row{'s' if rows != 1 else ''} · {columns} column{'s' if columns != 1 else ''}"
    )
    if rows == max_rows:
        caption += f" (the first {max_rows:,}: the query may have more)"
    frame = _frame(table)
    value = (str(frame.columns[0]), frame.iat[0, 0]) if rows == 1 and columns == 1 else None
    return SqlResult(frame, caption, value)
