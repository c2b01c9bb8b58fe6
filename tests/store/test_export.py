"""Export then re-import gives identical rows, for JSONL and Parquet."""

from __future__ import annotations

from pathlib import Path

import pytest

from podium.store.demo import load_demo
from podium.store.export import export_table
from podium.store.ingest import import_file
from podium.store.read import read_arrow


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_round_trip(podium_home: Path, tmp_path: Path, suffix: str) -> None:
    load_demo()
    out = tmp_path / f"chat{suffix}"
    export_table("demo.json_sft", out)
    import_file(out, "copy.json_sft")
    original, _ = read_arrow("demo.json_sft")
    copy, _ = read_arrow("copy.json_sft")
    assert copy.num_rows == original.num_rows == 3000
    assert copy.to_pylist() == original.to_pylist()


def test_export_of_old_snapshot(podium_home: Path, tmp_path: Path) -> None:
    load_demo()
    first = read_arrow("demo.chat")[1]
    import_file(_one(tmp_path), "demo.chat", mode="append")
    export_table("demo.chat", tmp_path / "old.jsonl", snapshot_id=first)
    assert len((tmp_path / "old.jsonl").read_text().splitlines()) == 600


def _one(tmp_path: Path) -> Path:
    path = tmp_path / "one.jsonl"
    path.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    return path
