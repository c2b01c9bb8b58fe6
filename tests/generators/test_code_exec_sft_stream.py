"""The code-exec SFT table is rebuilt from the rows table in streamed batches, one commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from generators.code_exec import tables
from generators.code_exec.batches import write_batch
from generators.code_exec.build import write_sft
from generators.code_exec.config import CodeExecConfig
from podium.config import reset_settings
from podium.errors import InvalidInput
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_small
from podium.store.read.refs import TableRef
from podium.store.write.write import write_table

ROWS = 3000
CODE = "def f(x):\n    return x * 2\n"


def _row(i: int) -> dict[str, object]:
    ok = i % 3 != 0
    return {
        "id": f"r{i:05d}",
        "function_id": f"fn{i // 10}",
        "entry_point": "f",
        "code": CODE,
        "input": str(i),
        "raw_input": str(i),
        "output": str(2 * i) if ok else None,
        "status": "ok" if ok else "error",
        "error": None if ok else "ValueError",
        "wall_s": 0.01,
        "cpu_s": 0.01,
        "model": "m",
        "backend": "local",
        "created_at": tables.now(),
    }


def _config() -> CodeExecConfig:
    return CodeExecConfig(functions=TableRef(name="cx.fns"), out="cx.rows", backend="local")


def test_sft_from_a_big_rows_table_is_several_files_in_one_snapshot(
    podium_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for start in range(0, ROWS, 500):  # as a build appends: one commit per batch
        rows = [_row(i) for i in range(start, start + 500)]
        write_batch("cx.rows", rows, tables.ROWS_ARROW_SCHEMA, {"podium.kind": tables.ROWS_KIND})
    monkeypatch.setenv("PODIUM_TARGET_FILE_BYTES", "2048")
    reset_settings()

    expected = [f"r{i:05d}" for i in range(ROWS) if i % 3 != 0]
    assert write_sft(_config(), "cx.rows", {"podium.lineage.job_id": "j1"}) == len(expected)
    sft = load_table("cx.rows_sft")
    assert len(sft.snapshots()) == 1 and len(sft.inspect.files()) >= 3
    data = read_small("cx.rows_sft")[0]
    assert data.column("id").to_pylist() == expected
    assert data.column("messages")[1].as_py()[1] == {"role": "assistant", "content": "4"}

    # A re-run replaces the table in one more snapshot, never appends to it.
    assert write_sft(_config(), "cx.rows", {"podium.lineage.job_id": "j2"}) == len(expected)
    sft = load_table("cx.rows_sft")
    assert len(sft.snapshots()) == 2
    assert read_small("cx.rows_sft")[0].num_rows == len(expected)
    assert sft.properties["podium.lineage.job_id"] == "j2"


def test_sft_table_from_another_rows_table_is_refused(podium_home: Path) -> None:
    write_batch("cx.rows", [_row(1)], tables.ROWS_ARROW_SCHEMA, {})
    write_table("cx.rows_sft", tables.sft_arrow([_row(1)], "elsewhere"))
    with pytest.raises(InvalidInput, match="was not written from cx.rows"):
        write_sft(_config(), "cx.rows", {})
    assert len(load_table("cx.rows_sft").snapshots()) == 1
