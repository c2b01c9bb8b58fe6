"""Export then re-import gives identical rows, for JSONL and Parquet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_helpers import Recorder

from podium.config import reset_settings
from podium.store.catalog.catalog import load_table
from podium.store.read.export import export_table
from podium.store.read.read import read_small
from podium.store.write.demo import load_demo
from podium.store.write.ingest import import_file


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_round_trip(podium_home: Path, tmp_path: Path, suffix: str) -> None:
    load_demo()
    out = podium_home / "exports" / f"chat{suffix}"
    export_table("demo.json_sft", out)
    import_file(out, "copy.json_sft")
    original, _ = read_small("demo.json_sft")
    copy, _ = read_small("copy.json_sft")
    assert copy.num_rows == original.num_rows == 3000
    assert copy.to_pylist() == original.to_pylist()


def test_export_of_old_snapshot(podium_home: Path, tmp_path: Path) -> None:
    load_demo()
    first = read_small("demo.chat")[1]
    import_file(_one(tmp_path), "demo.chat", mode="append")
    export_table("demo.chat", "old.jsonl", snapshot_id=first)  # relative: under the exports root
    assert len((podium_home / "exports" / "old.jsonl").read_text().splitlines()) == 600


def _one(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_export_streams_several_data_files_in_order(
    podium_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    monkeypatch.setenv("PODIUM_TARGET_FILE_BYTES", "8192")
    reset_settings()
    rows = [
        {"id": f"e{i}", "messages": [{"role": "user", "content": f"{i} " + "w" * 400}]}
        for i in range(300)
    ]
    src = tmp_path / "src.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_file(src, "ns.many")
    assert len(load_table("ns.many").inspect.files()) > 3
    reporter = Recorder()
    out = export_table("ns.many", podium_home / "exports" / f"out{suffix}", reporter=reporter)
    assert out.summary["rows"] == 300
    assert reporter.calls[0][1] == 300 and reporter.calls[0][0] < 300  # a bar, batch by batch
    import_file(podium_home / "exports" / f"out{suffix}", "ns.back")
    assert read_small("ns.back")[0].to_pylist() == read_small("ns.many")[0].to_pylist()
    assert read_small("ns.back")[0].column("id").to_pylist() == [r["id"] for r in rows]


def test_temp_file_of_a_killed_export_is_removed_by_the_next(podium_home: Path) -> None:
    """A SIGKILLed export left `.NAME.XXXX.tmp` (half a file) beside its target for good
    (the kill harness found it, tests/faults); the next export to that path removes the
    temp files of dead exports and leaves a live one's alone."""
    import os
    import socket
    import subprocess
    import sys

    load_demo()
    exports = podium_home / "exports"
    exports.mkdir(parents=True, exist_ok=True)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        text=True,
        capture_output=True,
        check=True,
    )
    host = socket.gethostname()
    killed = exports / f".chat.jsonl.{dead.stdout.strip()}@{host}-abc123.tmp"
    killed.write_text('{"half": ')
    running = exports / f".chat.jsonl.{os.getpid()}@{host}-def456.tmp"
    running.write_text('{"in": "flight"')
    export_table("demo.chat", exports / "chat.jsonl")
    assert not killed.exists() and running.exists()
    assert sorted(p.name for p in exports.iterdir()) == sorted(["chat.jsonl", running.name])
