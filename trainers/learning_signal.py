"""Telling a GRPO run that cannot learn: rewards equal within every group.

GRPO learns from the differences between the rewards of one prompt's completions. When
every completion of every group gets the same reward (exact_match on free-form chat
answers: 0 for all), the advantages are 0, so are the loss and the gradients, and the
run ends with the weights it started from. TRL logs it as `frac_reward_zero_std` (the
share of groups whose rewards did not vary); this module turns the first steps of that
into one sentence naming each reward and what it returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

NO_SIGNAL_AFTER = 2  # logged steps with constant rewards before the run is told


def _constant(step: Mapping[str, float]) -> bool:
    if "frac_reward_zero_std" in step:
        return step["frac_reward_zero_std"] >= 1.0
    return step.get("reward_std", 1.0) == 0.0  # std over the batch: every group, too


def _returned(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    if low == high:
        return f"returned {low:g} for every completion"
    return f"returned one value per group ({low:g} to {high:g})"


def no_signal_warning(
    history: Sequence[Mapping[str, float]], after: int = NO_SIGNAL_AFTER
) -> str | None:
    """The warning for a run whose first `after` logged reward steps all had rewards
    equal within every group; None while it learns (or has not logged enough yet)."""
    steps = [s for s in history if "reward" in s][:after]
    if len(steps) < after or not all(_constant(s) for s in steps):
        return None
    means = [
        (k.removeprefix("rewards/").removesuffix("/mean"), v)
        for s in steps
        for k, v in s.items()
        if k.startswith("rewards/") and k.endswith("/mean")
    ]
    per_reward = [
        f"{name} {_returned([v for n, v in means if n == name])}"
        for name in sorted({n for n, _ in means})
    ] or [f"the reward {_returned([s['reward'] for s in steps])}"]
    return (
        f"No learning signal in the first {after} steps: every group's completions got the "
        f"same reward ({'; '.join(per_reward)}), so the advantages, loss and gradients are 0 "
        "and the weights do not change. Use a reward that tells completions apart (e.g. "
        "length:N, validate:RULE), or raise num_generations or temperature."
    )
