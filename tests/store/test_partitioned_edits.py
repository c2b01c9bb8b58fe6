"""A partitioned table Podium did not create (made with pyiceberg directly): `podium edit`
and `podium delete-rows` refuse it with a clear error before writing anything; it crashed
with a raw IndexError and left a half-written manifest behind."""

from __future__ import annotations

import sys
from pathlib import Path

import cli_fork
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.transforms import IdentityTransform
from store_helpers import sft_rows

from podium.errors import InvalidInput
from podium.identity import User
from podium.review.changes import Change, commit_change
from podium.store.catalog.catalog import ensure_namespace, load_table, open_catalog
from podium.store.schema import SFT_SCHEMA

T = "ext.parted"
PODIUM = [sys.executable, "-m", "podium.cli"]
ADMIN = User("a", "admin", "config")


def _partitioned_table() -> Path:
    ensure_namespace("ext")
    split = SFT_SCHEMA.find_field("split")
    spec = PartitionSpec(
        PartitionField(split.field_id, 1000, IdentityTransform(), "split"), spec_id=1
    )
    table = open_catalog().create_table(T, SFT_SCHEMA, partition_spec=spec)
    table.append(sft_rows(20))
    return Path(table.location().removeprefix("file://"))


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.mark.usefixtures("podium_home")
def test_edit_and_delete_rows_refuse_a_partitioned_table_before_writing() -> None:
    root = _partitioned_table()
    before, snapshot = _files(root), load_table(T).metadata.current_snapshot_id
    for args in (
        ["delete-rows", T, "r0003", "--why", "bad"],
        ["edit", T, "r0004", "--turn", "1", "--content", "better", "--why", "fix"],
    ):
        proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True)
        assert proc.returncode != 0
        assert "partitioned" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    with pytest.raises(InvalidInput, match="partitioned"):
        commit_change(load_table(T), Change(deletes=frozenset({"r0005"}), message="m"), ADMIN)
    assert _files(root) == before
    assert load_table(T).metadata.current_snapshot_id == snapshot


@pytest.mark.usefixtures("podium_home")
def test_maintain_skips_compacting_a_partitioned_table_and_does_the_rest() -> None:
    """It crashed with the same raw IndexError as edit did."""
    _partitioned_table()
    rows = load_table(T).scan().to_arrow().num_rows
    proc = cli_fork.run(
        [*PODIUM, "maintain", T, "--json"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert "partitioned: compaction skipped" in proc.stderr
    assert load_table(T).scan().to_arrow().num_rows == rows
