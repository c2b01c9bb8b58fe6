"""`podium compare` as a person runs it: real processes, exit codes, JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import cli_fork
import yaml

from podium.compare.votes import blind_pair, cast_vote
from podium.identity import User
from podium.store.catalog.catalog import load_table

PODIUM = [sys.executable, "-m", "podium.cli"]


def reviewer(name: str) -> User:
    return User(name=name, role="reviewer", source="oidc")


def podium(*args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = cli_fork.run([*PODIUM, *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_compare_runs_a_job_reusing_samples_then_ratings_follow_votes(compare_config, tmp_path):
    before = len(load_table("gen.alpha").snapshots())
    podium(
        "compare",
        "--models",
        "alpha,omega",
        "--table",
        "evals.colours",
        "--out",
        "cmp.cli",
        "--max-tokens",
        "32",
        "--check",
        "json",
    )
    assert len(load_table("gen.alpha").snapshots()) == before  # reused, nothing generated
    listed = json.loads(podium("compare", "list", "--json").stdout)
    assert listed == [
        {"name": "cmp.cli", "models": ["alpha", "omega"], "input": listed[0]["input"], "prompts": 4}
    ]
    assert listed[0]["input"].startswith("evals.colours@")
    empty = json.loads(podium("compare", "ratings", "cmp.cli", "--json").stdout)
    assert empty["votes"] == 0 and empty["pass_rates"]["alpha"]["json"] == 0.75

    from podium.compare.table import load_comparison

    comparison = load_comparison("cmp.cli")
    for item in comparison.items:
        pair = blind_pair(comparison, item, "ann")
        cast_vote(comparison, pair, "A" if pair.model_a == "omega" else "B", reviewer("ann"))
    report = json.loads(podium("compare", "ratings", "cmp.cli", "--json").stdout)
    assert report["votes"] == 4 and [r["model"] for r in report["ratings"]] == ["omega", "alpha"]
    assert report["win_rates"]["omega"]["alpha"] == 1.0
    assert "omega" in podium("compare", "ratings", "cmp.cli").stdout

    card = tmp_path / "cmp.md"
    podium(
        "compare",
        "--models",
        "alpha,omega",
        "--table",
        "evals.colours",
        "--out",
        "cmp.c2",
        "--card",
        str(card),
    )
    front = yaml.safe_load(card.read_text().split("---")[1])
    assert front["kind"] == "compare" and front["models"] == ["alpha", "omega"]
    assert front["table"]["snapshot_id"] is not None


def test_bad_input_names_the_problem(compare_config):
    one = podium(
        "compare", "--models", "alpha", "--table", "evals.colours", "--out", "c.x", ok=False
    )
    assert one.returncode == 2 and "2 to 16 models" in one.stderr
    nope = podium("compare", "ratings", "evals.colours", ok=False)
    assert nope.returncode == 2 and "is not a comparison" in nope.stderr
    missing = podium("compare", "--models", "alpha,omega", ok=False)
    assert missing.returncode == 2 and "--table" in missing.stderr
