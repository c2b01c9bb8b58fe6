"""Reports stream into many files and one commit; concurrent runs never mix or orphan."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from multiprocessing.synchronize import Event
from pathlib import Path

import pyarrow as pa
import pytest

from podium.config import reset_settings
from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table
from podium.store.read.refs import TableRef
from podium.store.write.write import write_table
from podium.validate.job import ValidateConfig, validate_table
from podium.validate.report import (
    PROP_SUMMARY,
    failure_batch,
    read_report,
    report_summary,
    write_report,
)

ROWS = 3000


def _broken_table(name: str = "t.broken") -> None:
    """Every row fails `json` twice (two assistant turns), none fails in user turns."""
    messages = [
        [
            {"role": "user", "content": "{}"},
            {"role": "assistant", "content": f"{{oops {i}"},
            {"role": "assistant", "content": "not json"},
        ]
        for i in range(ROWS)
    ]
    ids = [f"r{i:05d}" for i in range(ROWS)]
    write_table(name, pa.table({"id": ids, "messages": messages}))


def _data_files(table_dir: Path) -> set[str]:
    return {p.name for p in table_dir.rglob("*.parquet")}


def _live_or_past_files(name: str) -> set[str]:
    table = load_table(name)
    return {
        Path(entry.data_file.file_path).name
        for snapshot in table.snapshots()
        for manifest in snapshot.manifests(table.io)
        for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=False)
    }


def test_a_big_report_is_several_files_in_one_snapshot(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _broken_table()
    monkeypatch.setenv("PODIUM_TARGET_FILE_BYTES", "8192")
    reset_settings()
    summary = validate_table(
        ValidateConfig(table=TableRef(name="t.broken"), rules=["json"], batch_rows=256)
    )
    report = load_table(summary.report)
    assert len(report.snapshots()) == 1
    assert len(report.inspect.files()) >= 3
    rows = read_report(summary.report)
    assert rows.num_rows == 2 * ROWS
    assert rows.column("id").to_pylist()[:4] == ["r00000", "r00000", "r00001", "r00001"]
    # The summary is counted while streaming and lands in the same commit as the rows.
    assert (summary.failures, summary.failing_rows, summary.rows) == (2 * ROWS, ROWS, ROWS)
    stored = report_summary(summary.report)
    assert stored["failures"] == 2 * ROWS and stored["failing_rows"] == ROWS
    assert stored["by_rule"] == {"json": 2 * ROWS}
    assert sum(stored["by_kind"]["json"].values()) == 2 * ROWS


def test_a_failed_run_keeps_the_old_report_and_leaves_no_files(podium_home: Path) -> None:
    write_report("t.r", [failure_batch([_failure("a")])], {PROP_SUMMARY: "{}"})

    def dying() -> Iterator[pa.RecordBatch]:
        yield failure_batch([_failure("b")] * 500)
        raise RuntimeError("validation died")

    with pytest.raises(RuntimeError, match="validation died"):
        write_report("t.r", dying(), {})
    assert read_report("t.r").column("id").to_pylist() == ["a"]
    assert _data_files(podium_home) == _live_or_past_files("t.r")


def test_a_dataset_is_never_replaced_by_a_report(podium_home: Path) -> None:
    write_table("t.data", pa.table({"x": [1]}))
    with pytest.raises(InvalidInput, match="not a validation report"):
        write_report("t.data", [failure_batch([_failure("a")])], {})
    assert load_table("t.data").scan().to_arrow().column("x").to_pylist() == [1]


def _failure(row_id: str) -> dict[str, object]:
    return {"id": row_id, "turn": 1, "role": "assistant", "rule": "json", "kind": "syntax"}


def _write_many(home: str, writer: str, start: Event) -> None:
    os.environ["PODIUM_HOME"] = home
    reset_settings()
    start.wait()
    for run in range(6):
        rows = [_failure(f"{writer}-{run}-{i}") for i in range(40)]
        write_report("t.shared", [failure_batch(rows[:20]), failure_batch(rows[20:])], {})


def test_concurrent_writers_of_one_report_each_commit_whole(podium_home: Path) -> None:
    """Two processes replacing one report: each run lands whole (the report is always
    exactly one run's rows, never a mix) and no data file is left outside the table."""
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    workers = [
        context.Process(target=_write_many, args=(str(podium_home), name, start))
        for name in ("left", "right")
    ]
    for p in workers:
        p.start()
    start.set()
    for p in workers:
        p.join(120)
    assert [p.exitcode for p in workers] == [0, 0]

    table = load_table("t.shared")
    assert len(table.snapshots()) == 12  # every run committed once
    ids = read_report("t.shared").column("id").to_pylist()
    runs = {i.rsplit("-", 1)[0] for i in ids}
    assert len(ids) == 40 and len(runs) == 1
    for snapshot in table.snapshots():
        rows = table.scan(snapshot_id=snapshot.snapshot_id).to_arrow().column("id").to_pylist()
        assert len(rows) == 40 and len({i.rsplit("-", 1)[0] for i in rows}) == 1
    assert _data_files(podium_home) == _live_or_past_files("t.shared")
