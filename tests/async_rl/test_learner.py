"""The learner's GRPO step (truncated-IS REINFORCE) on the tiny model (real transformers,
CPU)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from learner_steps import COMPLETIONS, PROMPT, on_policy

from trainers.async_rl.learner import (
    Learner,
    LearnerSettings,
    Sample,
    build_batch,
    group_advantages,
    k3,
)


@pytest.fixture
def learner(tiny_checkpoint: Path) -> Learner:
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint), dtype=torch.float32)
    return Learner(model, LearnerSettings(learning_rate=1e-2, temperature=0.7, is_cap=2.0))


def test_group_advantages_are_normalised_per_group() -> None:
    adv = group_advantages([1.0, 0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0], 4)
    assert adv[0] > 0 > adv[1] and adv[1] == adv[2] == adv[3]
    assert abs(sum(adv[:4])) < 1e-9 and adv[4:] == [0.0] * 4  # a tie teaches nothing
    with pytest.raises(ValueError, match="groups of 3"):
        group_advantages([1.0, 2.0], 3)


def test_on_policy_weights_are_one(learner: Learner) -> None:
    stats = learner.step(on_policy(learner, [1.0, -1.0, 0.5, -0.5]))
    assert stats.is_weight_mean == pytest.approx(1.0, abs=1e-4)
    assert stats.is_truncated == 0.0 and abs(stats.behaviour_kl) < 1e-4


def test_stale_samples_are_truncated(learner: Learner) -> None:
    samples = on_policy(learner, [1.0, -1.0, 0.5, -0.5])
    # A behaviour policy that gave these tokens far less probability than the learner
    # does now: raw weights exp(+3) are capped at is_cap.
    stale = [
        Sample(
            s.prompt_ids, s.completion_ids, [lp - 3.0 for lp in s.behaviour_logprobs], s.advantage
        )
        for s in samples
    ]
    stats = learner.step(stale)
    assert stats.is_truncated == 1.0
    assert stats.is_weight_mean == pytest.approx(learner.is_cap)


def test_a_step_raises_positive_and_lowers_negative_advantage_completions(
    learner: Learner,
) -> None:
    samples = on_policy(learner, [1.0, -1.0, 1.0, -1.0])
    with torch.no_grad():
        before = learner.token_logprobs(samples)
    learner.step(samples)
    with torch.no_grad():
        after = learner.token_logprobs(samples)
    sizes = [len(c) for c in COMPLETIONS]
    gain = [float(d.sum()) for d in torch.split(after - before, sizes)]
    assert gain[0] > 0 and gain[2] > 0
    assert gain[1] < 0 and gain[3] < 0


def test_missing_behaviour_logprobs_are_refused(learner: Learner) -> None:
    with pytest.raises(ValueError, match="one processed log-prob per generated token"):
        learner.step([Sample(PROMPT, [5, 6], [-1.0], 1.0)])


def test_a_tied_head_is_not_pushed_twice(learner: Learner) -> None:
    names = [name for name, _ in learner.named_tensors()]
    assert "model.embed_tokens.weight" in names and "lm_head.weight" not in names


def test_a_batch_is_built_on_the_device_asked_for() -> None:
    # "meta" stands for a GPU here: a device other than the CPU the lists start on.
    samples = [Sample(PROMPT, c, [-1.0] * len(c), 0.5) for c in COMPLETIONS]
    batch = build_batch(samples, pad_token_id=0, device="meta")
    tensors = (batch.ids, batch.attention, batch.targets, batch.behaviour, batch.advantages)
    assert all(t.device.type == "meta" for t in tensors)
    assert batch.behaviour.dtype == batch.advantages.dtype == torch.float32
    on_cpu = build_batch(samples, pad_token_id=0, device="cpu")
    assert on_cpu.ids.shape == (4, len(PROMPT) + 3)
    assert int(on_cpu.targets.sum()) == on_cpu.behaviour.numel() == sum(map(len, COMPLETIONS))


def test_the_learner_builds_its_batches_where_the_model_is(learner: Learner) -> None:
    assert learner.device == next(learner.model.parameters()).device
    learner.model.to(torch.float64)  # any dtype: the step's log-probs stay float32
    stats = learner.step(on_policy(learner, [1.0, -1.0, 0.5, -0.5]))
    assert stats.is_weight_mean == pytest.approx(1.0, abs=1e-4)


def test_one_step_a_batch_is_truncated_is_reinforce_and_the_clip_never_acts(
    tiny_checkpoint: Path,
) -> None:
    """With one optimizer step per batch the proximal policy is the learner itself, so
    the PPO ratio is exactly 1: the step equals a plain truncated-IS policy gradient,
    -mean(min(exp(prox - behaviour), is_cap) * A * logp), whatever clip_eps says."""
    import copy

    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint), dtype=torch.float32)
    reinforce = copy.deepcopy(model)
    learner = Learner(model, LearnerSettings(learning_rate=1e-2, temperature=0.7, clip_eps=0.01))
    # Stale samples with large advantages: where a PPO clip would bite, if it could.
    samples = [
        Sample(s.prompt_ids, s.completion_ids, [lp - 0.5 for lp in s.behaviour_logprobs], a)
        for s, a in zip(on_policy(learner, [0.0] * 4), [3.0, -3.0, 2.0, -2.0], strict=True)
    ]
    learner.step(samples)

    plain = Learner(reinforce, LearnerSettings(learning_rate=1e-2, temperature=0.7))
    batch = build_batch(samples, 0, plain.device)
    logps = plain.token_logprobs(samples)
    weight = torch.exp(logps.detach() - batch.behaviour).clamp(max=plain.is_cap)
    loss = -(weight * batch.advantages * logps).sum() / logps.numel()
    torch.autograd.backward(loss)

    # The same gradient (Adam's first step is about sign(g), so weights are compared
    # through the gradients that moved them).
    pairs = zip(model.named_parameters(), reinforce.named_parameters(), strict=True)
    for (name, a), (_, b) in pairs:
        assert a.grad is not None and b.grad is not None, name
        assert torch.allclose(a.grad, b.grad, rtol=1e-4, atol=1e-5), (
            name,
            float((a.grad - b.grad).abs().max()),
            float(b.grad.abs().max()),
        )


def stale(samples: list[Sample], shift: list[float]) -> list[Sample]:
    """`samples` as a behaviour policy made them whose log-probs differ by `shift` (one
    per token, in order) from the learner's."""
    out, i = [], 0
    for s in samples:
        n = len(s.completion_ids)
        lps = [lp + d for lp, d in zip(s.behaviour_logprobs, shift[i : i + n], strict=True)]
        out.append(Sample(s.prompt_ids, s.completion_ids, lps, s.advantage))
        i += n
    return out


def test_behaviour_kl_is_never_negative(learner: Learner) -> None:
    """KL(behaviour || policy) >= 0 over seeded random behaviour policies, and equal to
    the k3 estimate mean(exp(d) - d - 1), d = prox - behaviour. The old figure,
    mean(prox - behaviour), was -0.5 on the first draw's kind of sample (a behaviour that
    gave its own tokens more probability than the learner does)."""
    import random

    rng = random.Random(7)
    tokens = sum(map(len, COMPLETIONS))
    for trial in range(12):
        scale = rng.choice([0.01, 0.3, 2.0])
        shift = [rng.gauss(0.5 if trial == 0 else 0.0, scale) for _ in range(tokens)]
        samples = stale(on_policy(learner, [1.0, -1.0, 0.5, -0.5]), shift)
        with torch.no_grad():
            prox = learner.token_logprobs(samples)
        behaviour = torch.tensor([lp for s in samples for lp in s.behaviour_logprobs])
        d = (prox - behaviour).double()
        stats = learner.step(samples)
        assert stats.behaviour_kl >= 0, (trial, stats.behaviour_kl)
        expected = float((torch.expm1(d) - d).mean())
        assert stats.behaviour_kl == pytest.approx(expected, rel=1e-4, abs=1e-6), trial
    assert k3(torch.linspace(-20, 20, 401)).min() >= 0


def fresh(tiny_checkpoint: Path, **settings: Any) -> Learner:
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint), dtype=torch.float32)
    base = {"learning_rate": 1e-2, "temperature": 0.7}
    return Learner(model, LearnerSettings(**(base | settings)))


def test_minibatches_move_the_policy_within_a_batch_and_the_clip_acts(
    tiny_checkpoint: Path,
) -> None:
    advantages = [3.0, -3.0, 2.0, -2.0]
    one = fresh(tiny_checkpoint, learning_rate=5e-2, clip_eps=0.05)
    assert one.step(on_policy(one, advantages)).clip_fraction == 0.0  # r is exactly 1
    many = fresh(tiny_checkpoint, learning_rate=5e-2, clip_eps=0.05, minibatches=2, epochs=2)
    stats = many.step(on_policy(many, advantages))
    assert 0 < stats.clip_fraction <= 1
    assert many.optimizer.state_dict()["state"][0]["step"] == 4  # 2 minibatches x 2 epochs


def test_micro_batches_accumulate_the_gradient_of_the_whole_batch(
    tiny_checkpoint: Path,
) -> None:
    whole = fresh(tiny_checkpoint)
    parts = fresh(tiny_checkpoint, micro_batch=1)
    samples = stale(on_policy(whole, [1.0, -1.0, 0.5, -0.5]), [0.2] * 9)
    a, b = whole.step(samples), parts.step(samples)
    assert a.loss == pytest.approx(b.loss, rel=1e-5) and a.tokens == b.tokens
    pairs = zip(whole.model.parameters(), parts.model.parameters(), strict=True)
    for x, y in pairs:
        assert x.grad is not None and y.grad is not None
        # float noise only (shapes differ, so sums are ordered differently)
        assert float((x.grad - y.grad).abs().max()) <= 1e-4 * float(y.grad.abs().max())


def test_the_learning_rate_follows_the_cards_schedule(tiny_checkpoint: Path) -> None:
    learner = fresh(tiny_checkpoint, lr_scheduler="linear", warmup_steps=2, total_steps=4)
    seen = [learner.step(on_policy(learner, [1.0, -1.0, 0.5, -0.5])).learning_rate for _ in "abcd"]
    assert seen == pytest.approx([0.0, 5e-3, 1e-2, 5e-3])
    with pytest.raises(ValueError, match="lr_scheduler 'reduce_lr_on_plateau'"):
        fresh(tiny_checkpoint, lr_scheduler="reduce_lr_on_plateau")


def test_beta_pulls_towards_the_reference(tiny_checkpoint: Path) -> None:
    import copy

    with pytest.raises(ValueError, match="needs a reference model"):
        fresh(tiny_checkpoint, beta=0.1)
    learner = fresh(tiny_checkpoint, learning_rate=5e-2)
    reference = copy.deepcopy(learner.model)
    learner = Learner(
        learner.model, LearnerSettings(learning_rate=5e-2, beta=0.1), reference=reference
    )
    first = learner.step(on_policy(learner, [3.0, -3.0, 2.0, -2.0]))
    assert first.ref_kl == pytest.approx(0.0, abs=1e-6)  # the policy is the reference
    second = learner.step(on_policy(learner, [3.0, -3.0, 2.0, -2.0]))
    assert second.ref_kl is not None and second.ref_kl > 1e-4
    assert all(not p.requires_grad for p in reference.parameters())
