"""Only commits change a table (issue 38, finding 6): an export onto a data file of T
replaced T's rows in place (no snapshot, the original author), and onto a metadata file
it destroyed T. Exports into the warehouse or any table's folders are refused."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cli_fork
import pyarrow as pa
import pytest

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table
from podium.store.read.export import export_table
from podium.store.read.file_plan import local_path
from podium.store.read.read import read_small
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table


def _rows(prefix: str) -> pa.Table:
    rows = [
        {"id": f"{prefix}{i}", "messages": [{"role": "user", "content": f"{prefix} {i}"}]}
        for i in range(5)
    ]
    return pa.Table.from_pylist(rows, schema=SFT_ARROW_SCHEMA)


@pytest.fixture
def two_tables(podium_home: Path) -> tuple[list[dict[str, object]], int]:
    write_table("t.kept", _rows("kept"), schema=SFT_SCHEMA)
    write_table("t.other", _rows("other"), schema=SFT_SCHEMA)
    rows, snapshot = read_small("t.kept")
    return rows.to_pylist(), snapshot


def _unchanged(before: tuple[list[dict[str, object]], int]) -> None:
    rows, snapshot = read_small("t.kept")
    assert (rows.to_pylist(), snapshot) == before


def _data_file() -> str:
    table = load_table("t.kept")
    (task,) = table.scan().plan_files()
    path = local_path(task.file.file_path)
    assert path is not None
    return path


def test_export_onto_a_data_file_is_refused_by_the_cli(
    two_tables: tuple[list[dict[str, object]], int],
) -> None:
    result = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "export", "t.other", _data_file()],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert "where tables keep their data" in result.stderr and "Traceback" not in result.stderr
    _unchanged(two_tables)


def test_export_onto_a_metadata_file_or_into_the_warehouse_is_refused(
    two_tables: tuple[list[dict[str, object]], int],
) -> None:
    metadata = local_path(load_table("t.kept").metadata_location)
    assert metadata is not None
    warehouse = local_path(get_settings().warehouse)
    assert warehouse is not None
    for target in (metadata, f"{warehouse}/anything.jsonl", f"{Path(metadata).parent}/x.parquet"):
        with pytest.raises(InvalidInput, match="where tables keep their data"):
            export_table("t.other", target)
    _unchanged(two_tables)
    assert not Path(warehouse, "anything.jsonl").exists()
