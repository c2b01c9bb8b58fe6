"""write_batches: any table, streamed into several data files and one snapshot, or nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from podium.errors import InvalidInput
from podium.store.catalog.catalog import list_tables, load_table, table_exists
from podium.store.read.read import read_small
from podium.store.write.write import write_batches, write_table


def report_batches(n: int, start: int = 0, size: int = 25) -> Iterator[pa.RecordBatch]:
    for lo in range(start, start + n, size):
        ids = list(range(lo, min(lo + size, start + n)))
        yield pa.RecordBatch.from_pydict(
            {"row": ids, "error": [f"row {i}: " + "e" * 200 + str(i) for i in ids]}
        )


def test_stream_of_batches_is_several_files_one_snapshot(podium_home: Path) -> None:
    seen: list[int] = []
    write_batches(
        "ns.report",
        report_batches(500),
        properties={"podium.kind": "validation-report"},
        target_file_bytes=4096,
        on_rows=seen.append,
    )
    table = load_table("ns.report")
    assert len(table.snapshots()) == 1
    assert table.properties["podium.kind"] == "validation-report"
    assert len(table.inspect.files()) >= 3
    assert read_small("ns.report")[0].column("row").to_pylist() == list(range(500))
    assert seen == list(range(25, 501, 25))

    write_batches("ns.report", report_batches(50, start=500), mode="append")
    assert read_small("ns.report")[0].column("row").to_pylist() == list(range(550))


def test_a_failing_stream_commits_nothing(podium_home: Path) -> None:
    def failing() -> Iterator[pa.RecordBatch]:
        yield from report_batches(300)
        raise RuntimeError("source died")

    with pytest.raises(RuntimeError, match="source died"):
        write_batches("fresh.report", failing(), target_file_bytes=4096)
    assert not table_exists("fresh.report") and list_tables() == []
    assert sorted(podium_home.rglob("*.parquet")) == []


def test_rows_that_do_not_fit_the_table_are_refused(podium_home: Path) -> None:
    write_table("ns.t", pa.table({"row": [1]}))
    with pytest.raises(InvalidInput, match="do not fit the table's columns"):
        write_table("ns.t", pa.table({"other": ["x"]}), mode="append")
    assert read_small("ns.t")[0].to_pylist() == [{"row": 1}]


def test_empty_stream_without_schema_is_refused(podium_home: Path) -> None:
    with pytest.raises(InvalidInput, match="no rows and no schema"):
        write_batches("ns.none", iter([]))
    assert not table_exists("ns.none")


def test_big_batches_are_cut_into_small_row_groups(podium_home: Path) -> None:
    """A page read decodes one whole row group: a 16 MB input batch must not become one."""
    import pyarrow.parquet as pq

    from podium.store.read.file_plan import local_path
    from podium.store.write.file_writer import ROW_GROUP_BYTES

    text = "x" * 4000
    batch = pa.record_batch({"id": [f"r{i}" for i in range(3000)], "text": [text] * 3000})
    write_batches("t.wide", [batch], mode="create")
    (task,) = load_table("t.wide").scan().plan_files()
    meta = pq.ParquetFile(local_path(task.file.file_path)).metadata
    sizes = [meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)]
    assert sum(meta.row_group(i).num_rows for i in range(meta.num_row_groups)) == 3000
    assert len(sizes) >= batch.nbytes // ROW_GROUP_BYTES  # about 12 MB in ~2 MB groups
    assert max(sizes) <= 2 * ROW_GROUP_BYTES
