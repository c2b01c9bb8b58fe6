"""`podium maintain` after a review: compaction keeps every row, id and position, the
tagged pre-review snapshot and lineage-named snapshots survive expiry, no file is left
unreferenced, and files a killed import left behind are removed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import cli_fork
import pytest
from review_data import ALICE, make_table, row_id

from podium.review.changes import Change, commit_change
from podium.store.catalog.catalog import load_table
from podium.store.maintenance import maintenance
from podium.store.read.query import page
from podium.store.read.read import iter_batches
from podium.store.write.write import set_properties

PODIUM = [sys.executable, "-m", "podium.cli"]


def podium(*args: str, env: dict[str, str] | None = None) -> Any:
    proc = cli_fork.run(
        [*PODIUM, *args, "--json"], capture_output=True, text=True, timeout=600, env=env
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def rows(name: str, snapshot: int | str | None = None) -> list[dict[str, Any]]:
    return [r for b in iter_batches(name, snapshot) for r in b.to_pylist()]


def unreferenced(name: str) -> list[str]:
    return maintenance.unreferenced_files(name)


@pytest.mark.usefixtures("podium_home")
def test_maintain_after_mixed_edits_keeps_rows_order_tags_and_lineage() -> None:
    make_table("t.m", 3000, file_bytes=4_000, batch=250)
    cli_fork.run([*PODIUM, "tag", "t.m", "pre-review"], check=True, capture_output=True)
    tagged = rows("t.m", "pre-review")
    pinned = None
    for k in range(24):
        if k % 3 == 0:
            change = Change(deletes=frozenset({row_id(k * 97)}), message="junk")
        else:
            change = Change(updates={row_id(k * 113): {"source": f"fixed {k}"}}, message="fix")
        commit_change(load_table("t.m"), change, ALICE)
        if k == 10:  # another table was made from this snapshot: its lineage names it
            pinned = load_table("t.m").current_snapshot().snapshot_id  # type: ignore[union-attr]
            make_table("t.child", 10)
            set_properties("t.child", {"podium.lineage.inputs": json.dumps([f"t.m@{pinned}"])})
    before_rows = rows("t.m")
    before = maintenance.footprint("t.m")
    head_before = load_table("t.m").current_snapshot().snapshot_id  # type: ignore[union-attr]
    search_before = [r["id"] for r in page("t.m", search="answer 1", limit=2000).rows]

    compacted = podium("maintain", "t.m", "--no-expire", "--no-remove-orphans")
    assert compacted["before"]["delete_files"] == 24 and compacted["after"]["delete_files"] == 0
    after = maintenance.footprint("t.m")
    assert after.data_files + after.delete_files < before.data_files + before.delete_files
    assert rows("t.m") == before_rows  # every row, in the same order, with its id
    assert [r["id"] for r in page("t.m", search="answer 1", limit=2000).rows] == search_before
    # An edit planned on the pre-compaction head is no conflict: compaction changed no row.
    commit_change(
        load_table("t.m"),
        Change(updates={row_id(2): {"source": "late"}}, message="late"),
        ALICE,
        base=head_before,
    )
    assert [r["id"] for r in page("t.m", limit=2).rows] == [row_id(1), row_id(2)]  # 0 deleted
    assert page("t.m", limit=2).rows[1]["source"] == "late"
    before_rows[1]["source"] = "late"

    report = podium("maintain", "t.m", "--retention-days", "0", "--grace-hours", "0", "--force")

    assert rows("t.m") == before_rows
    assert report["after"]["delete_files"] == 0 and report["expired_snapshots"] > 0
    assert rows("t.m", "pre-review") == tagged  # the tag survives expiry, readable as it was
    kept = {s.snapshot_id for s in load_table("t.m").snapshots()}
    assert pinned in kept
    assert rows("t.m", pinned) == rows("t.m", pinned)  # still readable
    assert report["after"]["files_on_disk"] < report["before"]["files_on_disk"]
    assert unreferenced("t.m") == []


@pytest.mark.usefixtures("podium_home")
def test_files_of_a_killed_import_are_removed_and_rows_unchanged(tmp_path: Path) -> None:
    make_table("t.k", 500)
    before_rows = rows("t.k")
    data = tmp_path / "big.jsonl"
    with data.open("w") as fh:
        for i in range(40_000):
            text = f"question {i} " + "lorem ipsum dolor sit amet " * 40
            messages = [{"role": "user", "content": text}, {"role": "assistant", "content": text}]
            fh.write(json.dumps({"id": f"k{i}", "messages": messages}) + "\n")
    data_dir = Path(load_table("t.k").metadata.location.removeprefix("file://")) / "data"
    existing = set(data_dir.glob("*.parquet"))
    env = {**os.environ, "PODIUM_TARGET_FILE_BYTES": "300000"}
    proc = subprocess.Popen(
        [*PODIUM, "import", str(data), "--table", "t.k", "--mode", "append"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 300
    while len(set(data_dir.glob("*.parquet")) - existing) < 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "the import wrote no data file in 5 minutes"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    left = set(data_dir.glob("*.parquet")) - existing
    assert len(left) >= 3
    assert rows("t.k") == before_rows  # nothing committed

    report = podium(
        "maintain", "t.k", "--grace-hours", "0", "--force", "--no-expire", "--no-compact"
    )

    assert report["orphans_removed"]["files"] >= len(left)
    assert not any(p.exists() for p in left)
    assert rows("t.k") == before_rows
    assert unreferenced("t.k") == []


@pytest.mark.usefixtures("podium_home")
def test_an_edit_landing_during_compaction_wins_and_compaction_writes_nothing() -> None:
    from podium.errors import InvalidInput

    make_table("t.race", 600, file_bytes=4_000, batch=100)
    commit_change(
        load_table("t.race"), Change(deletes=frozenset({row_id(1)}), message="junk"), ALICE
    )
    edited = []

    def edit_once(_rows: int) -> None:  # runs while compaction writes its files
        if not edited:
            edited.append(True)
            change = Change(updates={row_id(5): {"source": "mid-compaction"}}, message="fix")
            commit_change(load_table("t.race"), change, ALICE)

    with pytest.raises(InvalidInput, match="changed while it was being compacted"):
        maintenance.compact("t.race", author="ops", target_file_bytes=10**9, on_rows=edit_once)
    assert edited and page("t.race", ids=[row_id(5)]).rows[0]["source"] == "mid-compaction"
    assert maintenance.footprint("t.race").delete_files == 2  # nothing compacted
    assert unreferenced("t.race") == []  # the failed compaction left no file behind
