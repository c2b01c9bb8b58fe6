"""Queries over a table snapshot: pages, search, filters, counts, and the SQL console.

Nothing here holds a snapshot open. A page without conditions is read from the row groups
that hold it (`podium.store.read.by_position.read_span`). A search or filter runs one DuckDB scan
over the snapshot's Parquet files that returns only the matching row positions (a few
bytes a hit, cached per query, so paging through results does not search again); the
page's rows are then read by position. A page read at a snapshot is kept in memory under
that snapshot's id (a commit makes a new one), so the app's sessions and reruns on the same
page share one read (`podium.store.read.page_cache`, beside the positions). Counts and
`count_by` are queries that follow the same conditions.

Every connection can read the snapshot's own data files and nothing else, so a user's
`--where` or `podium sql` cannot read other files on the machine. A query with a `where`
runs in a child process under memory and time limits that hold (`podium.store.read.guarded`):
a condition such as `len(range(30000000)) > 0` is stopped with a clear error instead of
growing this process. The SQL console runs the same way, with `max_rows` pushed into
the query.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from podium.errors import InvalidInput
from podium.store.read import arrow_rows, batch_stream, by_position
from podium.store.read.connections import connect, quote
from podium.store.read.duckdb_views import POS, mapped_view_sql
from podium.store.read.guarded import Limits, call_guarded
from podium.store.read.guessed_view import guess_view
from podium.store.read.page_cache import Key, conditions_key, pages, positions
from podium.store.read.snapshot_view import Page, SnapshotView, arrow_of, open_view, run_relation
from podium.store.read.where import columns_read, where_select

if TYPE_CHECKING:
    import duckdb

# DuckDB and pyiceberg are imported inside the functions that use them: a cold page of a
# snapshot in the plan cache (`podium show`) needs neither.

__all__ = [
    "Page",
    "SnapshotView",
    "arrow_of",
    "connect",
    "count_by",
    "iter_rows",
    "mapped_view_sql",
    "open_view",
    "page",
    "run_relation",
]

FilterValue = str | int | float | bool | None | Collection[str | int | float | bool]

# A `where` condition's process: ~150 MB of interpreter, DuckDB's share below the cap so
# what DuckDB can bound (joins, sorts) spills or fails cleanly before the kill.
WHERE_LIMITS = Limits(
    memory_bytes=640 * 2**20,
    timeout_s=120.0,
    what="The --where filter",
    how_to_fix="Simplify the condition (no generated lists or strings such as range() or "
    "repeat()), or narrow the rows first with --search.",
)
WHERE_DUCKDB: dict[str, Any] = {"memory_limit": "384MB", "threads": 2}


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
        # A semi join neither repeats rows nor needs its keys sorted.
        wanted = pa.array(ids if isinstance(ids, list) else list(ids), pa.string())
        con.register("wanted", pa.table({"id": wanted}))
        source += " SEMI JOIN wanted USING (id)"
    return source + ((" WHERE " + " AND ".join(conds)) if conds else "")


def matching_positions(
    view: SnapshotView,
    *,
    search: str | None = None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    ids: Collection[str] | None = None,
    first: int | None = None,
    conditions: Key | None = None,
) -> np.ndarray:
    """Ascending positions of the rows passing every condition: all of them (cached),
    or only the `first` ones, found without scanning past them. `conditions` is their
    `conditions_key` where the caller has made it (an id set's digest costs ~0.15 s at
    141k ids)."""
    if conditions is None:
        conditions = conditions_key(search, where, filters, ids)
    key = (*view.key, *conditions)
    kept = positions.get(key)
    if kept is not None:
        return kept if first is None else kept[:first]
    if where:
        where_select(where)  # a refusal needs no child process
        found = call_guarded(
            _positions_of,
            view.plan.table,
            view.snapshot_id,
            search=search,
            where=where,
            filters=filters,
            ids=None if ids is None else sorted(set(ids)),
            first=first,
            limits=WHERE_LIMITS,
        )
    else:
        found = _find_positions(view, search=search, filters=filters, ids=ids, first=first)
    if first is None:
        positions.keep(key, found)
    return found


def _find_positions(
    view: SnapshotView,
    *,
    search: str | None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None,
    ids: Collection[str] | None,
    first: int | None,
    **settings: Any,
) -> np.ndarray:
    """The matching positions, ascending, found in this process."""
    names = [n for n in view.schema.names if n != POS]
    read = columns_read(names, search=search, where=where, filters=filters, ids=ids is not None)
    con = view.connection(None if view.mapping else read, **settings)
    params: dict[str, Any] = {}
    source = filtered_source(
        con, view, search=search, where=where, filters=filters, ids=ids, params=params
    )
    # Without ORDER BY, DuckDB keeps the files' order, so LIMIT stops at the first hits.
    sql = f"SELECT {POS} FROM {source}" + (" LIMIT $first" if first is not None else "")
    if first is not None:
        params["first"] = first
    return np.sort(arrow_of(con, sql, params)[POS].to_numpy())


def _positions_of(
    name: str, snapshot_id: int | None, **conditions: Any
) -> np.ndarray:  # in the guarded child
    return _find_positions(open_view(name, snapshot_id), **conditions, **WHERE_DUCKDB)


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
    conditions = conditions_key(search, where, filters, ids)

    def read(view: SnapshotView) -> Page:
        data, total = pages.get(
            (*view.key, *conditions, offset, limit, count),
            lambda: _read_page(view, offset, limit, search, where, filters, ids, count, conditions),
        )
        columns = list(view.schema.names)
        return Page(arrow_rows.to_rows(data), total, offset, limit, view.snapshot_id, columns)

    # A plain page starts reading while the catalog is asked for the table's metadata
    # (`guessed_view`); conditions run long enough that the question costs them little.
    plain = not (search or where or filters or ids is not None)
    guess = guess_view(name, snapshot_id) if plain else None
    if guess is None:
        return read(open_view(name, snapshot_id))
    try:
        guessed: Page | None = read(guess.view)
    except Exception:  # noqa: BLE001 - the plain path below reads again and reports it
        guessed = None
    if guessed is not None and guess.confirmed:
        return guessed
    return read(open_view(name, snapshot_id, guess.answer()))


def _read_page(
    view: SnapshotView,
    offset: int,
    limit: int,
    search: str | None,
    where: str | None,
    filters: Mapping[str, FilterValue] | None,
    ids: Collection[str] | None,
    count: bool,
    conditions: Key,
) -> tuple[pa.Table, int | None]:
    """The page's rows under canonical names, and the matching rows' count."""
    if not (search or where or filters or ids is not None):
        raw = by_position.read_span(view.table, view.plan, offset, limit)
        return _own_buffers(view.canonical(raw)), view.plan.total
    found = matching_positions(
        view,
        search=search,
        where=where,
        filters=filters,
        ids=ids,
        first=None if count else offset + limit,
        conditions=conditions,
    )
    raw = by_position.read_positions(view.table, view.plan, found[offset : offset + limit])
    return _own_buffers(view.canonical(raw)), len(found) if count else None


def _own_buffers(data: pa.Table) -> pa.Table:
    """`data` copied into buffers of its own: a page is a slice of the row groups it was
    read from, and kept as it is it would keep those whole groups (MBs) in memory."""
    if data.num_rows == 0:
        return data
    arrays = [pa.concat_arrays(column.chunks) for column in data.columns]
    return pa.Table.from_arrays(arrays, schema=data.schema)


def iter_rows(
    view: SnapshotView,
    columns: Sequence[str] | None = None,
    batch_size: int = batch_stream.DEFAULT_BATCH,
) -> Iterator[dict[str, Any]]:
    """Every row of the snapshot in the order `page` shows them (Browse, `podium show`),
    under canonical names: what "the first N rows" of a table means for the jobs that
    take some (generate, compare). An edited row stays in its old row's place, where a
    DuckDB scan of the files meets it at the end. (`batch_stream.iter_batches`, which training's
    `max_rows` and code-exec read, streams this same order.)"""
    wanted = list(columns) if columns is not None else list(view.schema.names)
    missing = [c for c in wanted if c not in view.schema.names]
    if missing:
        raise InvalidInput(
            f"No column {', '.join(map(repr, missing))}; columns: {', '.join(view.schema.names)}."
        )
    stored = view.plan.column_names
    raw = list(dict.fromkeys(view.mapping.get(c, c) for c in wanted)) if view.mapping else wanted
    if view.mapping and "messages" in wanted:  # the mapped messages read its role/content
        raw = list(dict.fromkeys([*raw, view.mapping.get("messages", "messages")]))
    raw = [c for c in raw if c in stored]
    for batch in batch_stream.iter_batches(view.table, view.plan, raw, batch_size):
        data = view.canonical(pa.Table.from_batches([batch]))
        yield from arrow_rows.to_rows(data.select([c for c in wanted if c in data.column_names]))


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
    if where:
        where_select(where)
        return call_guarded(
            _count_by,
            name,
            column,
            snapshot_id=snapshot_id,
            search=search,
            where=where,
            filters=filters,
            limit=limit,
            limits=WHERE_LIMITS,
        )
    return _count_by(
        name, column, snapshot_id=snapshot_id, search=search, filters=filters, limit=limit
    )


def _count_by(
    name: str,
    column: str,
    *,
    snapshot_id: int | str | None,
    search: str | None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None,
    limit: int,
) -> list[tuple[Any, int]]:
    view = open_view(name, snapshot_id)
    if column not in view.schema.names:
        raise InvalidInput(f"No column {column!r}; columns: {', '.join(view.schema.names)}.")
    con = view.connection(**(WHERE_DUCKDB if where else {}))
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
