"""Row-by-row comparison of a job's output table with the output of its re-run.

Rows are matched by their key, the first of these that both tables have: (prompt_id,
sample_index) for samples tables, prompt_id, (id, turn, rule, message_offset, offset)
for validation reports (one row per failure, several per id), then id; ids that embed
the output table's name would never match. Matched rows are identical when their
generated content (the `completion` column, else `messages`, else every shared column
but timestamps, timings and ids) is equal.

Both snapshots are streamed through DuckDB in one pass (a join plus one aggregate), so
memory does not grow with the tables; at most a few differing rows come back as
examples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import duckdb
import pyarrow as pa
from pyiceberg.table import Table

from podium.errors import InvalidInput
from podium.store.catalog import full_name, load_table
from podium.store.snapshots import resolve_snapshot

KEY_CANDIDATES: tuple[tuple[str, ...], ...] = (
    ("prompt_id", "sample_index"),
    ("prompt_id",),
    ("id", "turn", "rule", "message_offset", "offset"),
    ("id",),
)
CONTENT_CANDIDATES = ("completion", "messages")
# Differ on every run by design (a code-exec row's wall and CPU seconds too).
NOT_CONTENT = frozenset({"id", "created_at", "latency_s", "wall_s", "cpu_s"})
EXAMPLE_CHARS = 200
STATUSES = ("identical", "differing", "only_original", "only_rerun")


@dataclass
class TableDiff:
    original: str
    original_snapshot: int | None
    rerun: str
    rerun_snapshot: int | None
    key: list[str]
    compared: list[str]
    identical: int = 0
    differing: int = 0
    only_original: int = 0
    only_rerun: int = 0
    examples: list[dict[str, str]] = field(default_factory=list)

    @property
    def all_identical(self) -> bool:
        return self.differing == self.only_original == self.only_rerun == 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "all_identical": self.all_identical}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(table: Table) -> list[str]:
    return [f.name for f in table.schema().fields]


def choose_columns(original: list[str], rerun: list[str]) -> tuple[list[str], list[str]]:
    """(key columns, compared columns) for two tables' column names."""
    shared = [c for c in original if c in rerun]
    key = next((list(k) for k in KEY_CANDIDATES if all(c in shared for c in k)), None)
    if key is None:
        names = " or ".join("+".join(k) for k in KEY_CANDIDATES)
        raise InvalidInput(
            f"Cannot match rows: the tables share no key column ({names}); only tables "
            "with row or prompt ids can be compared row by row."
        )
    content = next(([c] for c in CONTENT_CANDIDATES if c in shared), None)
    if content is None:
        content = [c for c in shared if c not in key and c not in NOT_CONTENT]
    if not content:
        raise InvalidInput("The tables share no column besides their key; nothing to compare.")
    return key, content


def _reader(table: Table, snapshot_id: int | None, columns: list[str]) -> pa.RecordBatchReader:
    if snapshot_id is None:  # a table with no commit yet has no rows
        schema = table.schema().as_arrow()
        empty = pa.schema([schema.field(c) for c in columns]).empty_table()
        return pa.RecordBatchReader.from_batches(empty.schema, empty.to_batches())
    scan = table.scan(snapshot_id=snapshot_id, selected_fields=tuple(columns))
    return scan.to_arrow_batch_reader()


def _diff_sql(key: list[str], content: list[str]) -> str:
    on = " AND ".join(f"a.{_quote(k)} IS NOT DISTINCT FROM b.{_quote(k)}" for k in key)
    same = " AND ".join(f"a.{_quote(c)} IS NOT DISTINCT FROM b.{_quote(c)}" for c in content)
    key_text = ", ".join(f"CAST(coalesce(a.{_quote(k)}, b.{_quote(k)}) AS VARCHAR)" for k in key)

    def text(side: str) -> str:
        if len(content) == 1:
            value = f"{side}.{_quote(content[0])}"
        else:
            value = "struct_pack(" + ", ".join(
                f"{_quote(c)} := {side}.{_quote(c)}" for c in content
            )
            value += ")"
        return f"left(CAST({value} AS VARCHAR), {EXAMPLE_CHARS})"

    return f"""
        WITH joined AS (
            SELECT concat_ws(' / ', {key_text}) AS row_key,
                CASE WHEN a.__in_a IS NULL THEN 'only_rerun'
                     WHEN b.__in_b IS NULL THEN 'only_original'
                     WHEN {same} THEN 'identical' ELSE 'differing' END AS status,
                {text("a")} AS original, {text("b")} AS rerun
            FROM (SELECT *, true AS __in_a FROM original_rows) a
            FULL OUTER JOIN (SELECT *, true AS __in_b FROM rerun_rows) b ON {on}
        )
        SELECT status, count(*) AS n,
            min_by({{'key': row_key, 'original': original, 'rerun': rerun}}, row_key, $examples)
        FROM joined GROUP BY status
    """


def diff_tables(
    original: str,
    rerun: str,
    *,
    original_snapshot: int | str | None = None,
    rerun_snapshot: int | str | None = None,
    examples: int = 5,
) -> TableDiff:
    """Compare two table snapshots (default: current) row by row."""
    left, right = load_table(original), load_table(rerun)
    left_sid = resolve_snapshot(left, original_snapshot)
    right_sid = resolve_snapshot(right, rerun_snapshot)
    key, content = choose_columns(_columns(left), _columns(right))
    result = TableDiff(full_name(original), left_sid, full_name(rerun), right_sid, key, content)
    con = duckdb.connect()
    try:
        con.register("original_rows", _reader(left, left_sid, key + content))
        con.register("rerun_rows", _reader(right, right_sid, key + content))
        rows = con.execute(_diff_sql(key, content), {"examples": max(examples, 1)}).fetchall()
    finally:
        con.close()
    found = []
    for status, count, sample in rows:
        setattr(result, status, int(count))
        if status != "identical":
            found += [{"status": status, **s} for s in sample]
    result.examples = sorted(found, key=lambda e: e["key"])[:examples]
    return result
