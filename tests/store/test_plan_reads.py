"""Reads over a table made of several data files: file plans, pages across file
boundaries, deep offsets that open only the row groups they need, search in the last
file, mapped tables, time travel, and the guarded SQL console."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from store_helpers import sft_rows as rows
from store_helpers import write_in_files

from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table
from podium.store.read import batch_stream, by_position, duckdb_views, query
from podium.store.read.file_plan import FilePlan
from podium.store.read.plan import plan_snapshot
from podium.store.read.query import count_by, page
from podium.store.read.read import iter_batches, read_rows, row_count
from podium.store.read.snapshots import list_snapshots
from podium.store.read.sql_console import run_sql
from podium.store.read.stats import table_stats
from podium.store.read.where import where_columns
from podium.store.schema import PROP_MAPPING, SFT_SCHEMA
from podium.store.write.write import set_properties, write_batches, write_table

ROWS_PER_GROUP = 10
GROUPS_PER_FILE = 3


def ids(n: int, start: int = 0) -> list[str]:
    return [f"r{i:04d}" for i in range(start, start + n)]


def _write_in_files(name: str, n: int, start: int, mode: str) -> None:
    write_in_files(name, n, start, mode, rows_per_group=ROWS_PER_GROUP)


@pytest.fixture
def multi(podium_home: Path) -> str:
    """150 rows in 15 files over three commits (60 + 50 + 40 rows)."""
    _write_in_files("t.multi", 60, 0, "create")
    _write_in_files("t.multi", 50, 60, "append")
    _write_in_files("t.multi", 40, 110, "append")
    return "t.multi"


def test_plan_lists_files_in_write_order_with_row_offsets(multi: str) -> None:
    table = load_table(multi)
    plan = plan_snapshot(table, table.current_snapshot().snapshot_id)
    assert len(plan.files) == 15 and plan.total == 150
    assert [f.start for f in plan.files] == list(range(0, 150, 10))
    first_rows = [
        pq.read_table(f.local_path, columns=["id"]).column("id")[0].as_py() for f in plan.files
    ]
    assert first_rows == [f"r{i:04d}" for i in range(0, 150, 10)]
    assert list(plan.locate(25, 20)) == [(2, 5, 5), (3, 0, 10), (4, 0, 5)]


def test_pages_across_file_boundaries_are_rows_in_write_order(multi: str) -> None:
    for offset, limit in ((0, 10), (5, 10), (55, 10), (8, 37), (140, 50), (149, 1)):
        p = page(multi, offset=offset, limit=limit)
        assert p.total == 150
        assert [r["id"] for r in p.rows] == ids(min(limit, 150 - offset), offset)
    assert page(multi, offset=500).rows == []


def test_a_deep_page_opens_only_the_row_group_that_holds_it(
    multi: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[tuple[str, tuple[int, ...]]] = []
    real = by_position._read_groups

    def spy(path, parquet, groups, schema):  # type: ignore[no-untyped-def]
        opened.append((path, tuple(groups)))
        return real(path, parquet, groups, schema)

    monkeypatch.setattr(by_position, "_read_groups", spy)
    got = page(multi, offset=143, limit=5)
    assert [r["id"] for r in got.rows] == ids(5, 143)
    table = load_table(multi)
    last = plan_snapshot(table, table.current_snapshot().snapshot_id).files[-1]
    assert opened == [(last.path, (0,))]  # one row group of one file, not a scan from row 0


def test_search_hits_in_the_last_file_only(multi: str) -> None:
    p = page(multi, search="ANSWER 147", limit=10)
    assert p.total == 1 and [r["id"] for r in p.rows] == ["r0147"]
    first = page(multi, search="answer 14", limit=3, count=False)
    assert first.total is None and [r["id"] for r in first.rows] == ["r0014", "r0140", "r0141"]


def test_filters_and_search_combine_and_counts_follow_them(multi: str) -> None:
    p = page(multi, search="question 1", filters={"split": "test"}, limit=50)
    # ids 1, 10-19, 100-149 contain "question 1"; of those, multiples of 5 are test
    expected = [i for i in range(150) if f"question {i}".startswith("question 1") and i % 5 == 0]
    assert [r["id"] for r in p.rows] == [f"r{i:04d}" for i in expected]
    assert p.total == len(expected)
    deep = page(multi, where="source = 'odd'", offset=60, limit=10)
    assert deep.total == 75 and [r["id"] for r in deep.rows] == [
        f"r{i:04d}" for i in range(121, 141, 2)
    ]
    assert dict(count_by(multi, "split", search="question 1")) == {
        "test": len(expected),
        "train": 61 - len(expected),
    }
    stats = table_stats(multi, filters={"split": ["test"]})
    assert stats.rows == 30 and stats.turns == 60
    assert sum(b["samples"] for b in stats.length_bins) == 30


def _read_through_arrow(monkeypatch: pytest.MonkeyPatch) -> list[list[str] | None]:
    """Every plan read as an object store's is (streamed to DuckDB through Arrow, not
    read by DuckDB from disk); the columns each stream read."""
    streamed: list[list[str] | None] = []
    real_batches = batch_stream.iter_batches
    monkeypatch.setattr(FilePlan, "direct", property(lambda plan: False))

    def recording(table: Any, plan: Any, columns: Any = None, *args: Any) -> Any:
        streamed.append(None if columns is None else list(columns))
        return real_batches(table, plan, columns, *args)

    monkeypatch.setattr(duckdb_views, "iter_batches", recording)
    return streamed


def test_a_filter_on_an_object_stores_plan_reads_only_its_columns(
    multi: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a `--where` on S3 streamed every column (every conversation) into DuckDB;
    at 1M rows of 1 KiB the filter on `split` passed its 640 MiB cap and was stopped.
    (`_find_positions` is what the guarded child runs for a `--where`.)"""
    table = load_table(multi)
    plan = plan_snapshot(table, table.current_snapshot().snapshot_id)
    view = query.SnapshotView(table, plan, {}, plan.schema)

    def positions(**conditions: Any) -> list[int]:
        found = query._find_positions(view, **{**NO_CONDITIONS, **conditions})
        return [int(p) for p in found]

    where = "SPLIT = 'test' AND t.source = 'even'"
    expected = positions(where=where)
    assert expected == list(range(0, 150, 10))
    streamed = _read_through_arrow(monkeypatch)
    assert positions(where=where) == expected
    assert streamed == [["source", "split"]]
    assert positions(filters={"split": "test"}, where="len(messages) = 2") == list(range(0, 150, 5))
    assert positions(where="1 = 1", ids=["r0003"]) == [3]
    assert positions(where="1 = 1") == list(range(150))
    assert positions(search="answer 149") == [149]
    assert positions(where="COLUMNS('split') = 'test'") == list(range(0, 150, 5))
    every = [n for n in plan.schema.names if n != "__pos"]
    assert streamed[1:] == [["messages", "split"], ["id"], ["id"], None, every]


NO_CONDITIONS: dict[str, Any] = {
    "search": None,
    "where": None,
    "filters": None,
    "ids": None,
    "first": None,
}


def test_where_columns_are_the_columns_a_condition_names() -> None:
    names = ["id", "messages", "source", "split"]
    lambdas = "len(list_filter(messages, lambda m: m.role = 'user')) > 1"
    assert where_columns(f"SPLIT = 'x' AND {lambdas} AND t.source = 'a'", names) == [
        "messages",
        "source",
        "split",
    ]
    assert where_columns("1 = 1", names) == []
    for whole in ("COLUMNS('split') = 'x'", "'x' IN (COLUMNS(*))", "t IS NOT NULL"):
        assert where_columns(whole, names) == names, whole


def test_time_travel_reads_an_older_snapshot_from_its_own_files(multi: str) -> None:
    snaps = list_snapshots(load_table(multi))
    assert [s.total_rows for s in snaps] == [60, 110, 150]
    old = page(multi, snapshot_id=snaps[1].snapshot_id, offset=100, limit=50)
    assert old.total == 110 and [r["id"] for r in old.rows] == ids(10, 100)
    assert row_count(multi, snaps[0].snapshot_id) == 60
    assert page(multi, snapshot_id=snaps[0].snapshot_id, search="answer 7").total == 1


def test_streaming_and_bounded_reads(multi: str) -> None:
    batches = list(iter_batches(multi, columns=["id"], batch_size=7))
    assert max(b.num_rows for b in batches) <= 7
    assert [v for b in batches for v in b.column("id").to_pylist()] == ids(150)
    assert read_rows(multi, offset=58, limit=4, columns=["id"]).column("id").to_pylist() == ids(
        4, 58
    )
    with pytest.raises(InvalidInput, match="no column nope"):
        read_rows(multi, limit=1, columns=["nope"])


def test_a_mapped_sharegpt_table_pages_under_canonical_names(podium_home: Path) -> None:
    data = pa.Table.from_pylist(
        [
            {
                "uid": f"s{i:03d}",
                "conversations": [
                    {"from": "human", "value": f"hi {i}"},
                    {"from": "gpt", "value": f"hello {i}"},
                ],
            }
            for i in range(40)
        ]
    )
    write_batches("t.sg", data.to_batches(max_chunksize=10), target_file_bytes=1)
    set_properties(
        "t.sg",
        {
            PROP_MAPPING: json.dumps(
                {"messages": "conversations", "role": "from", "content": "value", "id": "uid"}
            )
        },
    )
    p = page("t.sg", offset=18, limit=4)
    assert p.columns[:2] == ["id", "messages"] and p.total == 40
    assert [r["id"] for r in p.rows] == ["s018", "s019", "s020", "s021"]
    assert p.rows[0]["messages"][1] == {"role": "gpt", "content": "hello 18"}
    hit = page("t.sg", search="HELLO 33")
    assert [r["id"] for r in hit.rows] == ["s033"]
    assert table_stats("t.sg").turns == 80


def test_sql_pushes_max_rows_into_the_query(multi: str) -> None:
    out = run_sql("SELECT id FROM t.multi ORDER BY id DESC", max_rows=3)
    assert out.column("id").to_pylist() == ["r0149", "r0148", "r0147"]
    assert run_sql("SELECT count(*) AS n FROM t.multi;").to_pylist() == [{"n": 150}]
    with pytest.raises(InvalidInput):  # a trailing comment cannot swallow the LIMIT
        run_sql("SELECT 1) AS x; SELECT (1 --", max_rows=1)


def test_sql_that_would_run_for_minutes_is_stopped_by_the_timeout(podium_home: Path) -> None:
    write_table("t.small", rows(3), schema=SFT_SCHEMA)
    with pytest.raises(InvalidInput, match="stopped after 0.5 s"):
        run_sql(
            "SELECT count(*) FROM range(1000000000) a, range(1000000) b WHERE a.range > b.range",
            timeout_s=0.5,
        )
    with pytest.raises(InvalidInput, match="memory"):
        run_sql(
            "SELECT list(range) AS l FROM range(50000000) GROUP BY range % 3",
            memory_limit="20MB",
        )


def test_where_and_sql_cannot_read_other_files(multi: str) -> None:
    with pytest.raises(InvalidInput, match="contains a subquery"):  # refused before running
        page(multi, where="(SELECT count(*) FROM read_csv('/etc/passwd')) > 0")
    # refused before running (issue 44, point 22), naming the call that would read a file
    for sql, call in (
        ("SELECT * FROM read_text('/etc/passwd')", "read_text"),
        (
            "SELECT count(*) FROM t.multi WHERE (SELECT count(*) FROM read_csv('/etc/passwd')) > 0",
            "read_csv",
        ),
        ("SELECT * FROM glob('/*')", "glob"),
    ):
        with pytest.raises(InvalidInput, match=f"calls {call}, which reads the server's"):
            run_sql(sql)
    with pytest.raises(InvalidInput, match="single SELECT"):
        run_sql("SET enable_external_access = true")
