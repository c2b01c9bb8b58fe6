"""`podium maintain` beside ordinary work: a tag made while expiry plans, a reader still
on the previous head, a grace period below the floor, and files of a first import killed
before its commit, which only the warehouse-wide sweep (`--all`) can reach."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import cli_fork
import pytest
from store_helpers import sft_rows

from podium.config import get_settings
from podium.store.catalog.catalog import load_table, table_exists
from podium.store.maintenance import expiry, maintenance
from podium.store.read.read import iter_batches
from podium.store.write.write import write_table

PODIUM = [sys.executable, "-m", "podium.cli"]
DAYS_AGO = 3 * 86400


def podium(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300, env=env)


def rows(name: str, snapshot: int | str | None = None) -> list[dict[str, Any]]:
    return [r for b in iter_batches(name, snapshot) for r in b.to_pylist()]


def snapshot_ids(name: str) -> list[int]:
    return [s.snapshot_id for s in load_table(name).snapshots()]


def three_snapshots(name: str, pause_s: float = 0.0) -> list[int]:
    for k in range(3):
        write_table(name, sft_rows(20, start=20 * k), mode="overwrite" if k else "create")
        time.sleep(pause_s)
    return snapshot_ids(name)


def age_files(name: str, seconds: float) -> None:
    """Make every file under the table look written `seconds` ago."""
    root = Path(load_table(name).metadata.location.removeprefix("file://"))
    then = time.time() - seconds
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))


@pytest.mark.usefixtures("podium_home")
def test_a_tag_made_while_expiry_plans_keeps_its_snapshot_and_rows(tmp_path: Path) -> None:
    first, _, _ = three_snapshots("ns.t", pause_s=0.1)
    before = rows("ns.t", first)
    time.sleep(2)  # every snapshot stopped being the head more than the grace (1.8 s) ago
    point = "maintain.expire.before_commit"
    env = {
        **os.environ,
        "PODIUM_FAILPOINTS": f"{point}=pause@1",
        "PODIUM_FAILPOINTS_DIR": str(tmp_path),
    }
    maintain = subprocess.Popen(
        [*PODIUM, "maintain", "ns.t", "--retention-days", "0", "--grace-hours", "0.0005"]
        + ["--force", "--no-compact", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Planned, and held at the failpoint until the tag has landed (a fixed sleep raced
        # a busy CI machine: the tag command started after the expiry had committed).
        _wait_for_file(tmp_path / f"{point}.reached")
        tagged = podium("tag", "ns.t", "keep", "--snapshot", str(first))
        (tmp_path / f"{point}.release").touch()
        assert tagged.returncode == 0, tagged.stderr
        out, err = maintain.communicate(timeout=300)
    finally:
        maintain.kill()
    assert maintain.returncode == 0, err
    assert "planned again" in err  # the tag landed between planning and commit
    report = json.loads(out)
    assert report["expired_snapshots"] == 1  # the middle one; the tagged one re-planned away
    table = load_table("ns.t")
    assert table.metadata.refs["keep"].snapshot_id == first
    assert first in snapshot_ids("ns.t")
    assert rows("ns.t", "keep") == before == rows("ns.t", first)


def _wait_for_file(path: Path) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline, f"never reached {path.name}"
        time.sleep(0.05)


@pytest.mark.usefixtures("podium_home")
def test_expiry_re_plans_when_a_tag_lands_between_plan_and_commit() -> None:
    first, _, _ = three_snapshots("ns.t")
    calls = []

    def keep() -> set[int]:  # asked at planning, then again just before the commit
        calls.append(1)
        if len(calls) == 2:
            load_table("ns.t").manage_snapshots().create_tag(first, "keep").commit()
        return set()

    expired = expiry.expire("ns.t", older_than=datetime.now(UTC) + timedelta(days=1), keep=keep)

    assert first not in expired and len(expired) == 1
    assert load_table("ns.t").metadata.refs["keep"].snapshot_id == first
    assert len(calls) > 2  # the first plan's commit was refused and expiry planned again


@pytest.mark.usefixtures("podium_home")
def test_grace_counts_from_when_a_snapshot_stopped_being_the_head() -> None:
    s1, s2, s3 = three_snapshots("ns.t", pause_s=0.05)
    by_id = {s.snapshot_id: s.timestamp_ms for s in load_table("ns.t").snapshots()}
    # The grace period began between s2's commit and s3's: s2 was the head within it
    # (until s3 landed), s1 stopped being the head before it began. Both are old.
    since_ms = (by_id[s2] + by_id[s3]) / 2
    now = by_id[s3] / 1000 + 1000
    doomed = expiry.plan_expiry(
        load_table("ns.t"),
        older_than=datetime.now(UTC) + timedelta(days=1),
        grace_s=now - since_ms / 1000,
        now=now,
    )
    assert doomed == [s1]


@pytest.mark.usefixtures("podium_home")
def test_a_reader_of_the_previous_head_finishes_after_compaction_and_expiry() -> None:
    for k in range(4):  # four small files: compaction rewrites them into one
        write_table("ns.t", sft_rows(30, start=30 * k), mode="append" if k else "create")
    head = snapshot_ids("ns.t")[-1]
    before = rows("ns.t", head)
    age_files("ns.t", DAYS_AGO)  # written days ago, as far as file age can tell

    report = podium("maintain", "ns.t", "--retention-days", "0", "--json")

    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["compaction"]["files_in"] == 4
    assert load_table("ns.t").current_snapshot().snapshot_id != head  # type: ignore[union-attr]
    assert rows("ns.t", head) == before  # the previous head and its files are still there


@pytest.mark.usefixtures("podium_home")
def test_a_grace_period_below_the_floor_needs_force() -> None:
    write_table("ns.t", sft_rows(5), mode="create")
    refused = podium("maintain", "ns.t", "--grace-hours", "0")
    assert refused.returncode != 0
    assert "floor of 1 hour" in refused.stderr and "--force" in refused.stderr
    forced = podium("maintain", "ns.t", "--grace-hours", "0", "--force", "--json")
    assert forced.returncode == 0, forced.stderr


@pytest.mark.usefixtures("podium_home")
def test_maintain_all_removes_a_killed_first_imports_files(tmp_path: Path) -> None:
    write_table("ns.other", sft_rows(40), mode="create")
    other = rows("ns.other")
    data = tmp_path / "new.jsonl"
    data.write_text(
        "".join(
            json.dumps({"messages": [{"role": "user", "content": f"q{i}"}]}) + "\n"
            for i in range(50)
        )
    )
    env = {**os.environ, "PODIUM_FAILPOINTS": "commit.before=kill"}
    killed = podium("import", str(data), "--table", "ns.new", env=env)
    assert killed.returncode == -9, killed.stderr
    assert not table_exists("ns.new")
    warehouse = Path(get_settings().warehouse.removeprefix("file://"))
    left = [p for p in (warehouse / "ns" / "new").rglob("*") if p.is_file()]
    assert left  # its data files, which no table names
    catalog_files = {p for p in get_settings().home.rglob("*") if p.is_file()} - set(left)

    report = podium("maintain", "--all", "--grace-hours", "0", "--force", "--json")

    assert report.returncode == 0, report.stderr
    swept = json.loads(report.stdout)["warehouse_orphans_removed"]
    assert swept["files"] == len(left)
    assert not any(p.exists() for p in left)
    assert rows("ns.other") == other
    assert maintenance.unreferenced_files("ns.other") == []
    # Nothing else in the home went: the catalog database, the other table's files.
    still = {p for p in catalog_files if p.exists()}
    gone = catalog_files - still
    assert all("/ns/other/" in str(p) for p in gone), gone  # only its own old files


def test_the_warehouse_sweep_touches_only_table_files_of_no_table(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from podium.failpoints import FailpointError
    from podium.store.maintenance.warehouse_sweep import remove_warehouse_orphans

    write_table("ns.kept", sft_rows(5), mode="create")
    kept = rows("ns.kept")
    warehouse = Path(get_settings().warehouse.removeprefix("file://"))
    ghost = warehouse / "ns" / "ghost" / "data" / "00000-0-x.parquet"
    strangers = [warehouse / "notes.txt", warehouse / "ns" / "ghost" / "other" / "x.parquet"]
    for path in (ghost, *strangers):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"PAR1")

    monkeypatch.setenv("PODIUM_FAILPOINTS", "maintain.orphans.before_delete=raise")
    with pytest.raises(FailpointError):
        remove_warehouse_orphans(grace_s=0)
    assert ghost.exists()  # listed, not yet deleted
    monkeypatch.delenv("PODIUM_FAILPOINTS")
    assert remove_warehouse_orphans(grace_s=3600) == (0, 0)  # too young

    assert remove_warehouse_orphans(grace_s=0) == (1, 4)

    assert not ghost.exists() and all(p.exists() for p in strangers)
    assert rows("ns.kept") == kept and (podium_home / "catalog.db").exists()
