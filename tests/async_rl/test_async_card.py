"""The async fields of a grpo card: what the card itself refuses (its model, so every
command, card and form refuses it at once), and what this machine and catalog refuse
at submit (the kind's preflight), before any model loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from train_fixtures import chat_rows

from podium.cli import app
from podium.errors import InvalidInput
from podium.jobs.queue import list_jobs
from podium.store.schema import SFT_SCHEMA
from podium.store.write.write import write_table
from trainers.async_rl.host import check_async_host, rollouts_table
from trainers.config import ASYNC_ONLY, GrpoConfig


def card(**extra: Any) -> GrpoConfig:
    return GrpoConfig.model_validate(
        {"model": "base", "table": {"name": "demo.chat"}, "out": "run-1", "rollout": "async"}
        | extra
    )


def test_defaults_and_the_derived_rollouts_table(podium_home: Path) -> None:
    cfg = card()
    assert (cfg.replicas, cfg.max_staleness, cfg.weight_sync, cfg.learner_ranks) == (
        1,
        1,
        "gloo",
        1,
    )
    assert rollouts_table(cfg) == "rollouts.run_1"
    assert rollouts_table(card(rollouts="ns.mine")) == "ns.mine"
    check_async_host(cfg)


def test_the_rank_time_out_reaches_every_rank(tmp_path: Path) -> None:
    """Issue 49, point 4: a learner rank silent in a collective fails the job after the
    card's `learner_rank_timeout_s` (120 s by default), the spec each rank builds from."""
    from trainers.async_rl.learner_setup import rank_spec
    from trainers.runtime import BaseModelRef

    base = BaseModelRef("base", tmp_path)
    assert rank_spec(card(learner_ranks=2), base, ["cpu"] * 2, 0, tmp_path).rank_timeout_s == 120
    cfg = card(learner_ranks=2, learner_rank_timeout_s=45)
    assert rank_spec(cfg, base, ["cpu"] * 2, 0, tmp_path).rank_timeout_s == 45


def test_what_an_async_card_refuses_by_itself() -> None:
    with pytest.raises(ValidationError, match="method: full"):
        card(method="lora")
    card(learner_ranks=2)  # sharded learner ranks run
    with pytest.raises(ValidationError, match="learner_ranks 8 need at least that many"):
        card(learner_ranks=8, batch_size=4, grad_accum=1, num_generations=4)
    card(learner_ranks=2, device="cuda")  # the host's GPU count decides (host.py)
    with pytest.raises(ValidationError):
        card(max_staleness=-1)
    with pytest.raises(ValidationError, match="learner_rank_timeout_s"):
        card(learner_rank_timeout_s=1)  # every slow collective would look like a lost rank
    with pytest.raises(InvalidInput, match="not allowed"):
        card(rollouts="bad name!")
    # A sync card never reads them, so it is not refused for them.
    assert card(rollout="sync", method="lora").method == "lora"


def test_what_this_host_and_catalog_refuse(podium_home: Path) -> None:
    write_table("rollouts.run_1", chat_rows([("q", "a")]), schema=SFT_SCHEMA)
    with pytest.raises(InvalidInput, match="Rollouts table rollouts.run_1 already exists"):
        check_async_host(card())
    check_async_host(card(rollouts="demo.other"))


def test_rolling_swaps_need_one_learner_rank_and_an_async_card() -> None:
    assert card().weight_swap == "barrier"  # every replica at once, as before
    assert card(weight_swap="rolling", replicas=2).weight_swap == "rolling"
    with pytest.raises(ValidationError, match="replica-by-replica order would stall"):
        card(weight_swap="rolling", learner_ranks=2)
    card(weight_swap="barrier", learner_ranks=2)
    with pytest.raises(ValidationError, match="weight_swap only apply to rollout: async"):
        card(rollout="sync", weight_swap="rolling")
    with pytest.raises(ValidationError):
        card(weight_swap="sideways")


def test_the_command_refuses_rolling_swaps_with_learner_ranks(stub_base: str) -> None:
    args = ["train", "grpo", "--model", stub_base, "--table", "demo.chat", "--out", "run-1"]
    error = refusal(
        *args, "--rollout", "async", "--weight-swap", "rolling", "--learner-ranks", "2", "--queue"
    )
    assert "weight_swap (--weight-swap): weight_swap: rolling pushes to one replica" in error
    assert "Use --weight-swap barrier or --learner-ranks 1" in error
    assert list_jobs() == []


def test_a_sync_card_refuses_async_only_fields_instead_of_ignoring_them() -> None:
    with pytest.raises(ValidationError, match="learner_ranks only apply to rollout: async"):
        card(rollout="sync", learner_ranks=2)
    with pytest.raises(ValidationError, match="replicas, rollouts only apply"):
        card(rollout="sync", replicas=2, rollouts="ns.x")
    assert card(rollout="sync").rollout == "sync"  # their defaults are fine


def test_one_list_of_async_only_fields() -> None:
    """The model marks its async-only fields; the sync refusal, the card schema and the
    Train page's async form all read that one list (it was written out three times)."""
    from podium.app.views.train.model import rollout_fields

    schema = GrpoConfig.model_json_schema()["properties"]
    marked = tuple(name for name, prop in schema.items() if prop.get("async_only"))
    assert marked == ASYNC_ONLY
    assert ASYNC_ONLY == (
        "replicas",
        "max_staleness",
        "weight_sync",
        "weight_swap",
        "learner_ranks",
        "learner_rank_timeout_s",
        "placement",
        "ppo_minibatches",
        "ppo_epochs",
        "rollouts",
    )
    assert rollout_fields("grpo", "async")[0] == ASYNC_ONLY
    given = {
        "replicas": 2,
        "max_staleness": 0,
        "weight_sync": "disk",
        "weight_swap": "rolling",
        "learner_ranks": 2,
        "learner_rank_timeout_s": 60.0,
        "placement": "colocated",
        "ppo_minibatches": 2,
        "ppo_epochs": 2,
    }
    with pytest.raises(ValidationError, match=", ".join(ASYNC_ONLY) + " only apply"):
        card(rollout="sync", rollouts="ns.x", **given)


def refusal(*args: str) -> str:
    """The error a `podium` command stops with (the CLI prints it; CliRunner keeps it)."""
    result = CliRunner().invoke(app, list(args))
    assert isinstance(result.exception, InvalidInput), result.output
    return str(result.exception)


def test_the_command_refuses_a_bad_async_card_at_once(stub_base: str, tmp_path: Path) -> None:
    """It used to be accepted (card written, job queued) and refused by the job itself."""
    written = tmp_path / "async.md"
    args = ["train", "grpo", "--model", stub_base, "--table", "demo.chat", "--out", "run-1"]
    error = refusal(*args, "--rollout", "async", "--method", "lora", "--card", str(written))
    assert "method (--method): rollout: async trains the full model" in error
    assert "Set --method full or use --rollout sync (got 'lora')" in error
    assert not written.exists()

    error = refusal(*args, "--rollout", "async", "--learner-ranks", "8", "--queue")
    assert "learner_ranks (--learner-ranks): learner_ranks 8 need at least" in error
    assert "Raise --batch-size or lower --learner-ranks" in error

    # The same card written by hand: `podium submit CARD` refuses it, nothing is queued.
    written.write_text(
        "---\nkind: grpo\nmodel: stub-base\ntable: {name: demo.chat}\nout: run-1\n"
        "rollout: async\nmethod: lora\n---\n"
    )
    assert "method (--method): rollout: async" in refusal("submit", str(written))
    assert list_jobs() == []


def test_learner_fields_an_async_card_refuses() -> None:
    with pytest.raises(ValidationError, match="async learner runs the schedules"):
        card(lr_scheduler="reduce_lr_on_plateau")
    with pytest.raises(ValidationError, match="lower --ppo-minibatches"):
        card(learner_ranks=2, ppo_minibatches=4, batch_size=4, grad_accum=1, num_generations=4)
    assert card(ppo_minibatches=2, ppo_epochs=2).ppo_minibatches == 2
    # Only the async learner cuts batches into minibatches: a sync card is refused them.
    with pytest.raises(ValidationError, match="only apply to rollout: async"):
        card(rollout="sync", ppo_minibatches=2)


def test_every_schedule_the_card_allows_runs() -> None:
    """The card's list of schedules is the learner's: each builds with warm-up and length."""
    import torch
    from transformers import get_scheduler

    from trainers.config import ASYNC_SCHEDULERS

    for name in ASYNC_SCHEDULERS:
        optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
        schedule = get_scheduler(name, optimizer, num_warmup_steps=1, num_training_steps=4)
        optimizer.step()
        schedule.step()
        assert optimizer.param_groups[0]["lr"] > 0, name
