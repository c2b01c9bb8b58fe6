"""The learner's GRPO step (truncated-IS REINFORCE) on the tiny model (real transformers,
CPU)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from trainers.async_rl.learner import Learner, Sample, build_batch, group_advantages

PROMPT = [1, 42, 7, 99]
COMPLETIONS = [[5, 6, 7], [8, 9], [10, 11, 12], [13]]


@pytest.fixture
def learner(tiny_checkpoint: Path) -> Learner:
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint), dtype=torch.float32)
    return Learner(model, learning_rate=1e-2, temperature=0.7, is_cap=2.0)


def on_policy(learner: Learner, advantages: list[float]) -> list[Sample]:
    """Samples whose behaviour log-probs are the learner's own (as a replica holding the
    same weights would report them)."""
    blank = [Sample(PROMPT, c, [0.0] * len(c), 0.0) for c in COMPLETIONS]
    with torch.no_grad():
        flat = learner.token_logprobs(blank).tolist()
    out, i = [], 0
    for c, a in zip(COMPLETIONS, advantages, strict=True):
        out.append(Sample(PROMPT, c, flat[i : i + len(c)], a))
        i += len(c)
    return out


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
    learner = Learner(model, learning_rate=1e-2, temperature=0.7, clip_eps=0.01)
    # Stale samples with large advantages: where a PPO clip would bite, if it could.
    samples = [
        Sample(s.prompt_ids, s.completion_ids, [lp - 0.5 for lp in s.behaviour_logprobs], a)
        for s, a in zip(on_policy(learner, [0.0] * 4), [3.0, -3.0, 2.0, -2.0], strict=True)
    ]
    learner.step(samples)

    plain = Learner(reinforce, learning_rate=1e-2, temperature=0.7)
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
