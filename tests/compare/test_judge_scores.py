"""Rubric judging of a comparison: mean score per model beside the pairwise figures, each
with its counts (computed by hand here; the real server's run is in test_judge_vllm)."""

from __future__ import annotations

import json
import sys

import cli_fork
import pytest
from compare_data import rubric_score as score

from podium.compare.judge import JudgeConfig, run_judge
from podium.compare.judge_agreement import comparison_agreement
from podium.compare.judge_registry import add_judge
from podium.compare.judge_scores import list_scores, mean_scores, score_lines, store_scores
from podium.errors import InvalidInput
from podium.reporting import Reporter
from podium.store.catalog.catalog import table_exists


def test_mean_scores_per_model_sit_beside_the_pairwise_figures(comparison):
    # alpha: 8 and 6 -> 7.00 (2 scored); omega: 3 and unparsed -> 3.00 (1 scored, 1
    # unparsed); omega's p0 was scored 9 first, then 3: the latest counts.
    store_scores(
        [
            score(comparison, "p0", "omega", 9),
            score(comparison, "p0", "alpha", 8, 1),
            score(comparison, "p1", "alpha", 6, 1),
            score(comparison, "p0", "omega", 3, 2),
            score(comparison, "p1", "omega", None, 2),
        ]
    )
    means = mean_scores(comparison, list_scores(comparison.name))
    assert means == {
        "judge:grader@rubric-v1": {
            "alpha": {"mean": 7.0, "scored": 2, "unparsed": 0},
            "omega": {"mean": 3.0, "scored": 1, "unparsed": 1},
        }
    }
    assert score_lines(means) == [
        "judge:grader@rubric-v1 rubric: alpha 7.00 (2 scored) · omega 3.00 (1 scored, 1 unparsed)"
    ]
    # Scores alone (no votes, no pairwise verdicts) are enough for the agreement report.
    assert comparison_agreement(comparison, bootstrap=5)["rubric"] == means
    cmd = [sys.executable, "-m", "podium.cli", "judge", "agreement", comparison.name]
    out = cli_fork.run(cmd + ["--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["rubric"] == means


def test_a_rubric_judge_refuses_a_second_prompt_and_writes_nothing_when_unanswered(comparison):
    add_judge("grader", "alpha", "rubric")  # alpha: an endpoint on a closed port
    with pytest.raises(InvalidInput, match="has its own prompt"):
        cfg = JudgeConfig(
            comparison=comparison.name,
            judge="grader",
            prompt="Q {question} A {answer_a} B {answer_b}",
        )
        run_judge(cfg, Reporter())
    cfg = JudgeConfig(
        comparison=comparison.name,
        judge="grader",
        retry={"retry_attempts": 1, "retry_max_wait_s": 1},
    )
    with pytest.raises(Exception, match="did not answer"):
        run_judge(cfg, Reporter())
    assert not table_exists("compare.judge_scores")
