"""Other readers on Podium's tables: pyiceberg's own metadata tables (`inspect.entries()`,
`inspect.files()`) and scan, and DuckDB's Iceberg reader, on an edited table and on the
same table compacted and expired; compaction is committed as operation `replace`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_data import ALICE, make_table, row_id  # noqa: E402

from podium.jobs.maintain import MaintainConfig, run_maintain  # noqa: E402
from podium.reporting import Reporter  # noqa: E402
from podium.review.changes import Change, commit_change  # noqa: E402
from podium.store.catalog.catalog import load_table  # noqa: E402
from podium.store.read.query import page  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DUCKDB_PYTHON = REPO / ".venv-duckdb-iceberg" / "bin" / "python"
T = "t.interop"
ROWS = 600


def _edit() -> None:
    make_table(T, ROWS, file_bytes=4_000, batch=200)
    commit_change(
        load_table(T), Change(updates={row_id(3): {"source": "edited"}}, message="fix"), ALICE
    )
    commit_change(
        load_table(T), Change(deletes=frozenset({row_id(4), row_id(500)}), message="drop"), ALICE
    )


def _expected() -> list[tuple[str, str]]:
    return sorted(
        (row_id(i), "edited" if i == 3 else "test") for i in range(ROWS) if i not in (4, 500)
    )


def duckdb_rows(metadata_location: str) -> list[tuple[str, str]]:
    """`(id, source)` of the table's current snapshot as DuckDB's Iceberg reader sees it."""
    if not DUCKDB_PYTHON.exists():
        pytest.fail("run `make duckdb-iceberg` (part of `make test`) to install DuckDB's reader")
    out = subprocess.run(
        [
            str(DUCKDB_PYTHON),
            str(Path(__file__).with_name("iceberg_reader.py")),
            metadata_location,
            "id, source",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return [(r["id"], r["source"]) for r in json.loads(out.stdout)]


def check_every_reader(name: str, expected: list[tuple[str, str]]) -> None:
    table = load_table(name)
    entries = table.inspect.entries().to_pylist()  # raised TypeError on delete files
    deletes = [e for e in entries if e["data_file"]["content"] == 1 and e["status"] != 2]
    for entry in deletes:
        data_file = entry["data_file"]
        assert data_file["column_sizes"], data_file
        assert data_file["value_counts"] and data_file["null_value_counts"]
        assert data_file["lower_bounds"] and data_file["upper_bounds"]
    files = table.inspect.files()
    assert files.num_rows == len([e for e in entries if e["status"] != 2])
    scanned = table.scan(selected_fields=("id", "source")).to_arrow().to_pylist()
    assert sorted((r["id"], r["source"]) for r in scanned) == expected
    assert duckdb_rows(table.metadata_location) == expected
    ours = page(name, limit=ROWS).rows
    assert sorted((r["id"], r["source"]) for r in ours) == expected


@pytest.mark.usefixtures("podium_home")
def test_an_edited_table_reads_in_pyiceberg_inspect_and_duckdb() -> None:
    _edit()
    entries = load_table(T).inspect.entries().to_pylist()
    assert any(e["data_file"]["content"] == 1 for e in entries)  # position deletes are there
    check_every_reader(T, _expected())


@pytest.mark.usefixtures("podium_home")
def test_compaction_is_a_replace_and_the_compacted_expired_table_reads_everywhere() -> None:
    _edit()
    # Everything old goes at once: nothing else uses this table.
    config = MaintainConfig(table=T, retention_days=0, force=True, grace_hours=0)
    summary = run_maintain(config, Reporter()).summary
    assert summary["compaction"]["files_in"] > 0
    table = load_table(T)
    compaction = next(
        s
        for s in table.snapshots()
        if s.summary is not None and s.summary.get("podium.action") == "compact"
    )
    assert compaction.summary is not None
    assert compaction.summary.operation.value == "replace"
    assert summary["expired_snapshots"] > 0 and summary["orphans_removed"]["files"] > 0
    check_every_reader(T, _expected())
