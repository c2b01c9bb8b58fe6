"""Orphan removal and the warehouse sweep beside tables Podium did not make: every table
of the catalog (any namespace depth, any name, any location) keeps every file it
references, whatever `podium maintain` is asked to do; one table that cannot be read or
named stops neither maintenance of the others nor `export`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cli_fork
import pytest
from foreign_tables import (
    add_foreign_file,
    age,
    files_under,
    foreign_rows,
    foreign_table,
    local,
    warehouse,
)
from store_helpers import sft_rows

from podium.store.catalog.catalog import load_table, open_catalog
from podium.store.maintenance import maintenance
from podium.store.read.read import iter_batches
from podium.store.write.write import write_table

PODIUM = [sys.executable, "-m", "podium.cli"]
SWEEP = ("--grace-hours", "0", "--force", "--json")


def podium(*args: str) -> subprocess.CompletedProcess[str]:
    return cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300)


def rows(name: str) -> list[dict[str, object]]:
    return [r for b in iter_batches(name) for r in b.to_pylist()]


def two_snapshots(name: str) -> None:
    write_table(name, sft_rows(20), mode="create")
    write_table(name, sft_rows(20, start=20), mode="overwrite")  # the first's files unneeded


@pytest.mark.usefixtures("podium_home")
def test_maintain_all_keeps_a_table_in_a_nested_namespace() -> None:
    nested = ("ext2", "lvl", "nested")
    table = foreign_table(nested)
    before = foreign_rows(nested)
    mine = files_under(local(table.location()))
    assert len(mine) >= 6  # data, manifests, lists, metadata
    listed = podium("tables")
    assert "ext2.lvl.nested" in listed.stdout, listed.stdout + listed.stderr
    age(warehouse())

    report = podium("maintain", "--all", *SWEEP)

    assert report.returncode == 0, report.stderr
    assert {p for p in mine if not p.exists()} == set()
    assert foreign_rows(nested) == before
    summary = json.loads(report.stdout)
    assert "ext2.lvl.nested" in summary["skipped"]  # not Podium's to compact or expire


@pytest.mark.usefixtures("podium_home")
def test_orphan_removal_keeps_a_table_stored_inside_its_folder() -> None:
    two_snapshots("ns.outer")
    outer = load_table("ns.outer").location()
    inner = foreign_table(("ext", "inner"), location=f"{outer}/inner")
    inner_files = files_under(local(inner.location()))
    before = foreign_rows(("ext", "inner"))
    age(warehouse())

    report = podium("maintain", "ns.outer", "--retention-days", "0", *SWEEP)

    assert report.returncode == 0, report.stderr
    assert json.loads(report.stdout)["orphans_removed"]["files"] > 0  # its own old files went
    assert {p for p in inner_files if not p.exists()} == set()
    assert foreign_rows(("ext", "inner")) == before
    assert rows("ns.outer") == [r for r in sft_rows(20, start=20).to_pylist()]


@pytest.mark.usefixtures("podium_home")
def test_orphan_removal_of_a_table_at_a_namespace_folder_keeps_the_namespaces_tables() -> None:
    two_snapshots("ns.t")
    t_files = files_under(local(load_table("ns.t").location()))
    before = rows("ns.t")
    foreign_table(("ext", "wide"), location=f"file://{warehouse() / 'ns'}")
    age(warehouse())

    report = podium("maintain", "ext.wide", "--retention-days", "0", *SWEEP)

    assert report.returncode == 0, report.stderr
    assert {p for p in t_files if not p.exists()} == set()
    assert rows("ns.t") == before


@pytest.mark.usefixtures("podium_home")
def test_orphan_removal_keeps_a_file_another_table_references() -> None:
    two_snapshots("ns.t")
    borrowed = local(load_table("ns.t").location()) / "data" / "shared.parquet"
    other = foreign_table(("ext", "borrower"), location=f"file://{warehouse() / 'elsewhere'}")
    add_foreign_file(other, borrowed)
    before = foreign_rows(("ext", "borrower"))
    age(warehouse())

    report = podium("maintain", "ns.t", "--retention-days", "0", *SWEEP)

    assert report.returncode == 0, report.stderr
    assert borrowed.exists()
    assert foreign_rows(("ext", "borrower")) == before
    swept = podium("maintain", "--all", *SWEEP)
    assert swept.returncode == 0, swept.stderr
    assert borrowed.exists() and foreign_rows(("ext", "borrower")) == before


@pytest.mark.usefixtures("podium_home")
def test_orphan_removal_keeps_the_partition_statistics_the_metadata_names() -> None:
    from pyiceberg.table.statistics import PartitionStatisticsFile
    from pyiceberg.table.update import SetPartitionStatisticsUpdate

    two_snapshots("ns.t")
    table = load_table("ns.t")
    stats = local(table.location()) / "metadata" / "partition-stats-1.parquet"
    stats.write_bytes(b"PAR1 partition statistics")
    snapshot = table.current_snapshot()
    assert snapshot is not None
    entry = PartitionStatisticsFile(
        snapshot_id=snapshot.snapshot_id,
        statistics_path=f"file://{stats}",
        file_size_in_bytes=stats.stat().st_size,
    )
    with table.transaction() as tx:
        tx._apply((SetPartitionStatisticsUpdate(partition_statistics=entry),))
    assert load_table("ns.t").metadata.partition_statistics
    age(warehouse())

    assert str(stats) not in {
        p.removeprefix("file://") for p in maintenance.unreferenced_files("ns.t")
    }
    report = podium("maintain", "ns.t", "--no-compact", "--no-expire", *SWEEP)

    assert report.returncode == 0, report.stderr
    assert stats.exists()


@pytest.mark.usefixtures("podium_home")
def test_a_table_named_outside_podiums_rule_stops_no_maintain_all() -> None:
    two_snapshots("ns.t")
    odd = foreign_table(("ext", "bad-name"))
    odd_files = files_under(local(odd.location()))
    before = foreign_rows(("ext", "bad-name"))
    ghost = warehouse() / "ns" / "ghost" / "data" / "00000-0-x.parquet"  # a killed import's
    ghost.parent.mkdir(parents=True)
    ghost.write_bytes(b"PAR1")
    age(warehouse())

    report = podium("maintain", "--all", "--retention-days", "0", *SWEEP)

    assert report.returncode == 0, report.stderr
    summary = json.loads(report.stdout)
    assert summary["tables"]["ns.t"]["orphans_removed"]["files"] > 0
    assert "ext.bad-name" in summary["skipped"]
    assert summary["warehouse_orphans_removed"]["files"] == 1 and not ghost.exists()
    assert {p for p in odd_files if not p.exists()} == set()
    assert foreign_rows(("ext", "bad-name")) == before


def _lose_metadata(name: str) -> Path:
    """Delete the table's current metadata file, as a bad copy or a lost volume would."""
    current = local(load_table(name).metadata_location)
    current.unlink()
    return current


@pytest.mark.usefixtures("podium_home")
def test_a_table_whose_metadata_is_gone_keeps_its_files_and_stops_no_other_table() -> None:
    two_snapshots("ns.t")
    write_table("ns.gone", sft_rows(10), mode="create")
    gone_folder = local(load_table("ns.gone").location())
    _lose_metadata("ns.gone")
    gone_files = files_under(gone_folder)
    age(warehouse())

    report = podium("maintain", "--all", "--retention-days", "0", *SWEEP)

    assert report.returncode != 0
    assert "ns.gone" in report.stderr and "Traceback" not in report.stderr
    assert {p for p in gone_files if not p.exists()} == set()  # nothing of it swept
    assert len(load_table("ns.t").snapshots()) == 1  # the readable table was maintained
    assert rows("ns.t") == sft_rows(20, start=20).to_pylist()


def test_export_works_beside_a_table_whose_metadata_is_gone(podium_home: Path) -> None:
    write_table("ns.ok", sft_rows(10), mode="create")
    exports = podium_home / "exports"
    # A table kept under the exports root, where only the table check stops an export.
    foreign_table(("ext", "gone"), location=f"file://{exports / 'gone'}")
    current = local(open_catalog().load_table(("ext", "gone")).metadata_location)
    current.unlink()
    out = exports / "ok.jsonl"

    done = podium("export", "ns.ok", str(out))

    assert done.returncode == 0, done.stderr
    assert len(out.read_text().splitlines()) == 10
    # Its folder is still no place to export to, readable or not.
    refused = podium("export", "ns.ok", str(exports / "gone" / "data" / "x.jsonl"))
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "ext.gone" in refused.stderr, refused.stderr


@pytest.mark.usefixtures("podium_home")
def test_a_table_located_at_the_warehouse_root_is_not_swept() -> None:
    two_snapshots("ns.t")
    foreign_table(("ext", "root"), location=f"file://{warehouse()}")
    notes = warehouse() / "notes" / "readme.txt"  # no table's, in no table's layout
    notes.parent.mkdir()
    notes.write_text("kept")
    age(warehouse())

    report = podium("maintain", "ext.root", "--no-compact", "--no-expire", *SWEEP)

    assert report.returncode != 0
    assert "warehouse root" in report.stderr and "nothing deleted" in report.stderr
    assert notes.exists() and rows("ns.t") == sft_rows(20, start=20).to_pylist()


@pytest.mark.usefixtures("podium_home")
def test_one_tables_orphan_removal_deletes_nothing_while_another_cannot_be_read() -> None:
    two_snapshots("ns.t")
    write_table("ns.gone", sft_rows(10), mode="create")
    _lose_metadata("ns.gone")
    t_files = files_under(local(load_table("ns.t").location()))
    age(warehouse())

    report = podium("maintain", "ns.t", "--no-compact", "--no-expire", *SWEEP)

    assert report.returncode != 0 and "Traceback" not in report.stderr
    assert "ns.gone" in report.stderr and "nothing deleted" in report.stderr
    assert {p for p in t_files if not p.exists()} == set()


@pytest.mark.usefixtures("podium_home")
def test_a_table_sharing_its_location_with_another_is_not_swept() -> None:
    two_snapshots("ns.t")
    location = load_table("ns.t").location()
    twin = foreign_table(("ext", "twin"), location=location)
    files = files_under(local(location))
    before = foreign_rows(("ext", "twin"))
    age(warehouse())

    report = podium("maintain", "ns.t", "--no-compact", "--no-expire", *SWEEP)

    assert report.returncode != 0 and "same location" in report.stderr
    assert {p for p in files if not p.exists()} == set()
    assert foreign_rows(("ext", "twin")) == before and twin.location() == location
