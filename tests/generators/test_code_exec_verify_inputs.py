"""Verify re-runs rows whose inputs are expressions (in the sandbox) and counts inputs
that no longer evaluate apart from outputs that changed."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from generators.code_exec import tables
from generators.code_exec.config import CodeExecConfig
from generators.code_exec.verify import run_verify
from podium.reporting import Reporter
from podium.store.read.read import read_arrow
from podium.store.read.refs import TableRef
from podium.store.write.write import write_table

CODE = "def f(xs):\n    return sorted(xs)\n"
ROWS = [  # (input as recorded, output as recorded)
    ("[i * i for i in range(4)][::-1]", "[0, 1, 4, 9]"),
    ("list(range(3, 0, -1))", "[1, 2, 3]"),
    ('"ba" * 2', "['a', 'a', 'b', 'b']"),
    ("dict(b=1, a=2)", "['a', 'b']"),
    ("{3, 1} | {2}", "[1, 2, 3, 99]"),  # tampered output: a mismatch
    ("[1, 2][5]", "[1]"),  # the input raises: rejected
    ("missing_name", "[]"),  # the input raises: rejected
    ("[2, 1]", "[1, 2]"),  # a plain literal
]


def _rows_table(name: str) -> None:
    rows = []
    for i, (inp, out) in enumerate(ROWS):
        row: dict[str, object] = dict.fromkeys(tables.ROWS_ARROW_SCHEMA.names)
        row.update(id=f"r{i}", function_id="sorter", entry_point="f", code=CODE, status="ok")
        row.update(input=inp, raw_input=inp, output=out, created_at=tables.now())
        rows.append(row)
    data = tables.to_arrow(rows, tables.ROWS_ARROW_SCHEMA)
    write_table(name, data, properties={"podium.kind": tables.ROWS_KIND})


@pytest.mark.sandbox
def test_expression_inputs_are_executed_and_checked(
    podium_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _rows_table("cx.rows")
    cfg = CodeExecConfig(
        functions=TableRef(name="cx.rows"), out="cx.verify", mode="verify", backend="local"
    )
    caplog.set_level(logging.INFO)
    summary = run_verify(cfg, Reporter()).summary
    # The job's log says which sandbox ran the code, and why that one (it never said).
    assert "sandbox backend: local (bubblewrap sandboxes" in caplog.text
    assert "; named by the job)" in caplog.text and summary["backend"] == "local"
    report = {r["input"]: r for r in read_arrow("cx.verify")[0].to_pylist()}
    for inp in ROWS[:4] + ROWS[7:]:
        row = report[inp[0]]
        assert row["match"] and row["status"] == "ok", row
    assert report["{3, 1} | {2}"]["actual"] == "[1, 2, 3]"
    assert not report["{3, 1} | {2}"]["match"]
    assert report["[1, 2][5]"]["status"] == "rejected"
    assert report["[1, 2][5]"]["error"] == "the input raised IndexError: list index out of range"
    assert report["missing_name"]["status"] == "rejected"
    assert summary["matches_this_run"] == 5
    assert summary["mismatches_this_run"] == 1
    assert summary["rejected_this_run"] == 2


def test_the_backend_line_names_the_setting_when_the_job_named_none(podium_home: Path) -> None:
    from generators.code_exec.backend import backend_line, chosen_backend

    backend = chosen_backend(None)
    assert backend in ("local", "docker")  # the sandbox_backend setting
    assert backend_line(backend, named=False).endswith("; the sandbox_backend setting)")
    assert chosen_backend("docker") == "docker"
