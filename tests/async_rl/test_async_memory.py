"""An async GRPO run that cannot fit in memory is refused when it is submitted, saying
what to lower; a Ray out-of-memory failure reads as one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from podium.cli import app
from podium.errors import InvalidInput
from podium.models.memory import GIB, checkpoint_params
from trainers.async_rl.memory import async_memory_plan, check_async_memory, ray_oom_line
from trainers.config import GrpoConfig

runner = CliRunner()


def card(model: str = "tiny-llama", **extra: Any) -> GrpoConfig:
    return GrpoConfig.model_validate(
        {"model": model, "table": {"name": "t.memo"}, "out": "run-1", "rollout": "async"} | extra
    )


def test_the_estimate_counts_replicas_engines_and_the_learner(tiny_checkpoint: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint), dtype=torch.float32)
    # tied embeddings are stored once, as the model counts them
    assert checkpoint_params(tiny_checkpoint) == sum(p.numel() for p in model.parameters())

    one = async_memory_plan(card(), tiny_checkpoint, gpu=False)
    two = async_memory_plan(card(replicas=2), tiny_checkpoint, gpu=False)
    longer = async_memory_plan(card(max_length=512), tiny_checkpoint, gpu=False)
    assert one is not None and two is not None and longer is not None
    params = one.params
    assert one.engine >= params * 4 + 1 * GIB  # fp32 weights + the 1 GiB CPU KV cache
    assert one.learner >= params * 16  # weights, gradients, Adam's two moments
    assert two.need - one.need == one.engine
    assert longer.activations == 2 * one.activations > 0


def test_too_little_memory_is_refused_naming_what_to_lower(tiny_checkpoint: Path) -> None:
    plan = check_async_memory(card(), tiny_checkpoint, available=64 * GIB, total=64 * GIB)
    assert plan is not None
    with pytest.raises(InvalidInput) as refused:
        check_async_memory(
            card(replicas=2), tiny_checkpoint, available=plan.need, total=64 * GIB, gpu=False
        )
    message = str(refused.value)
    assert "Not enough memory" in message and "2 replica(s)" in message
    assert "--replicas" in message and "--max-length" in message
    assert "smaller model" in message


def test_the_submit_refuses_at_once_and_writes_nothing(
    tiny_base: str, make_table: Any, memo_pairs: Any, tmp_path: Path
) -> None:
    make_table("t.memo", memo_pairs)
    out = tmp_path / "run.md"
    result = runner.invoke(
        app,
        [
            "train", "grpo", "--model", tiny_base, "--table", "t.memo", "--out", "g1",
            "--rollout", "async", "--replicas", "5000", "--card", str(out),
        ],
    )  # fmt: skip
    assert isinstance(result.exception, InvalidInput), result.output
    assert "Not enough memory" in str(result.exception)
    assert "--replicas" in str(result.exception)
    assert not out.exists()


def _ray_oom_text() -> str:
    """The shape of Ray 2.60's memory monitor report (raylet: worker killing policy)."""
    return (
        "1 worker(s) were killed due to the node running low on memory. "
        "Memory on the node (IP: 10.0.0.5, ID: 6f1e0c9d2b) was 7.41GB used / 7.68GB limit "
        "(0.964844)\n"
        "OOM kill reason: Memory usage 7956758528B exceeded threshold of 7296000000B "
        "(95.0% of 7680000000B limit)\n"
        "Object store memory usage: [" + "ObjectRef(00ffab) 1048576 bytes, " * 40 + "]\n"
        "Ray killed 1 worker(s) based on the killing policy\n"
        "Considered workers: [(Worker with no lease granted: job ID=01000000, lease ID=ab, "
        "task name=PolicyReplica.__init__, required resources={CPU: 1}, pid=4242, actual "
        "memory used=3.10GB, worker ID=cd)]\n"
        "To see more information about memory usage on this node, use "
        "`ray logs raylet.out -ip 10.0.0.5`\n"
        "Refer to the documentation on how to address the out of memory issue: "
        "https://docs.ray.io/en/latest/ray-observability/user-guides/debug-apps/"
        "debug-memory.html."
    )


def test_a_ray_out_of_memory_error_condenses_to_one_line() -> None:
    from ray.core.generated.common_pb2 import ActorDiedErrorContext
    from ray.exceptions import ActorDiedError, OutOfMemoryError

    task = OutOfMemoryError(_ray_oom_text())
    line = ray_oom_line(task, "starting the replicas", replicas=1)
    assert line is not None and "\n" not in line
    assert line.startswith("Ray ran out of memory while starting the replicas")
    assert "7.41 GB used of 7.68 GB" in line and "lower --replicas" in line

    context = ActorDiedErrorContext(
        error_message="The actor is dead because its worker process has died. Worker exit "
        "type: NODE_OUT_OF_MEMORY Worker exit detail: " + _ray_oom_text(),
        actor_id=b"\x01" * 16,
        class_name="PolicyReplica",
        name="podium-async-ab12-replica-1",
        pid=4242,
    )
    actor = ActorDiedError(context)
    line = ray_oom_line(actor, "starting the replicas", replicas=2)
    assert line is not None and "\n" not in line
    assert line.startswith("Ray ran out of memory while starting replica 2 of 2")

    assert ray_oom_line(RuntimeError("connection refused"), "training") is None


def test_activations_are_one_micro_batchs(tiny_checkpoint: Path) -> None:
    """The learner runs a batch in forward passes of batch_size samples whose gradients
    accumulate: grad_accum adds steps, not activation memory; beta adds a reference copy
    on every rank."""
    one = async_memory_plan(card(), tiny_checkpoint, gpu=False)
    accumulated = async_memory_plan(card(grad_accum=4), tiny_checkpoint, gpu=False)
    wider = async_memory_plan(card(batch_size=8), tiny_checkpoint, gpu=False)
    kl = async_memory_plan(card(beta=0.1, learner_ranks=2), tiny_checkpoint, gpu=False)
    plain = async_memory_plan(card(learner_ranks=2), tiny_checkpoint, gpu=False)
    assert one and accumulated and wider and kl and plain
    assert accumulated.activations == one.activations
    assert wider.activations == 2 * one.activations
    assert kl.learner - plain.learner == 2 * one.params * 4
