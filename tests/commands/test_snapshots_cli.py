"""`podium snapshots` at 80 columns: one line per snapshot, its review summary readable
under the table (before: a JSON column one word wide)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import cli_fork
import pyarrow as pa

from podium.store.catalog.catalog import load_table
from podium.store.write.write import write_table


def test_snapshot_summaries_print_as_wrapped_key_values(podium_home: Path) -> None:
    write_table("ns.notes", pa.table({"x": [1, 2]}))
    message = "fixed the answer of chat-00001, which quoted the wrong function name"
    load_table("ns.notes").append(
        pa.table({"x": [3]}),
        snapshot_properties={
            "podium.author": "alice",
            "podium.message": message,
            "podium.rows": '["chat-00001"]',
        },
    )
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", "snapshots", "ns.notes"],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="80"),
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), proc.stdout
    current = load_table("ns.notes").current_snapshot().snapshot_id
    rows = [line for line in lines if line.strip().startswith(str(current))]
    assert any("append" in row and "*" in row for row in rows), proc.stdout
    text = " ".join(proc.stdout.split())
    assert f"{current}: author=alice message={message} rows=" in text, proc.stdout
