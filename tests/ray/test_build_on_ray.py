"""A code-exec build whose sandbox runs are spread over Ray actors (a sandbox pool each)
gives the same rows as the local build, committed in one snapshot.

CI uses FUNCTIONS functions (greedy proposals from the real base model); the 1,000-
function comparison (which also asserts identical rows) is `python benchmarks/ray_generate.py
--build --functions 1000`: proposing 1,000 inputs with the real model takes ~10 minutes
per build on two cores, too long for CI.
"""

from __future__ import annotations

import sys
from pathlib import Path

import cli_fork
import pyarrow as pa
import pytest
from conftest import RayCluster

from podium.jobs.queue import list_jobs
from podium.store.catalog.catalog import load_table
from podium.store.write.write import write_table

pytestmark = [pytest.mark.ray, pytest.mark.vllm, pytest.mark.sandbox]

FUNCTIONS = 24
KEY = ("id", "function_id", "input", "output", "status")


def functions_table(name: str, count: int) -> None:
    codes = [f"def f{i}(n):\n    return n * {i % 7 + 1} + {i % 3}" for i in range(count)]
    write_table(
        name,
        pa.table(
            {
                "id": [f"fn{i:04d}" for i in range(count)],
                "code": codes,
                "entry_point": [f"f{i}" for i in range(count)],
            }
        ),
    )


def _build(*args: str) -> None:
    cmd = [sys.executable, "-m", "podium.cli", "build", "code-exec", "--model", "base"]
    cmd += ["--temperature", "0", "--inputs-per-function", "2", "--max-tokens", "64"]
    cmd += ["--backend", "local", "--batch-size", "6", "--workers", "2", *args]
    result = cli_fork.run(cmd, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr


def _rows(name: str) -> set[tuple[object, ...]]:
    data = load_table(name).scan(selected_fields=KEY).to_arrow().to_pylist()
    return {tuple(r[k] for k in KEY) for r in data}


def test_build_over_ray_sandbox_nodes_matches_the_local_build(
    ray_home: Path, ray_cluster: RayCluster, base_checkpoint: Path, stop_servers: None
) -> None:
    from podium.models.bootstrap import bootstrap

    bootstrap()
    functions_table("t.fns", FUNCTIONS)
    _build("--functions", "t.fns", "--out", "cx.local")
    _build("--functions", "t.fns", "--out", "cx.ray", "--launcher", "ray", "--sandbox-nodes", "2")

    job = list_jobs(limit=1)[0]
    assert job["launcher"] == "ray" and job["status"] == "succeeded"
    assert "batches over 2 sandbox nodes" in Path(job["log_path"]).read_text()
    assert len(load_table("cx.ray").snapshots()) == 1
    local, on_ray = _rows("cx.local"), _rows("cx.ray")
    assert len({r[1] for r in on_ray}) == FUNCTIONS
    assert on_ray == local
    assert any(r[4] != "rejected" for r in on_ray)  # calls really ran in the sandboxes
