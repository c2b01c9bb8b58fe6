"""Pages, search, filters, counts, SQL and time travel on a real Iceberg table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from podium.errors import InvalidInput, NotFound
from podium.store.catalog.catalog import load_table
from podium.store.read.query import count_by, page
from podium.store.read.snapshots import list_snapshots
from podium.store.read.sql_console import run_sql
from podium.store.read.stats import table_stats
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "id": f"r{i:03d}",
                "messages": [
                    {"role": "user", "content": f"question {i}"},
                    {
                        "role": "assistant",
                        "content": "Needle here" if i % 7 == 0 else f"answer {i}",
                    },
                ],
                "source": "even" if i % 2 == 0 else "odd",
                "split": "test" if i % 5 == 0 else "train",
                "tags": ["seven"] if i % 7 == 0 else [],
                "system": None,
                "metadata": None,
                "created_at": None,
            }
            for i in range(start, start + n)
        ],
        schema=SFT_ARROW_SCHEMA,
    )


@pytest.fixture
def table(podium_home: Path) -> str:
    write_table("t.q", rows(100), schema=SFT_SCHEMA)
    return "t.q"


def test_page_at_any_offset_keeps_table_order(table: str) -> None:
    p = page(table, offset=95, limit=10)
    assert p.total == 100 and [r["id"] for r in p.rows] == [f"r{i:03d}" for i in range(95, 100)]


def test_search_returns_exactly_matching_rows_case_insensitively(table: str) -> None:
    p = page(table, search="NEEDLE", limit=100)
    assert [r["id"] for r in p.rows] == [f"r{i:03d}" for i in range(0, 100, 7)]
    assert p.total == 15
    assert page(table, search="no such text").total == 0
    # LIKE wildcards in the needle are plain text, not patterns
    assert page(table, search="%").total == 0


def test_filters_where_and_ids(table: str) -> None:
    assert page(table, filters={"source": "even"}).total == 50
    assert page(table, filters={"split": ["test"], "source": "odd"}).total == 10
    assert page(table, filters={"tags": ["seven"]}).total == 15
    assert page(table, where="split = 'test' AND len(messages) = 2").total == 20
    assert [r["id"] for r in page(table, ids={"r010", "r001"}).rows] == ["r001", "r010"]
    with pytest.raises(InvalidInput, match="single SQL condition"):
        page(table, where="true); DROP TABLE t; SELECT (1")
    with pytest.raises(InvalidInput, match="No column"):
        page(table, filters={"nope": 1})


def test_count_by_and_stats(table: str) -> None:
    assert dict(count_by(table, "split")) == {"train": 80, "test": 20}
    assert dict(count_by(table, "tags")) == {"seven": 15}
    stats = table_stats(table)
    assert stats.rows == 100 and stats.turns == 200
    roles = {r["role"]: r["turns"] for r in stats.by_role}
    assert roles == {"user": 100, "assistant": 100}
    assert sum(b["samples"] for b in stats.length_bins) == 100


def test_time_travel_reads_rows_as_they_were(table: str) -> None:
    write_table(table, rows(20, start=100), mode="append")
    snaps = list_snapshots(load_table(table))
    assert [s.total_rows for s in snaps] == [100, 120] and snaps[-1].current
    assert page(table).total == 120
    old = page(table, snapshot_id=snaps[0].snapshot_id, limit=200)
    assert old.total == 100 and old.rows[-1]["id"] == "r099"
    with pytest.raises(NotFound, match="no snapshot 42"):
        page(table, snapshot_id=42)


def test_sql_is_read_only_and_sees_catalog_tables(table: str) -> None:
    out = run_sql("SELECT split, count(*) AS n FROM t.q GROUP BY split ORDER BY split")
    assert out.to_pylist() == [{"split": "test", "n": 20}, {"split": "train", "n": 80}]
    for bad in ("DROP TABLE t.q", "SELECT 1; SELECT 2", "COPY (SELECT 1) TO 'x.csv'"):
        with pytest.raises(InvalidInput):
            run_sql(bad)
    with pytest.raises(InvalidInput):  # no reading the machine's files through SQL
        run_sql("SELECT * FROM read_csv('/etc/passwd')")


def test_missing_table_is_named(podium_home: Path) -> None:
    with pytest.raises(NotFound, match="No table named nope.x"):
        page("nope.x")


def test_appended_rows_come_after_the_rows_they_were_appended_to(table: str) -> None:
    write_table(table, rows(3, start=100), mode="append")
    write_table(table, rows(2, start=200), mode="append")
    ids = [r["id"] for r in page(table, limit=1000).rows]
    assert ids[:2] == ["r000", "r001"]
    assert ids[-5:] == ["r100", "r101", "r102", "r200", "r201"]


def test_a_page_is_kept_per_snapshot_and_a_commit_is_seen_at_once(
    table: str, podium_home: Path
) -> None:
    """The app's sessions share pages read at a snapshot (a rerun, another reviewer on the
    same page): with the data files moved away the same page still comes back. A commit
    is a new snapshot, so its rows show at once; the old snapshot keeps its own page."""
    before = page(table, offset=10, limit=5)
    needles = page(table, search="needle", offset=0, limit=3)
    files = sorted(podium_home.rglob("*.parquet"))
    assert files
    for f in files:
        f.rename(f.with_suffix(".aside"))
    try:
        assert page(table, offset=10, limit=5).rows == before.rows
        assert page(table, search="needle", offset=0, limit=3).rows == needles.rows
        with pytest.raises(OSError):  # anything not read before needs the files
            page(table, offset=20, limit=5)
    finally:
        for f in files:
            f.with_suffix(".aside").rename(f)
    write_table(table, rows(30, start=500), mode="overwrite", schema=SFT_SCHEMA)
    after = page(table, offset=10, limit=5)
    assert after.total == 30 and after.rows[0]["id"] == "r510"
    assert after.snapshot_id != before.snapshot_id
    assert page(table, offset=10, limit=5, snapshot_id=before.snapshot_id).rows == before.rows


def test_a_kept_page_holds_its_own_rows_not_the_row_group_it_was_cut_from(table: str) -> None:
    from podium.store.read import by_position, query

    view = query.open_view(table)
    cut = by_position.read_span(view.table, view.plan, 10, 5)  # a slice of the file's row group
    kept = query._own_buffers(cut)
    assert kept.equals(cut)
    assert kept.get_total_buffer_size() * 5 < cut.get_total_buffer_size()
