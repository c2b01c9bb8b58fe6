"""A GRPO run whose rewards are equal within every group says so after its first steps
(issue 35: exact_match on demo.chat returned 0 for every completion; the run "trained"
with loss and grad norm 0 and nothing told the person who started it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import TrainerControl, TrainerState, TrainingArguments

from podium.reporting import Reporter
from trainers.callbacks import ReporterCallback
from trainers.learning_signal import no_signal_warning

# Rows as TRL 1.16's GRPO logs them (one per logged step).
FLAT = {
    "loss": 0.0,
    "grad_norm": 0.0,
    "reward": 0.0,
    "reward_std": 0.0,
    "rewards/exact_match/mean": 0.0,
    "rewards/exact_match/std": 0.0,
    "frac_reward_zero_std": 1.0,
}
LEARNING = {**FLAT, "reward": 0.4, "reward_std": 0.3, "frac_reward_zero_std": 0.5}


def test_constant_rewards_in_every_group_name_the_reward_and_its_value() -> None:
    assert no_signal_warning([FLAT]) is None  # one step is not enough to judge
    said = no_signal_warning([FLAT, FLAT])
    assert said and said.startswith("No learning signal in the first 2 steps")
    assert "exact_match returned 0 for every completion" in said
    # Equal within each group, different between groups: still nothing to learn from.
    other = {**FLAT, "reward": 1.0, "rewards/exact_match/mean": 1.0}
    assert "exact_match returned one value per group (0 to 1)" in (
        no_signal_warning([FLAT, other]) or ""
    )


def test_rewards_that_vary_in_a_group_or_sft_metrics_give_no_warning() -> None:
    assert no_signal_warning([FLAT, LEARNING]) is None
    assert no_signal_warning([LEARNING, FLAT]) is None  # judged on the first steps only
    assert no_signal_warning([{"loss": 1.2}, {"loss": 1.1}, {"loss": 1.0}]) is None
    # Async RL logs reward_std over the batch, no frac_reward_zero_std.
    assert no_signal_warning([{"reward": 0.5, "reward_std": 0.0}] * 2)
    assert no_signal_warning([{"reward": 0.5, "reward_std": 0.2}] * 2) is None


class Warnings(Reporter):
    def __init__(self) -> None:
        super().__init__()
        self.said: list[str] = []

    def warn(self, message: str) -> None:
        self.said.append(message)


def test_the_training_callback_warns_once_live() -> None:
    reporter = Warnings()
    callback = ReporterCallback(reporter, writer=None, save_every=0)  # type: ignore[arg-type]
    args: Any = TrainingArguments(output_dir="unused", use_cpu=True, report_to=[])
    state, control = TrainerState(), TrainerControl()
    for step in (1, 2, 3):
        state.global_step = step
        callback.on_log(args, state, control, logs=dict(FLAT))
        assert len(reporter.said) == (0 if step == 1 else 1)
    assert "exact_match returned 0" in reporter.said[0]


def test_the_default_rewards_vary_within_a_group_on_demo_chat(podium_home: Path) -> None:
    """Issue 35: the default GRPO rewards on demo.chat were exact match alone, 0 for every
    completion; the defaults now include a length penalty, which differs between
    completions of different lengths (what a small model's samples always are)."""
    from podium.app.views.train.model import default_rewards
    from podium.store.read.query import page
    from podium.store.write.demo import load_demo
    from trainers.config import RewardSpec
    from trainers.rewards import build_rewards

    load_demo()
    row = page("demo.chat", limit=1).rows[0]
    prompt, answer = row["messages"][:-1], row["messages"][-1]["content"]
    group = [f"Sure. {'Here is more detail. ' * k}" for k in (1, 3, 5, 8)]
    completions = [[{"role": "assistant", "content": text}] for text in group]
    specs = [RewardSpec(rule=r, weight=w) for r, w in default_rewards("cpu-smoke").items()]
    fns, weights = build_rewards(specs, None, {}, "demo.chat")
    totals = [0.0] * len(group)
    for fn, weight in zip(fns, weights, strict=True):
        scores = fn(prompts=[prompt] * len(group), completions=completions, answer=[answer] * 4)
        totals = [t + weight * s for t, s in zip(totals, scores, strict=True)]
    assert len(set(totals)) > 1, totals
