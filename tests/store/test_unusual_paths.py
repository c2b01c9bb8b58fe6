"""A PODIUM_HOME (and so a warehouse) whose path has a space and non-ASCII letters: import,
show, edit and export work, pyiceberg and DuckDB read the same files, and the files are
under the real directory names (they landed under a directory literally named `%20`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import cli_fork
import pytest
from store_helpers import sft_rows
from test_interop import duckdb_rows

from podium.config import get_settings, reset_settings
from podium.store.catalog.catalog import ensure_namespace, load_table, open_catalog
from podium.store.read.query import page
from podium.store.schema import SFT_SCHEMA

PODIUM = [sys.executable, "-m", "podium.cli"]
T = "odd.chat"


def podium(home: Path, *args: str) -> str:
    env = {**os.environ, "PODIUM_HOME": str(home)}
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _jsonl(path: Path, n: int) -> None:
    rows = [
        {"id": f"r{i}", "messages": [{"role": "user", "content": f"q{i}"}], "source": "s"}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_a_home_with_a_space_and_non_ascii_letters_works_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "with space" / "ünï"
    source = tmp_path / "in put.jsonl"
    _jsonl(source, 5)
    podium(home, "import", str(source), "--out", T)
    podium(home, "edit", T, "r2", "--turn", "0", "--content", "fixed", "--why", "typo")
    podium(home, "export", T, "out.jsonl")

    exported = [json.loads(line) for line in (home / "exports" / "out.jsonl").open()]
    assert {r["id"]: r["messages"][0]["content"] for r in exported}["r2"] == "fixed"
    warehouse = home / "warehouse"
    written = [p for p in warehouse.rglob("*") if p.is_file()]
    assert any(p.name.endswith("-deletes.parquet") for p in written)
    assert not list(tmp_path.rglob("*%*")), "files landed under a percent-encoded name"

    monkeypatch.setenv("PODIUM_HOME", str(home))
    reset_settings()
    try:
        assert "%" not in get_settings().warehouse
        table = load_table(T)
        assert table.location().startswith(f"file://{warehouse}")
        scanned = table.scan(selected_fields=("id", "source")).to_arrow().to_pylist()
        expected = sorted((f"r{i}", "s") for i in range(5))
        assert sorted((r["id"], r["source"]) for r in scanned) == expected
        assert duckdb_rows(table.metadata_location) == expected
        shown = page(T, limit=10).rows  # `podium show`'s read: DuckDB over the files
        assert sorted((r["id"], r["source"]) for r in shown) == expected
    finally:
        reset_settings()


@pytest.mark.usefixtures("podium_home")
def test_a_table_whose_location_has_a_literal_percent_reads_where_pyiceberg_wrote() -> None:
    # Homes made before Podium stopped percent-encoding hold tables at such locations:
    # pyiceberg writes and reads `with%20space` as a directory of that very name.
    ensure_namespace("odd")
    location = f"{get_settings().warehouse}/legacy/with%20space"
    table = open_catalog().create_table(T, SFT_SCHEMA, location=location)
    table.append(sft_rows(4))
    written = [p for p in Path(location.removeprefix("file://")).rglob("*.parquet")]
    assert written, "pyiceberg wrote under the literal name"
    assert sorted(r["id"] for r in page(T, limit=10).rows) == [f"r{i:04d}" for i in range(4)]
