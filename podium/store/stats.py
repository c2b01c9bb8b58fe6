"""Per-table statistics for the Browse page and `podium stats`: rows, turns and
characters per role, the distribution of sample lengths and turn counts, sources."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from podium.errors import InvalidInput
from podium.store.query import arrow_of, connect_view, snapshot_view


@dataclass
class TableStats:
    rows: int
    turns: int
    mean_turns: float
    by_role: list[dict[str, Any]]  # role, turns, chars, mean_chars
    turn_counts: list[dict[str, Any]]  # turns, rows
    sample_chars: list[int]  # characters per sample, for a histogram
    sources: list[dict[str, Any]]  # source, rows
    snapshot_id: int | None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("sample_chars")
        return out


def table_stats(name: str, snapshot_id: int | str | None = None) -> TableStats:
    data, sid, _ = snapshot_view(name, snapshot_id)
    con = connect_view(data)
    columns = arrow_of(con, "SELECT * FROM t LIMIT 0").column_names
    if "messages" not in columns:
        raise InvalidInput(
            f"Table {name} has no messages column; map one with `podium map {name} "
            "--messages COLUMN` to see chat statistics."
        )

    def rows_of(sql: str) -> list[dict[str, Any]]:
        return arrow_of(con, sql).to_pylist()

    rows = rows_of("SELECT count(*) AS n FROM t")[0]["n"]
    by_role = rows_of(
        "SELECT m.role AS role, count(*) AS turns, sum(length(m.content))::BIGINT AS chars, "
        "round(avg(length(m.content)), 1) AS mean_chars "
        "FROM (SELECT unnest(messages) AS m FROM t) GROUP BY 1 ORDER BY turns DESC"
    )
    turn_counts = rows_of(
        "SELECT coalesce(len(messages), 0) AS turns, count(*) AS rows FROM t GROUP BY 1 ORDER BY 1"
    )
    sample_chars = arrow_of(
        con,
        "SELECT coalesce(list_sum(list_transform(messages, lambda m: "
        "coalesce(length(m.content), 0))), 0)::BIGINT AS chars FROM t",
    )["chars"].to_pylist()
    sources = (
        rows_of("SELECT source, count(*) AS rows FROM t GROUP BY 1 ORDER BY rows DESC LIMIT 20")
        if "source" in columns
        else []
    )
    turns = sum(r["turns"] * r["rows"] for r in turn_counts)
    return TableStats(
        rows=rows,
        turns=turns,
        mean_turns=round(turns / rows, 2) if rows else 0.0,
        by_role=by_role,
        turn_counts=turn_counts,
        sample_chars=sample_chars,
        sources=sources,
        snapshot_id=sid,
    )
