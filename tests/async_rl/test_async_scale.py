"""Scale-out from live weights (issue 34, item 7): `podium jobs scale ID --replicas 2` on
a running 1-replica async GRPO job. The new replica starts while the job trains, joins
with the learner's current weights (listed in the job's syncs, verified), and generates:
every rollout it made carries version 1 or later, never the checkpoint's weights.

The job is held after its first step (failpoint `async_rl.learner_step=pause@2`) until
the new replica has joined, however slowly either side starts; after that, a slot that
opens while both wait goes to the new replica (it was admitted fewer times)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from podium.jobs.launch import run_or_write_card
from podium.jobs.queue import get_job
from podium.store.catalog.catalog import load_table
from trainers.config import GrpoConfig, RewardSpec

pytestmark = [pytest.mark.vllm, pytest.mark.ray, pytest.mark.train]

# After the hold each step opens a slot, and the controller hands it to the waiting
# replica admitted fewer times (the new one), so the steps after the hold are its.
STEPS = 6
POINT = "async_rl.learner_step"


def _within(seconds: float, holds: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := holds()):
        assert time.monotonic() < deadline, f"not within {seconds:.0f} s: {holds}"
        time.sleep(0.5)
    return value


def podium(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "podium.cli", *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"podium {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def test_a_running_async_job_scales_out_with_live_weights(
    tiny_base: str,
    make_table: Any,
    memo_pairs: Any,
    podium_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("PODIUM_FAILPOINTS", f"{POINT}=pause@2")
    monkeypatch.setenv("PODIUM_FAILPOINTS_DIR", str(marks))
    cfg = GrpoConfig.model_validate(
        {
            "model": tiny_base,
            "table": {"name": make_table("demo.memo", memo_pairs)},
            "out": "tiny-scaled",
            "rollout": "async",
            "replicas": 1,
            "max_staleness": 1,
            "max_steps": STEPS,
            "batch_size": 4,
            "num_generations": 4,
            "max_completion_length": 8,
            "rewards": [RewardSpec(rule="length:12")],
        }
    )
    job_id = str(run_or_write_card("grpo", cfg, foreground=False))
    log = (podium_home / "worker.log").open("w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "podium.cli", "worker", "--poll", "0.5"],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        # Held before its second step: step 1 is reported, and the job still runs.
        _within(400, lambda: (marks / f"{POINT}.reached").exists())
        _within(
            30,
            lambda: any(
                m["step"] == 1 for m in json.loads(podium("jobs", "metrics", job_id, "--json"))
            ),
        )
        assert "asked for 2 replicas (it has 1)" in podium(
            "jobs", "scale", job_id, "--replicas", "2"
        )
        job_log = Path(get_job(job_id)["log_path"])
        # Joined (or refused: the assertions below then say why).
        _within(400, lambda: "scale-out: replica 1" in (t := job_log.read_text()) or "refused" in t)
        (marks / f"{POINT}.release").touch()
        job = _within(
            400, lambda: (j := get_job(job_id))["status"] in ("succeeded", "failed") and j
        )
        assert job["status"] == "succeeded", job["error"]
    finally:
        (marks / f"{POINT}.release").touch()
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            worker.kill()

    shown = json.loads(podium("jobs", "show", job_id, "--json"))
    summary = shown["outputs"]["summary"]
    joins = [s for s in summary["syncs"] if s.get("joined") == 1]
    assert len(joins) == 1 and joins[0]["scaled"], summary["syncs"]
    assert [v["match"] for v in joins[0]["replicas"]] == [True]
    assert joins[0]["version"] >= 1
    assert summary["replicas"] == 2 and summary["replica_restarts"] == 0
    # Every push after the join reached both replicas, verified.
    later = [
        s for s in summary["syncs"] if "joined" not in s and s["version"] > joins[0]["version"]
    ]
    assert later and all(sorted(v["replica"] for v in s["replicas"]) == [0, 1] for s in later)
    assert all(v["match"] for s in summary["syncs"] for v in s["replicas"])
    assert [(r["value"], r["outcome"]) for r in shown["requests"]] == [(2, "done")]

    rows = load_table(summary["rollouts"]).scan().to_arrow().to_pylist()
    assert len(rows) == STEPS * 4
    mine = [r for r in rows if r["replica"] == 1]
    assert mine, "the new replica generated nothing"
    assert all(r["policy_version"] >= 1 for r in mine)
