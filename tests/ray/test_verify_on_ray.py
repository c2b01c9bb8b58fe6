"""`podium build code-exec --mode verify --sandbox-nodes N`: the rows' re-runs spread
over Ray sandbox actors flag the same rows as the local verify, committed once.
No model is needed: the rows table is written here, with some outputs tampered."""

from __future__ import annotations

import sys
from pathlib import Path

import cli_fork
import pytest
from conftest import RayCluster

from generators.code_exec import tables
from generators.code_exec.pipeline_functions import pipeline_function_rows
from podium.jobs.queue import list_jobs
from podium.store.catalog.catalog import load_table
from podium.store.write.write import write_table

pytestmark = [pytest.mark.ray, pytest.mark.sandbox]

ROWS = 40
TAMPERED = {i for i in range(ROWS) if i % 7 == 3}
KEY = ("id", "input", "expected", "actual", "status", "match")


def _rows_table(name: str) -> None:
    rows = []
    for i, fn in enumerate(pipeline_function_rows(ROWS)):
        namespace: dict[str, object] = {}
        exec(fn["code"], namespace)  # our own generated functions, not untrusted code
        output = repr(namespace["f"](3, 1, 4, 1, 5))  # type: ignore[operator]
        rows.append(
            {
                "id": f"row{i:03d}",
                "function_id": fn["id"],
                "entry_point": "f",
                "code": fn["code"],
                "input": "3, 1, 4, 1, 5",
                "raw_input": "3, 1, 4, 1, 5",
                "output": output + " tampered" if i in TAMPERED else output,
                "status": "ok",
                "error": None,
                "wall_s": 0.0,
                "cpu_s": 0.0,
                "model": "m",
                "backend": "local",
                "created_at": tables.now(),
            }
        )
    data = tables.to_arrow(rows, tables.ROWS_ARROW_SCHEMA)
    write_table(name, data, properties={"podium.kind": tables.ROWS_KIND})


def _verify(*args: str) -> None:
    cmd = [sys.executable, "-m", "podium.cli", "build", "code-exec", "--functions", "t.rows"]
    cmd += ["--mode", "verify", "--backend", "local", "--batch-size", "8", "--workers", "2"]
    result = cli_fork.run([*cmd, *args], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def _report(name: str) -> set[tuple[object, ...]]:
    data = load_table(name).scan(selected_fields=KEY).to_arrow().to_pylist()
    return {tuple(r[k] for k in KEY) for r in data}


def test_verify_over_ray_sandbox_nodes_matches_the_local_verify(
    ray_home: Path, ray_cluster: RayCluster
) -> None:
    _rows_table("t.rows")
    _verify("--out", "t.verify_local")
    _verify("--out", "t.verify_ray", "--sandbox-nodes", "2", "--launcher", "ray")

    job = list_jobs(limit=1)[0]
    assert job["launcher"] == "ray" and job["status"] == "succeeded"
    assert "batches over 2 sandbox nodes" in Path(job["log_path"]).read_text()
    assert len(load_table("t.verify_ray").snapshots()) == 1
    local, on_ray = _report("t.verify_local"), _report("t.verify_ray")
    assert on_ray == local and len(on_ray) == ROWS
    assert {r[0] for r in on_ray if not r[5]} == {f"row{i:03d}" for i in TAMPERED}
    summary = job["outputs"]["summary"]
    assert (summary["matches_this_run"], summary["mismatches_this_run"]) == (
        ROWS - len(TAMPERED),
        len(TAMPERED),
    )
