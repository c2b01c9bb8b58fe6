"""Files staged by workers, committed once: one snapshot, resumable, nothing on failure."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.maintenance.maintenance import compact
from podium.store.write.staged import (
    commit_staged,
    pending_files,
    stage,
    staged_files,
    write_staged,
)
from podium.store.write.write import write_table

SCHEMA = pa.schema([pa.field("id", pa.string()), pa.field("n", pa.int64())])


def _rows(start: int, count: int) -> pa.Table:
    return pa.table({"id": [f"r{i}" for i in range(start, start + count)], "n": range(count)})


def test_files_from_many_writers_land_in_one_snapshot_of_a_new_table(podium_home: Path) -> None:
    staging = stage("ns.out", SCHEMA, key="k1")
    for shard in range(3):
        write_staged(staging, f"shard-{shard}", _rows(shard * 10, 10))
    assert not table_exists("ns.out")  # staged files are invisible until the commit

    done = staged_files(staging)
    assert list(done) == ["shard-0", "shard-1", "shard-2"]
    table = commit_staged(staging, list(done.values()), properties={"podium.kind": "x"})
    assert len(table.snapshots()) == 1
    data = table.scan().to_arrow()
    assert sorted(data["id"].to_pylist()) == sorted(f"r{i}" for i in range(30))
    assert table.properties["podium.kind"] == "x"


def test_a_second_attempt_sees_the_first_attempts_files(podium_home: Path) -> None:
    first = stage("ns.out", SCHEMA, key="k2")
    write_staged(first, "shard-0", _rows(0, 5))
    again = stage("ns.out", SCHEMA, key="k2")  # a new process, same key
    assert list(staged_files(again)) == ["shard-0"]
    assert staged_files(stage("ns.out", SCHEMA, key="other")) == {}


def test_appends_to_an_existing_table_in_one_snapshot(podium_home: Path) -> None:
    write_table("ns.old", _rows(0, 2))
    staging = stage("ns.old", SCHEMA, key="k3")
    paths = [write_staged(staging, f"s{i}", _rows(10 + i, 1)) for i in range(2)]
    table = commit_staged(staging, paths)
    assert len(table.snapshots()) == 2 and table.scan().to_arrow().num_rows == 4


def test_rows_that_do_not_fit_are_refused_and_nothing_is_committed(podium_home: Path) -> None:
    staging = stage("ns.bad", SCHEMA, key="k4")
    with pytest.raises(InvalidInput, match="do not fit"):
        write_staged(staging, "s0", pa.table({"other": [1]}))
    with pytest.raises(InvalidInput, match="no staged files"):
        commit_staged(staging, [])
    assert not table_exists("ns.bad")


def test_files_already_committed_are_not_pending_again(podium_home: Path) -> None:
    staging = stage("ns.re", SCHEMA, key="k5")
    first = write_staged(staging, "s0", _rows(0, 3))
    commit_staged(staging, [first])
    write_staged(staging, "s1", _rows(3, 3))  # a later run of the same card
    assert list(pending_files(staging)) == ["s1"]


def test_files_committed_then_compacted_away_are_not_pending_again(podium_home: Path) -> None:
    """A re-run after compaction rewrote the committed files: the history says they are in
    (issue 44: 200 of 400 rows were committed twice)."""
    staging = stage("ns.cp", SCHEMA, key="k6")
    paths = [write_staged(staging, f"s{i}", _rows(i * 3, 3)) for i in range(2)]
    commit_staged(staging, paths)
    result = compact("ns.cp", author="t", target_file_bytes=64 * 1024 * 1024)
    assert result.files_in == 2  # the staged files are no longer the table's files
    assert not set(paths) & set(load_table("ns.cp").inspect.files()["file_path"].to_pylist())
    write_staged(staging, "s2", _rows(6, 3))  # a later run of the same card
    again = stage("ns.cp", SCHEMA, key="k6")
    assert list(pending_files(again)) == ["s2"]
    table = commit_staged(again, list(pending_files(again).values()))
    ids = table.scan().to_arrow()["id"].to_pylist()
    assert sorted(ids) == sorted(f"r{i}" for i in range(9))  # each row once


def test_committing_the_same_staged_files_again_adds_nothing(podium_home: Path) -> None:
    staging = stage("ns.twice", SCHEMA, key="k7")
    paths = [write_staged(staging, f"s{i}", _rows(i * 2, 2)) for i in range(2)]
    commit_staged(staging, paths)
    more = write_staged(staging, "s2", _rows(4, 2))

    table = commit_staged(staging, [*paths, more])  # a caller that kept its old list

    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == sorted(f"r{i}" for i in range(6))
    assert commit_staged(staging, paths).current_snapshot() == table.current_snapshot()
