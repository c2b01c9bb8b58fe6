"""Issue 34 on one async GRPO job, run by a worker: a replica whose load fails is
replaced, never resumed; the importance weights of a lag-0 run are 1; and `podium jobs
scale ID --replicas 2` scales the running job out from live weights.

- The checkpoint's generation_config.json sets top_k 20, top_p 0.8 and repetition penalty
  1.1, and the card samples at temperature 0.7 with max_staleness 0: every sample is made
  by the weights the learner holds, so the learner's log-probs must equal the replica's
  (`is_weight_mean` 1, `behaviour_kl` 0) unless the replica samples from a distribution
  other than the plain softmax at the card's temperature (the checkpoint's defaults
  applied).
- The failpoint `weight_sync.corrupt=raise@1` corrupts the first push into the replica:
  its checksum differs, it stays paused, it is killed and replaced, and the replacement
  joins with the current weights, verified.
- The job is then held before its second step (failpoint `async_rl.learner_step=pause@2`)
  until a second replica, asked for with `podium jobs scale`, has joined with the
  learner's current weights (listed in the job's syncs, verified); after that a slot that
  opens while both wait goes to the new replica (it was admitted fewer times), and every
  rollout it made carries version 1 or later, never the checkpoint's weights.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import cli_fork
import pytest
from job_worker import running_worker, within

from podium.jobs.launch import run_or_write_card
from podium.jobs.queue import get_job
from podium.models.registry import register_model
from podium.store.catalog.catalog import load_table
from trainers.config import GrpoConfig, RewardSpec

pytestmark = [pytest.mark.vllm, pytest.mark.ray, pytest.mark.train]

# After the hold each step opens a slot, and the controller hands it to the waiting
# replica admitted fewer times (the new one), so the steps after the hold are its.
STEPS = 6
POINT = "async_rl.learner_step"
SAMPLING_DEFAULTS = {"top_k": 20, "top_p": 0.8, "repetition_penalty": 1.1}


def podium(*args: str) -> str:
    proc = cli_fork.run(
        [sys.executable, "-m", "podium.cli", *args], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"podium {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def test_a_failed_load_is_replaced_lag_zero_weights_are_one_and_the_job_scales_out(
    tiny_checkpoint: Path,
    make_table: Any,
    memo_pairs: Any,
    podium_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checkpoint = tmp_path / "tiny-sampling"
    shutil.copytree(tiny_checkpoint, checkpoint)
    generation = checkpoint / "generation_config.json"
    saved = json.loads(generation.read_text()) if generation.is_file() else {}
    generation.write_text(json.dumps({**saved, **SAMPLING_DEFAULTS}))
    register_model("tiny-sampling", kind="base", path=str(checkpoint))
    marks = tmp_path / "marks"
    marks.mkdir()
    monkeypatch.setenv("PODIUM_FAILPOINTS", f"weight_sync.corrupt=raise@1;{POINT}=pause@2")
    monkeypatch.setenv("PODIUM_FAILPOINTS_DIR", str(marks))
    cfg = GrpoConfig.model_validate(
        {
            "model": "tiny-sampling",
            "table": {"name": make_table("demo.memo", memo_pairs)},
            "out": "tiny-scaled",
            "rollout": "async",
            "replicas": 1,
            "max_staleness": 0,
            "temperature": 0.7,
            "weight_sync": "gloo",
            "learning_rate": 1e-3,
            "max_steps": STEPS,
            "batch_size": 4,
            "num_generations": 4,
            "max_completion_length": 8,
            "rewards": [RewardSpec(rule="length:12")],
        }
    )
    job_id = str(run_or_write_card("grpo", cfg, foreground=False))
    with running_worker(podium_home):
        try:
            # Held before its second step: step 1 is reported, and the job still runs.
            within(400, lambda: (marks / f"{POINT}.reached").exists())
            within(
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
            within(
                400, lambda: "scale-out: replica 1" in (t := job_log.read_text()) or "refused" in t
            )
            (marks / f"{POINT}.release").touch()
            job = within(
                400, lambda: (j := get_job(job_id))["status"] in ("succeeded", "failed") and j
            )
            assert job["status"] == "succeeded", job["error"]
        finally:
            (marks / f"{POINT}.release").touch()

    shown = json.loads(podium("jobs", "show", job_id, "--json"))
    summary = shown["outputs"]["summary"]
    syncs = summary["syncs"]
    # The corrupted first push: replica 0 stayed paused, was killed and replaced, and the
    # replacement joined with the current weights, verified.
    [failure] = summary["sync_failures"]
    assert failure["version"] == 1 and failure["failed_load"] == [0]
    assert [v["resumed"] for v in failure["replicas"]] == [False]
    assert summary["replica_restarts"] == 1
    [rejoin] = [s for s in syncs if s.get("joined") == 0]
    assert rejoin["version"] >= 1 and rejoin["replicas"][0]["match"]
    assert rejoin["replicas"][0]["resumed"] is True
    # The later pushes were verified wherever they landed.
    pushes = [s for s in syncs if "joined" not in s]
    assert [s["version"] for s in pushes] == list(range(2, STEPS))
    assert all(v["match"] and v["resumed"] for s in pushes for v in s["replicas"])

    # Scale-out: one join of replica 1 from live weights, then every push reached both.
    joins = [s for s in syncs if s.get("joined") == 1]
    assert len(joins) == 1 and joins[0]["scaled"], syncs
    assert [v["match"] for v in joins[0]["replicas"]] == [True]
    assert joins[0]["version"] >= 1
    assert summary["replicas"] == 2
    later = [s for s in pushes if s["version"] > joins[0]["version"]]
    assert later and all(sorted(v["replica"] for v in s["replicas"]) == [0, 1] for s in later)
    # Each of them one broadcast over a group of the learner and both replicas, built for
    # the members as they are after the replacement and the scale-out (gloo.py).
    assert all(s["broadcast"] for s in later), later
    assert all(v["match"] for s in syncs for v in s["replicas"])
    assert [(r["value"], r["outcome"]) for r in shown["requests"]] == [(2, "done")]

    rows = load_table(summary["rollouts"]).scan().to_arrow().to_pylist()
    assert len(rows) == STEPS * 4
    mine = [r for r in rows if r["replica"] == 1]
    assert mine, "the new replica generated nothing"
    assert all(r["policy_version"] >= 1 for r in mine)

    # Lag 0 throughout, and the learner's log-probs are the replicas' (both of them).
    assert {str(lag) for lag in summary["staleness"]} == {"0"}
    by_name: dict[str, list[float]] = {}
    for m in json.loads(podium("jobs", "metrics", job_id, "--json")):
        by_name.setdefault(m["name"], []).append(m["value"])
    assert len(by_name["is_weight_mean"]) == STEPS
    assert all(abs(w - 1) <= 0.02 for w in by_name["is_weight_mean"]), by_name
    # KL(behaviour || policy) on every logged step: never negative (issue 49's done-when).
    assert all(0 <= kl <= 0.01 for kl in by_name["behaviour_kl"]), by_name
