"""Two snapshots compared row by row: one join, read through the store's plans.

Both sides are planned (`plan_snapshot`) and opened as guarded DuckDB views `a` and `b`
(`duckdb_views.register_snapshot`: DuckDB over the data files, pyiceberg where it must), then
full-outer-joined on a key. Each joined row is `identical`, `differing`, `only_a` or
`only_b`; nothing but the join's result comes back, so memory does not grow with the
tables. Two questions use it:

- `snapshot_changes`: what changed between two snapshots of one table (review's
  `podium diff`). The plans are compared first: the same physical rows of the same data
  file are the same rows on both sides and are never read; only the runs one side has
  and the other lacks (an edit's new row and the old one it deleted, an appended file)
  are joined, on `id`. A row present on both sides but in other files (a compaction
  moves every row) counts only if a column differs.
- `diff_tables`: a job's output against its re-run's (`podium jobs rerun --compare`).
  Rows are matched by the first key both tables have: (prompt_id, sample_index) for
  samples, prompt_id, (id, turn, rule, message_offset, offset) for validation reports
  (one row per failure, several per id), then id; ids that embed the output table's name
  would never match. Matched rows are identical when their generated content (the
  `completion` column, else `messages`, else every shared column but timestamps, timings
  and ids) is equal. One aggregate counts each status; a few differing rows come back as
  examples.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from podium.errors import InvalidInput
from podium.store.catalog.catalog import full_name, load_table
from podium.store.read import connections, duckdb_views
from podium.store.read.connections import quote
from podium.store.read.file_plan import FilePlan, runs_not_in
from podium.store.read.plan import plan_snapshot
from podium.store.read.snapshots import resolve_snapshot

if TYPE_CHECKING:
    import duckdb
    from pyiceberg.table import Table

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


def _open_pair(
    table_a: Table, plan_a: FilePlan, table_b: Table, plan_b: FilePlan
) -> duckdb.DuckDBPyConnection:
    """A guarded connection with views `a` and `b` over the two plans' rows."""
    con = connections.connect_plans([plan_a, plan_b])
    duckdb_views.register_snapshot(con, "a", table_a, plan_a, with_pos=False)
    duckdb_views.register_snapshot(con, "b", table_b, plan_b, with_pos=False)
    return con


def _joined(key: list[str], compared: list[str], columns: str) -> str:
    """SELECT `columns` plus each joined row's `status` (key matched null-safely)."""
    on = " AND ".join(f"a.{quote(k)} IS NOT DISTINCT FROM b.{quote(k)}" for k in key)
    same = " AND ".join(f"a.{quote(c)} IS NOT DISTINCT FROM b.{quote(c)}" for c in compared)
    return (
        f"SELECT CASE WHEN a.__in_a IS NULL THEN 'only_b' WHEN b.__in_b IS NULL THEN 'only_a' "
        f"WHEN {same or 'true'} THEN 'identical' ELSE 'differing' END AS status, {columns} "
        "FROM (SELECT *, true AS __in_a FROM a) a "
        f"FULL OUTER JOIN (SELECT *, true AS __in_b FROM b) b ON {on}"
    )


@dataclass
class ChangedRow:
    id: str
    columns: list[str]  # the columns that differ, id aside
    before: Any  # its messages in snapshot a and b
    after: Any


@dataclass
class SnapshotChanges:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[ChangedRow] = field(default_factory=list)
    files_read: int = 0
    files_shared: int = 0


def snapshot_changes(table: Table, a: int | None, b: int | None) -> SnapshotChanges:
    """Rows added, removed and changed from snapshot `a` to `b` of `table`, by `id`,
    ordered by id; only the runs one side lacks are read."""
    plan_a, plan_b = plan_snapshot(table, a), plan_snapshot(table, b)
    sub_a, sub_b = runs_not_in(plan_a, plan_b), runs_not_in(plan_b, plan_a)
    read = {f.path for f in (*sub_a.files, *sub_b.files)}
    result = SnapshotChanges(
        files_read=len(read),
        files_shared=len({f.path for f in (*plan_a.files, *plan_b.files)} - read),
    )
    if not sub_a.files and not sub_b.files:
        return result
    common = [c for c in plan_a.column_names if c in set(plan_b.column_names) and c != "id"]
    flags = "".join(
        f", a.{quote(c)} IS DISTINCT FROM b.{quote(c)} AS {quote('d_' + c)}" for c in common
    )
    select = "a.id AS a_id, b.id AS b_id, a.messages AS a_messages, b.messages AS b_messages"
    con = _open_pair(table, sub_a, table, sub_b)
    try:
        rows = con.sql(
            f"SELECT * FROM ({_joined(['id'], common, select + flags)}) "
            "WHERE status <> 'identical' ORDER BY coalesce(a_id, b_id)"
        ).to_arrow_table()
    finally:
        con.close()
    for r in rows.to_pylist():
        if r["status"] == "only_b":
            result.added.append(r["b_id"])
        elif r["status"] == "only_a":
            result.removed.append(r["a_id"])
        else:
            cols = [c for c in common if r.get("d_" + c)]
            result.changed.append(ChangedRow(r["a_id"], cols, r["a_messages"], r["b_messages"]))
    return result


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


# A join's status as a TableDiff's count (a: the original, b: the re-run).
_TABLE_STATUS = {
    "identical": "identical",
    "differing": "differing",
    "only_a": "only_original",
    "only_b": "only_rerun",
}


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


def _table_diff_sql(key: list[str], content: list[str]) -> str:
    key_text = ", ".join(f"CAST(coalesce(a.{quote(k)}, b.{quote(k)}) AS VARCHAR)" for k in key)

    def text(side: str) -> str:
        if len(content) == 1:
            value = f"{side}.{quote(content[0])}"
        else:
            fields = ", ".join(f"{quote(c)} := {side}.{quote(c)}" for c in content)
            value = f"struct_pack({fields})"
        return f"left(CAST({value} AS VARCHAR), {EXAMPLE_CHARS})"

    columns = f"concat_ws(' / ', {key_text}) AS row_key, "
    columns += f"{text('a')} AS a_text, {text('b')} AS b_text"
    return f"""
        SELECT status, count(*) AS n,
            min_by({{'key': row_key, 'original': a_text, 'rerun': b_text}}, row_key, $examples)
        FROM ({_joined(key, content, columns)}) GROUP BY status
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
    plan_a, plan_b = plan_snapshot(left, left_sid), plan_snapshot(right, right_sid)
    key, content = choose_columns(plan_a.column_names, plan_b.column_names)
    result = TableDiff(full_name(original), left_sid, full_name(rerun), right_sid, key, content)
    con = _open_pair(left, plan_a, right, plan_b)
    try:
        rows = con.execute(_table_diff_sql(key, content), {"examples": max(examples, 1)})
        found = []
        for status, count, sample in rows.fetchall():
            name = _TABLE_STATUS[status]
            setattr(result, name, int(count))
            if status != "identical":
                found += [{"status": name, **s} for s in sample]
    finally:
        con.close()
    result.examples = sorted(found, key=lambda e: e["key"])[:examples]
    return result
