"""`podium validate --nodes N --launcher ray`: the snapshot's data files checked in Ray
tasks on a real local cluster give the same report as the local run, committed once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cli_fork
import pyarrow as pa
import pytest
from conftest import RayCluster

from podium.jobs.queue import list_jobs
from podium.store.catalog.catalog import load_table
from podium.store.read.plan import plan_snapshot
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.demo import json_sft_rows
from podium.store.write.write import write_table
from podium.validate.report import read_report

pytestmark = pytest.mark.ray

TABLE = "t.many_files"
APPENDS = 6  # one data file each


def _table_of_many_files() -> None:
    rows, planted = json_sft_rows(n=1200)
    assert planted  # the demo plants malformed JSON in some rows
    size = len(rows) // APPENDS
    for i in range(APPENDS):
        data = pa.Table.from_pylist(rows[i * size : (i + 1) * size], schema=SFT_ARROW_SCHEMA)
        write_table(TABLE, data, schema=SFT_SCHEMA, mode="create" if i == 0 else "append")


def _validate(*args: str) -> dict[str, object]:
    cmd = [sys.executable, "-m", "podium.cli", "validate", TABLE, "--rule", "json"]
    cmd += ["--extract", "fenced", "--batch-rows", "64", "--json", *args]
    result = cli_fork.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    summary: dict[str, object] = json.loads(result.stdout)["summary"]
    return summary


def test_validate_over_ray_tasks_matches_the_local_report(
    ray_home: Path, ray_cluster: RayCluster
) -> None:
    _table_of_many_files()
    table = load_table(TABLE)
    assert len(plan_snapshot(table, table.current_snapshot().snapshot_id).files) == APPENDS

    local = _validate("--report", "t.report_local")
    on_ray = _validate("--report", "t.report_ray", "--nodes", "2", "--launcher", "ray")

    job = list_jobs(limit=1)[0]
    assert job["launcher"] == "ray" and job["status"] == "succeeded"
    assert f"{APPENDS} data files in" in Path(job["log_path"]).read_text()
    counts = ("rows", "turns", "failures", "failing_rows", "by_rule", "by_kind", "snapshot_id")
    assert {k: on_ray[k] for k in counts} == {k: local[k] for k in counts}
    assert on_ray["rows"] == 1200 and on_ray["failures"]
    assert read_report("t.report_ray").to_pylist() == read_report("t.report_local").to_pylist()
    assert len(load_table("t.report_ray").snapshots()) == 1
    # The staged failure files are gone once the report holds them.
    data = Path(load_table("t.report_ray").location().removeprefix("file://")) / "data"
    assert not list(data.glob("staged-*/*.parquet"))
