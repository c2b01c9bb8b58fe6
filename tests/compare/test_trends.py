"""Trends: a training run's checkpoints by step, against its base."""

from __future__ import annotations

import cli_fork
import pytest
from compare_data import BAD, GOOD, write_prompts, write_samples

from podium.compare.job import CompareConfig, run_compare
from podium.compare.table import load_comparison
from podium.compare.trends import run_checkpoints, trend_points
from podium.compare.votes import blind_pair, cast_vote, list_votes
from podium.errors import NotFound
from podium.identity import User
from podium.models.registry import register_model
from podium.reporting import Reporter
from podium.store.read.refs import TableRef


def reviewer(name: str) -> User:
    return User(name=name, role="reviewer", source="oidc")


@pytest.fixture
def training_run(podium_home):
    register_model("tb", kind="base", path="/models/tb")
    register_model("other-step-1", kind="trained", path="/m/o1", parent="tb", job_id="j0", step=1)
    for name, step, final in (("run-step-2", 2, False), ("run-step-4", 4, False), ("run", 4, True)):
        register_model(
            name,
            kind="trained",
            path=f"/m/{name}",
            parent="tb",
            job_id="j1",
            step=step,
            lineage={"final": final},
        )
    return "run"


def test_run_checkpoints_by_step_final_replaces_same_step(training_run):
    base, ckpts = run_checkpoints("run")
    assert base == "tb" and [c.name for c in ckpts] == ["run-step-2", "run"]
    assert run_checkpoints("j1")[1] == ckpts  # by job id too
    with pytest.raises(NotFound, match="No registered checkpoints"):
        run_checkpoints("nope")


def test_trend_points_pass_rate_and_win_rates_by_step(training_run):
    table = write_prompts()
    models = ["tb", "run-step-2", "run"]
    cfg = CompareConfig(models=models, input=TableRef(name=table), out="cmp.trend", checks=["json"])
    halfway = {**BAD, "p0": GOOD["p0"]}
    for model, answers in zip(models, (BAD, halfway, GOOD), strict=True):
        write_samples(f"gen.{model.replace('-', '_')}", model, table, cfg, answers)
    run_compare(cfg, Reporter())  # every sample exists: no server is started
    comparison = load_comparison("cmp.trend")
    points = trend_points(comparison, [])
    assert [(p.model, p.step) for p in points] == [("tb", 0), ("run-step-2", 2), ("run", 4)]
    rates = [p.pass_rate for p in points]
    assert rates[0] < rates[1] < rates[2] == 0.75  # the code answer is not JSON
    assert points[0].check_win_rate == 0.5
    assert points[2].check_win_rate > points[1].check_win_rate > 0.5
    assert all(p.vote_win_rate is None for p in points)
    for item in comparison.items:
        for voter in ("ann", "bob", "cy", "dee"):
            pair = blind_pair(comparison, item, voter)
            if "tb" in (pair.model_a, pair.model_b):
                cast_vote(comparison, pair, "B" if pair.model_a == "tb" else "A", reviewer(voter))
    voted = trend_points(comparison, list_votes("cmp.trend"))
    assert all(p.vote_win_rate in (None, 1.0) for p in voted[1:])
    assert any(p.vote_win_rate == 1.0 for p in voted[1:])


def test_trend_command_compares_the_run_and_prints_points_by_step(training_run):
    import json
    import sys

    table = write_prompts()
    cfg = CompareConfig(
        models=["tb", "run-step-2", "run"],
        input=TableRef(name=table),
        out="cmp.x",
        max_tokens=16,
        checks=["json"],
    )
    for model, answers in zip(cfg.models, (BAD, {**BAD, "p0": GOOD["p0"]}, GOOD), strict=True):
        write_samples(f"gen.{model.replace('-', '_')}", model, table, cfg, answers)
    proc = cli_fork.run(
        [
            sys.executable,
            "-m",
            "podium.cli",
            "compare",
            "trend",
            "--run",
            "run",
            "--table",
            table,
            "--out",
            "cmp.run_trend",
            "--max-tokens",
            "16",
            "--check",
            "json",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    points = json.loads(proc.stdout)
    assert [(p["model"], p["step"]) for p in points] == [("tb", 0), ("run-step-2", 2), ("run", 4)]
    assert points[0]["pass_rate"] < points[1]["pass_rate"] < points[2]["pass_rate"]
