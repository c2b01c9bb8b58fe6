"""Per-table statistics for the Browse page and `podium stats`: rows, turns and
characters per role, the distribution of sample lengths and turn counts, sources.

Each figure is a DuckDB query over the snapshot's files that follows the active search
and filters; the length distribution comes back binned, so its size does not grow
with the table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from podium.errors import InvalidInput
from podium.store.read.guarded import call_guarded
from podium.store.read.query import (
    WHERE_DUCKDB,
    WHERE_LIMITS,
    FilterValue,
    arrow_of,
    filtered_source,
    open_view,
)
from podium.store.read.where import where_select

LENGTH_BINS = 30


@dataclass
class TableStats:
    rows: int
    turns: int
    mean_turns: float
    by_role: list[dict[str, Any]]  # role, turns, chars, mean_chars
    turn_counts: list[dict[str, Any]]  # turns, rows
    length_bins: list[dict[str, Any]]  # from, to, label, samples: characters per sample
    sources: list[dict[str, Any]]  # source, rows
    snapshot_id: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _span(first: int, last: int) -> str:
    return f"{first:,}" if first == last else f"{first:,}–{last:,}"


def table_stats(
    name: str,
    snapshot_id: int | str | None = None,
    *,
    search: str | None = None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None = None,
    bins: int = LENGTH_BINS,
) -> TableStats:
    """Statistics of the rows of `name` passing the search and filters; with a `where`,
    computed in a guarded child process (`podium.store.read.guarded`)."""
    if where:
        where_select(where)  # a refusal needs no child process
        return call_guarded(
            _table_stats,
            name,
            snapshot_id,
            search=search,
            where=where,
            filters=filters,
            bins=bins,
            limits=WHERE_LIMITS,
        )
    return _table_stats(name, snapshot_id, search=search, filters=filters, bins=bins)


def _table_stats(
    name: str,
    snapshot_id: int | str | None,
    *,
    search: str | None,
    where: str | None = None,
    filters: Mapping[str, FilterValue] | None,
    bins: int,
) -> TableStats:
    settings = WHERE_DUCKDB if where else {}
    view = open_view(name, snapshot_id)
    if "messages" not in view.schema.names:
        raise InvalidInput(
            f"Table {name} has no messages column; map one with `podium map {name} "
            "--messages COLUMN` to see chat statistics."
        )
    con = view.connection(**settings)
    params: dict[str, Any] = {}
    source = filtered_source(
        con, view, search=search, where=where, filters=filters, ids=None, params=params
    )
    # One pass computes the per-row figures into a small temp table (a few numbers a
    # row, never the text), so the charts do not each rescan the messages.
    arrow_of(
        con,
        "CREATE TEMP TABLE per_row AS SELECT coalesce(len(messages), 0) AS turns, "
        "coalesce(list_sum(list_transform(messages, lambda m: "
        "coalesce(length(m.content), 0))), 0)::BIGINT AS chars"
        + (", source" if "source" in view.schema.names else "")
        + f" FROM {source}",
        params or None,
    )

    def rows_of(sql: str) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = arrow_of(con, sql).to_pylist()
        return rows

    # A second connection: a snapshot streamed through pyiceberg can be scanned once.
    role_con = view.connection(**settings)
    role_params: dict[str, Any] = {}
    role_source = filtered_source(
        role_con, view, search=search, where=where, filters=filters, ids=None, params=role_params
    )
    by_role = arrow_of(
        role_con,
        "SELECT m.role AS role, count(*) AS turns, sum(length(m.content))::BIGINT AS chars, "
        "round(avg(length(m.content)), 1) AS mean_chars "
        f"FROM (SELECT unnest(messages) AS m FROM {role_source}) GROUP BY 1 ORDER BY turns DESC",
        role_params,
    ).to_pylist()
    turn_counts = rows_of("SELECT turns, count(*) AS rows FROM per_row GROUP BY 1 ORDER BY 1")
    sources = (
        rows_of(
            "SELECT source, count(*) AS rows FROM per_row GROUP BY 1 ORDER BY rows DESC LIMIT 20"
        )
        if "source" in view.schema.names
        else []
    )
    rows = sum(r["rows"] for r in turn_counts)
    turns = sum(r["turns"] * r["rows"] for r in turn_counts)
    return TableStats(
        rows=rows,
        turns=turns,
        mean_turns=round(turns / rows, 2) if rows else 0.0,
        by_role=by_role,
        turn_counts=turn_counts,
        length_bins=_length_bins(con, bins),
        sources=sources,
        snapshot_id=view.snapshot_id,
    )


def _length_bins(con: Any, bins: int) -> list[dict[str, Any]]:
    """Samples per character-length bin, with whole-number edges so a label like
    "40–59" means exactly those lengths."""
    low, high = con.execute("SELECT min(chars), max(chars) FROM per_row").fetchone()
    if low is None:
        return []
    width = max(1, math.ceil((high - low + 1) / bins))
    counts = dict(
        con.execute(
            "SELECT (chars - $low) // $width AS b, count(*) FROM per_row GROUP BY 1",
            {"low": low, "width": width},
        ).fetchall()
    )
    out = []
    for i in range(int(max(counts)) + 1):
        first, last = low + i * width, low + (i + 1) * width - 1
        out.append(
            {"from": first, "to": last, "label": _span(first, last), "samples": counts.get(i, 0)}
        )
    return out
