"""`podium vote`: blind pairs in the terminal, stored in the votes table the page uses."""

from __future__ import annotations

import os
import subprocess
import sys

import cli_fork
import compare_data

from podium.compare.table import Comparison
from podium.compare.votes import blind_pair, list_votes

compare_config = compare_data.compare_config  # fixtures
comparison = compare_data.comparison


def _vote(*args: str, keys: str, user: str) -> subprocess.CompletedProcess[str]:
    """`podium vote` as `user` of a shared deployment where anyone allowed in reviews."""
    env = {**os.environ, "PODIUM_USER": user, "PODIUM_DEFAULT_ROLE": "reviewer"}
    return cli_fork.run(
        [sys.executable, "-m", "podium.cli", "vote", *args],
        env=env,
        input=keys,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_votes_blind_then_reveals_and_skips_what_is_voted(comparison: Comparison) -> None:
    first, second = comparison.items[:2]
    run = _vote("cmp.colours", keys="a\ns\nq\n", user="carol")
    assert run.returncode == 0, run.stderr
    before_vote = run.stdout.split("A was ")[0]
    assert "alpha" not in before_vote and "omega" not in before_vote  # names stay hidden
    assert first.prompt_text in before_vote
    pair = blind_pair(comparison, first, "carol")
    assert f"A was {pair.model_a}, B was {pair.model_b}" in run.stdout
    (vote,) = list_votes("cmp.colours")
    assert (vote["voter"], vote["prompt_id"], vote["verdict"]) == ("carol", first.prompt_id, "A")
    assert vote["winner"] == pair.model_a  # the same pair and rules as the Compare page

    again = _vote("cmp.colours", keys="x\nq\n", user="carol")
    assert again.returncode == 0, again.stderr
    assert "1 of 4 prompts voted by carol" in again.stdout
    verdicts = [(v["prompt_id"], v["verdict"]) for v in list_votes("cmp.colours")]
    assert verdicts == [(first.prompt_id, "A"), (second.prompt_id, "both_bad")]


def test_an_unknown_key_is_asked_again(comparison: Comparison) -> None:
    run = _vote("cmp.colours", keys="z\nt\nq\n", user="dan")
    assert run.returncode == 0, run.stderr
    assert "is not one of" in run.stdout + run.stderr
    assert [v["verdict"] for v in list_votes("cmp.colours")] == ["tie"]
