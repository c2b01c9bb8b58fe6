"""An async run's push into the two real vLLM replicas, barrier against rolling
(`weight_swap`, trainers/async_rl/swaps.py): the run's own `push` with a real learner and
gloo transfer; the test holds replica 1's generate lock, as its thread does while a
generate call is in flight."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from train_fixtures import RecordingReporter
from weight_sync_learner import perturbed

from trainers.async_rl.learner import Learner, LearnerSettings
from trainers.async_rl.replica import PolicyReplica
from trainers.async_rl.run import AsyncRun
from trainers.config import GrpoConfig
from trainers.weight_sync import make_weight_sync

pytestmark = pytest.mark.vllm

PROMPTS = [[1, 504, 3145, 282, 260]]


@dataclass
class LocalReplicas:
    """The run's replica group over the session's two servers (no Ray: a push never
    reaches the actors, only their servers, through the transfer)."""

    actors: dict[int, PolicyReplica]
    held: dict[int, int]
    ray: Any = None
    infos: dict[int, dict[str, Any]] = field(default_factory=dict)
    replacing: set[int] = field(default_factory=set)
    restarts: int = 0
    stopping: threading.Event = field(default_factory=threading.Event)

    def start(self, indices: list[int], generation: int = 0) -> list[Any]:
        raise AssertionError("no replica is replaced here")

    def alive(self, index: int) -> bool:
        return index not in self.replacing


def run_for(swap: str, replicas: list[PolicyReplica], checkpoint: Path, work: Path, seed: int):  # type: ignore[no-untyped-def]
    cfg = GrpoConfig.model_validate(
        {
            "model": "tiny",
            "table": {"name": "demo.t"},
            "out": "rolling",
            "rollout": "async",
            "replicas": 2,
            "weight_swap": swap,
            "max_steps": 8,
            "batch_size": 4,
            "num_generations": 4,
        }
    )
    sync = make_weight_sync("gloo", work_dir=work)
    sync.connect([r.endpoint for r in replicas])
    pool = LocalReplicas({r.index: r for r in replicas}, {r.index: r.version() for r in replicas})
    learner = Learner(perturbed(str(checkpoint), seed=seed), LearnerSettings(learning_rate=1e-3))
    run = AsyncRun(cfg, RecordingReporter(), [], None, learner, sync, pool, None)  # type: ignore[arg-type]
    return run, sync


def wait_for(condition: Any, what: str, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_rolling_push_loads_one_replica_while_the_other_keeps_generating(
    replicas: list[PolicyReplica], tiny_checkpoint: Path, tmp_path: Path
) -> None:
    run, sync = run_for("rolling", replicas, tiny_checkpoint, tmp_path, seed=31)
    before = run.pool.held[1]
    with run.gen_locks[1]:  # replica 1 is generating
        run.push(31)
        # Replica 0 gets the new weights, and its version moves as its load lands...
        wait_for(lambda: run.pool.held[0] == 31, "replica 0's load")
        assert replicas[0].version() == 31
        # ...while replica 1 still generates, with the weights it had.
        rows = replicas[1].generate(PROMPTS, n=1, max_tokens=4, temperature=0.0)
        assert [r["policy_version"] for r in rows] == [before]
        assert run.pool.held[1] == before
    run.pushes[-1].result()
    sync.close()

    assert replicas[1].version() == 31 and run.pool.held == {0: 31, 1: 31}
    (record,) = run.syncs
    assert record["swap"] == "rolling" and record["version"] == 31
    by = {v["replica"]: v for v in record["replicas"]}
    assert sorted(by) == [0, 1] and all(v["match"] and v["resumed"] for v in by.values())
    # One at a time: replica 0 was given back before the push took replica 1.
    assert by[0]["idle_window_s"][1] <= by[1]["idle_window_s"][0]
    assert record["replica_idle_s"] == pytest.approx((by[0]["idle_s"] + by[1]["idle_s"]) / 2)
    assert record["bytes"] > 0 and record["phases"]


def test_a_barrier_push_holds_every_replica_until_all_have_loaded(
    replicas: list[PolicyReplica], tiny_checkpoint: Path, tmp_path: Path
) -> None:
    run, sync = run_for("barrier", replicas, tiny_checkpoint, tmp_path, seed=32)
    before = run.pool.held[0]
    with run.gen_locks[1]:  # replica 1 is generating
        run.push(32)
        # The push holds replica 0 (it may start nothing) and waits for replica 1: no
        # replica loads until every replica's call has returned.
        wait_for(run.gen_locks[0].locked, "the push to take replica 0")
        assert replicas[0].version() == before and run.pool.held[0] == before
    run.pushes[-1].result()
    sync.close()

    assert run.pool.held == {0: 32, 1: 32}
    (record,) = run.syncs
    assert record["swap"] == "barrier"
    by = {v["replica"]: v for v in record["replicas"]}
    assert all(v["match"] for v in by.values())
    # Both let go together; replica 0 was held from before replica 1 was taken.
    assert by[0]["idle_window_s"][1] == by[1]["idle_window_s"][1]
    assert by[0]["idle_window_s"][0] <= by[1]["idle_window_s"][0]
    assert by[0]["idle_s"] >= by[1]["idle_s"]
