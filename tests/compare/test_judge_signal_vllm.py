"""Rubric scores by the base model on a real vLLM server: a signal that filters Browse,
removes rows below a score and feeds "train on rows above a score"; and a GRPO
cpu-smoke run with the judge as its reward, logging reward and judge latency."""

from __future__ import annotations

import os
import uuid

import pytest
from train_fixtures import RecordingReporter, chat_rows, tiny_checkpoint  # noqa: F401

from podium.reporting import Reporter
from podium.signals.actions import remove_by_signal
from podium.signals.job import SignalsConfig, run_signals
from podium.signals.values import excluded_ids, facets, ids_for
from podium.store.catalog.catalog import load_table
from podium.store.read.read import read_small
from podium.store.read.refs import TableRef
from podium.store.schema import SFT_SCHEMA
from podium.store.write.write import write_table

pytestmark = [pytest.mark.vllm]
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PAIRS = [
    ("What is the capital of France?", "The capital of France is Paris."),
    ("What is 2 + 2?", "2 + 2 = 4."),
    ("Name a primary colour.", "Red is a primary colour."),
    ("What is the capital of France?", "I like turtles."),
    ("Write a haiku about rain.", "Rain taps the window / the street shines / night hums."),
    ("What is 10 divided by 2?", "banana"),
]


def test_rubric_signal_filters_removes_and_feeds_training(vllm_model):
    table = f"t.rubric_{uuid.uuid4().hex[:8]}"
    write_table(table, chat_rows(PAIRS), schema=SFT_SCHEMA)
    config = SignalsConfig(
        table=TableRef(name=table), signals=["rubric"], rubric={"judge": vllm_model}
    )
    outputs = run_signals(config, Reporter())
    (result,) = outputs.summary["signals"]
    assert (result["scored"], result["unparsed"]) == (6, 0)  # guided decoding: all parse
    stored = read_small(f"{table}__sig_rubric")[0].to_pylist()
    scores = {r["id"]: r["score"] for r in stored}
    assert sorted(scores) == [f"r{i}" for i in range(6)]
    assert all(1 <= s <= 10 for s in scores.values())
    loaded = load_table(table)
    sid = loaded.current_snapshot().snapshot_id
    threshold = sorted(scores.values())[len(scores) // 2]  # some rows on each side
    above = {i for i, s in scores.items() if s >= threshold}
    below = set(scores) - above
    # Browse's facets: "quality ≥ N" for every score given, with its count.
    offered = {f.value: f.rows for f in facets(loaded, sid) if f.signal == "rubric"}
    assert offered[f">={threshold}"] == len(above)
    assert ids_for(loaded, sid, "rubric", f">={threshold}") == above
    # Training leaves out the rows below the score (exclude_signals: rubric=<N).
    assert excluded_ids(loaded, sid, [f"rubric=<{threshold}"]) == below
    from trainers.data import load_training_data

    data = load_training_data(TableRef(name=table), exclude_signals=[f"rubric=<{threshold}"])
    assert sorted(c.id for c in data.train) == sorted(above)
    # A review change removes them: one snapshot, the rows above the score kept.
    preview = remove_by_signal(table, f"rubric=<{threshold}", preview=True)
    assert preview["rows"] == len(below) and preview["snapshot_id"] is None
    done = remove_by_signal(table, f"rubric=<{threshold}")
    left = read_small(table)[0].column("id").to_pylist()
    assert done["rows"] == len(below) and sorted(left) == sorted(above)


@pytest.mark.train
def test_grpo_with_a_judge_reward_logs_reward_and_judge_latency(vllm_model, tiny_checkpoint):  # noqa: F811
    from podium.models.registry import register_model
    from trainers.config import GrpoConfig, RewardSpec
    from trainers.grpo import run_grpo

    tag = uuid.uuid4().hex[:6]
    policy = register_model(f"tiny-{tag}", kind="base", path=str(tiny_checkpoint)).name
    table = f"t.grpo_judge_{tag}"
    write_table(table, chat_rows(PAIRS[:4]), schema=SFT_SCHEMA)
    cfg = GrpoConfig(
        model=policy,
        table={"name": table},
        out=f"judge-grpo-{tag}",
        preset="cpu-smoke",
        rewards=[RewardSpec(rule=f"judge:{vllm_model}")],
        max_steps=2,
        batch_size=4,
        num_generations=4,
        max_completion_length=12,
    )
    recorder = RecordingReporter()
    run_grpo(cfg, recorder)
    name = f"rewards/judge_{vllm_model}/mean"
    steps = [v for _, v in recorder.metrics if name in v]
    assert len(steps) == 2
    assert all(0.0 <= v[name] <= 1.0 and "reward" in v for v in steps)
    assert all(v["judge/latency_s"] > 0 and v["judge/unparsed"] == 0.0 for v in steps)
