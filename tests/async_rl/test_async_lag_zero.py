"""Issue 34, on one async job: the importance weights of a lag-0 run are 1, and a replica
whose load fails is replaced, never resumed.

The checkpoint's generation_config.json sets top_k 20, top_p 0.8 and repetition penalty
1.1, and the card samples at temperature 0.7 with max_staleness 0: every sample is made
by the weights the learner holds, so the learner's log-probs must equal the replica's
(`is_weight_mean` 1, `behaviour_kl` 0) unless the replica samples from a distribution
other than the plain softmax at the card's temperature (the checkpoint's defaults
applied). The failpoint `weight_sync.corrupt=raise@1` corrupts the first push into the
replica: its checksum differs, it stays paused, it is killed and replaced, and the
replacement joins with the current weights, verified.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podium import failpoints
from podium.cli import app
from podium.jobs.launch import run_or_write_card
from podium.models.registry import register_model
from trainers.config import GrpoConfig, RewardSpec

pytestmark = [pytest.mark.vllm, pytest.mark.ray, pytest.mark.train]

STEPS = 3
SAMPLING_DEFAULTS = {"top_k": 20, "top_p": 0.8, "repetition_penalty": 1.1}


def cli_json(*args: str) -> Any:
    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_lag_zero_weights_are_one_and_a_failed_load_is_replaced(
    tiny_checkpoint: Path,
    podium_home: Path,
    make_table: Any,
    memo_pairs: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checkpoint = tmp_path / "tiny-sampling"
    shutil.copytree(tiny_checkpoint, checkpoint)
    generation = checkpoint / "generation_config.json"
    saved = json.loads(generation.read_text()) if generation.is_file() else {}
    generation.write_text(json.dumps({**saved, **SAMPLING_DEFAULTS}))
    register_model("tiny-sampling", kind="base", path=str(checkpoint))
    cfg = GrpoConfig.model_validate(
        {
            "model": "tiny-sampling",
            "table": {"name": make_table("demo.memo", memo_pairs)},
            "out": "tiny-lag0",
            "rollout": "async",
            "replicas": 1,
            "max_staleness": 0,
            "temperature": 0.7,
            "weight_sync": "gloo",
            "max_steps": STEPS,
            "batch_size": 4,
            "num_generations": 4,
            "max_completion_length": 8,
            "learning_rate": 1e-3,
            "rewards": [RewardSpec(rule="length:12")],
        }
    )
    failpoints.reset()
    monkeypatch.setenv(failpoints.ENV, "weight_sync.corrupt=raise@1")
    job = run_or_write_card("grpo", cfg, foreground=True)
    failpoints.reset()
    assert isinstance(job, dict)
    job_id = job["id"]

    shown = cli_json("jobs", "show", job_id, "--json")
    assert shown["status"] == "succeeded", shown.get("error")
    summary = shown["outputs"]["summary"]
    [failure] = summary["sync_failures"]
    assert failure["version"] == 1 and failure["failed_load"] == [0]
    assert [v["resumed"] for v in failure["replicas"]] == [False]
    assert summary["replica_restarts"] == 1
    [join] = [s for s in summary["syncs"] if s.get("joined") == 0]
    assert join["version"] >= 1 and join["replicas"][0]["match"]
    assert join["replicas"][0]["resumed"] is True
    # The later pushes reached the replacement and were verified there.
    pushes = [s for s in summary["syncs"] if "joined" not in s]
    assert [s["version"] for s in pushes] == list(range(2, STEPS))
    assert all(v["match"] and v["resumed"] for s in pushes for v in s["replicas"])
    assert {str(lag) for lag in summary["staleness"]} == {"0"}

    metrics = cli_json("jobs", "metrics", job_id, "--json")
    by_name: dict[str, list[float]] = {}
    for m in metrics:
        by_name.setdefault(m["name"], []).append(m["value"])
    assert len(by_name["is_weight_mean"]) == STEPS
    assert all(abs(w - 1) <= 0.02 for w in by_name["is_weight_mean"]), by_name
    assert all(kl <= 0.01 for kl in by_name["behaviour_kl"]), by_name
