"""A training run re-runs to the same weights and curves on CPU (issue 29):
`podium train sft|grpo ... --preset cpu-smoke`, then `podium jobs rerun ID --compare`."""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import update

from podium.cli import app
from podium.jobs.queue import get_job, list_jobs
from podium.jobs.reproducibility import reproducibility_text
from podium.jobs.tables import db, jobs
from podium.models.registry import get_model

pytestmark = pytest.mark.train
runner = CliRunner()


def _train(kind: str, model: str, out: str, *extra: str) -> str:
    args = ["train", kind, "--model", model, "--table", "t.memo", "--out", out]
    result = runner.invoke(app, [*args, "--preset", "cpu-smoke", "--steps", "3", *extra])
    assert result.exit_code == 0, result.output
    job_id = get_model(out).job_id
    assert job_id
    return job_id


def _rerun(job_id: str) -> dict:
    result = runner.invoke(app, ["jobs", "rerun", job_id, "--compare", "--json", "--quiet"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_sft_reruns_to_identical_weights_and_loss_curve(tiny_base, make_table, memo_pairs):
    make_table("t.memo", memo_pairs)
    job_id = _train("sft", tiny_base, "det-sft")
    front = yaml.safe_load(get_job(job_id)["card"].split("---")[1])
    assert front["environment"]["device"] == "cpu"
    assert front["environment"]["determinism"] == "exact"
    report = _rerun(job_id)
    [weights] = report["checkpoints"]
    assert weights["identical"] is True, weights
    assert weights["original_digest"] == weights["rerun_digest"]
    assert weights["original"].endswith("det-sft/final")
    assert weights["rerun"].endswith("det-sft__rerun_1/final")
    loss = next(c for c in report["curves"] if c["name"] == "loss")
    assert loss["steps"] == 3 and loss["identical"] is True, loss
    assert all(c["identical"] for c in report["curves"]), report["curves"]
    assert not any("tokens_per_s" == c["name"] for c in report["curves"])  # timing: left out
    assert report["verdict"] == "identical" and report["all_identical"] is True
    assert report["environment_differences"] == []
    assert get_model("det-sft__rerun_1").job_id == report["rerun_job_id"]
    assert reproducibility_text(get_job(job_id)).startswith("re-ran identical on ")
    # The Logbook's Re-run queues it into the next free name too (before: its card as it
    # was, which failed on "model 'det-sft' is already registered").
    from podium.jobs import logbook
    from podium.jobs.cards import parse_card

    queued = parse_card(get_job(logbook.rerun(job_id))["card"]).config
    assert queued.out == "det-sft__rerun_2"


def test_grpo_reruns_to_identical_weights_and_reward_curve(tiny_base, make_table, memo_pairs):
    """GRPO samples its completions: the same seed must give the same ones."""
    make_table("t.memo", memo_pairs)
    job_id = _train("grpo", tiny_base, "det-grpo", "--reward", "length:20")
    report = _rerun(job_id)
    [weights] = report["checkpoints"]
    assert weights["identical"] is True, weights
    names = {c["name"] for c in report["curves"]}
    assert {"loss", "reward"} <= names, names
    assert all(c["identical"] for c in report["curves"]), report["curves"]
    assert report["verdict"] == "identical"


def test_a_changed_environment_and_other_weights_are_reported(tiny_base, make_table, memo_pairs):
    """The stored card's commit is changed; a re-run with another learning rate (written
    into the stored card too) must report both: the pin and how far the weights moved."""
    make_table("t.memo", memo_pairs)
    job_id = _train("sft", tiny_base, "env-sft")
    card = get_job(job_id)["card"]
    front = yaml.safe_load(card.split("---")[1])
    changed = card.replace(
        f"podium_commit: {front['environment']['podium_commit']}", "podium_commit: 0123abc"
    ).replace(f"learning_rate: {front['learning_rate']}", "learning_rate: 0.002")
    assert changed.count("0123abc") == 1 and "learning_rate: 0.002" in changed
    with db().begin() as conn:
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(card=changed))
    report = _rerun(job_id)
    assert any(
        d.startswith("Podium commit: card 0123abc, now ") for d in report["environment_differences"]
    )
    [weights] = report["checkpoints"]
    assert weights["identical"] is False and weights["max_abs_diff"] > 0
    assert weights["max_diff_tensor"] and weights["differing_count"] > 0
    loss = next(c for c in report["curves"] if c["name"] == "loss")
    assert loss["first_differing_step"] is not None
    assert report["verdict"] == "differs"
    shown = reproducibility_text(get_job(job_id))
    assert shown.startswith("differs: weights of env-sft: largest difference "), shown
    assert [j["id"] for j in list_jobs(limit=1)] == [report["rerun_job_id"]]
