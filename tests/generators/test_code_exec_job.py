"""The code-exec job against a real Iceberg catalog and a real sandbox (no model needed):
the demo functions table, verify mode end to end through the jobs system, the CLI card."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from generators.code_exec import tables
from generators.code_exec.config import CodeExecConfig
from generators.code_exec.demo_functions import demo_function_rows, load_demo_functions
from podium.cli import app
from podium.errors import InvalidInput
from podium.jobs.cards import Card, read_card
from podium.jobs.launch import run_foreground
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_arrow
from podium.store.read.refs import TableRef
from podium.store.write.write import write_table

CODE = "def f(xs):\n    return sorted(xs)\n"


def rows_table(name: str) -> None:
    def row(i: int, inp: str, out: str | None, status: str = "ok") -> dict[str, object]:
        return {
            "id": f"r{i}",
            "function_id": "sorter",
            "entry_point": "f",
            "code": CODE,
            "input": inp,
            "raw_input": inp,
            "output": out,
            "status": status,
            "error": None,
            "wall_s": 0.01,
            "cpu_s": 0.01,
            "model": "m",
            "backend": "local",
            "created_at": tables.now(),
        }

    rows = [
        row(1, "[3, 1, 2]", "[1, 2, 3]"),
        row(2, "[2, 2, 1]", "[2, 1, 2]"),  # tampered: sorted() never returns this
        row(3, "['b', 'a']", "['a', 'b']"),
        row(4, "None", None, "error"),  # not an ok row: not re-checked
    ]
    write_table(
        name,
        tables.to_arrow(rows, tables.ROWS_ARROW_SCHEMA),
        properties={"podium.kind": tables.ROWS_KIND},
    )


def test_demo_functions_table_loads_once(podium_home: Path) -> None:
    assert load_demo_functions() is True
    assert load_demo_functions() is False
    data, _ = read_arrow("demo.functions")
    assert data.num_rows == len(demo_function_rows())
    assert data.column_names == ["id", "name", "code", "entry_point", "source"]
    assert load_table("demo.functions").properties["podium.kind"] == "functions"


@pytest.mark.sandbox
def test_verify_flags_the_tampered_row_and_resumes(podium_home: Path) -> None:
    rows_table("cx.rows")
    cfg = CodeExecConfig(
        functions=TableRef(name="cx.rows"),
        out="cx.verify",
        mode="verify",
        backend="local",
        batch_size=2,
    )
    job = run_foreground(Card("code-exec-build", cfg), quiet=True)
    assert job["status"] == "succeeded"
    report = {r["id"]: r for r in read_arrow("cx.verify")[0].to_pylist()}
    assert set(report) == {"r1", "r2", "r3"}
    assert report["r1"]["match"] and report["r3"]["match"]
    assert not report["r2"]["match"]
    assert report["r2"]["actual"] == "[1, 2, 2]" and report["r2"]["expected"] == "[2, 1, 2]"
    props = load_table("cx.verify").properties
    assert props["podium.kind"] == tables.VERIFY_KIND
    assert props["podium.lineage.input"].startswith("cx.rows@")
    assert any(k.startswith("podium.lineage.job") for k in props)
    # Same card again: everything is already verified, nothing is appended.
    snapshots = len(load_table("cx.verify").snapshots())
    run_foreground(Card("code-exec-build", cfg), quiet=True)
    assert len(load_table("cx.verify").snapshots()) == snapshots


@pytest.mark.sandbox
def test_verify_refuses_a_foreign_output_table(podium_home: Path) -> None:
    rows_table("cx.rows")
    rows_table("cx.other")
    from generators.code_exec.verify import run_verify
    from podium.reporting import Reporter

    with pytest.raises(InvalidInput, match="was not written by this code-exec-verify job"):
        run_verify(
            CodeExecConfig(
                functions=TableRef(name="cx.rows"), out="cx.other", mode="verify", backend="local"
            ),
            Reporter(),
        )


def test_cli_writes_a_pinned_card(podium_home: Path, tmp_path: Path) -> None:
    from podium.models.registry import add_endpoint

    load_demo_functions()
    add_endpoint("http://127.0.0.1:9/v1", "remote")  # a card names a model; nothing is called
    card = tmp_path / "card.md"
    result = CliRunner().invoke(
        app,
        [
            "build",
            "code-exec",
            "--functions",
            "demo.functions",
            "--model",
            "remote",
            "--out",
            "cx.demo",
            "--inputs-per-function",
            "3",
            "--backend",
            "docker",
            "--card",
            str(card),
        ],
    )
    assert result.exit_code == 0, result.output
    parsed = read_card(card)
    assert parsed.kind == "code-exec-build"
    cfg = parsed.config
    assert isinstance(cfg, CodeExecConfig)
    assert cfg.table.snapshot_id == load_table("demo.functions").current_snapshot().snapshot_id
    assert (cfg.inputs_per_function, cfg.backend, cfg.out, cfg.model) == (
        3,
        "docker",
        "cx.demo",
        "remote",
    )


def test_cli_rejects_bad_settings(podium_home: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "build",
            "code-exec",
            "--functions",
            "demo.functions",
            "--out",
            "cx.x",
            "--inputs-per-function",
            "0",
        ],
    )
    assert result.exit_code != 0
    assert "inputs_per_function" in str(result.exception) or "inputs_per_function" in result.output


@pytest.mark.sandbox
def test_cancel_stops_between_batches_and_keeps_committed_rows(podium_home: Path) -> None:
    from generators.code_exec.verify import run_verify
    from podium.errors import Cancelled
    from podium.reporting import Reporter

    class CancelAfterFirstBatch(Reporter):
        batches = 0

        def progress(self, done: int, total: int | None = None, message: str = "") -> None:
            if done > 0:
                self.batches += 1

        def is_cancelled(self) -> bool:
            return self.batches >= 1

    rows_table("cx.rows")
    cfg = CodeExecConfig(
        functions=TableRef(name="cx.rows"),
        out="cx.verify",
        mode="verify",
        backend="local",
        batch_size=1,
    )
    with pytest.raises(Cancelled):
        run_verify(cfg, CancelAfterFirstBatch())
    assert read_arrow("cx.verify")[0].num_rows == 1
    # Resuming the same card finishes the remaining rows.
    run_verify(cfg, Reporter())
    assert read_arrow("cx.verify")[0].num_rows == 3
