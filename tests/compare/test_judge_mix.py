"""Ratings are people's alone unless a judge is asked for; then its parsed verdicts join
the fit and the report keeps the counts of each apart (the CLI here; the Compare
page's toggle in tests/app/test_compare_judges.py)."""

from __future__ import annotations

import json
import sys

import cli_fork
import pytest
from test_judge_agreement import verdicts, vote

from podium.compare.judge import store_verdicts
from podium.compare.judge_mix import judge_votes
from podium.compare.ratings import rated_by, ratings_report
from podium.compare.votes import list_votes
from podium.errors import InvalidInput


def test_a_judge_is_mixed_in_only_when_asked_with_its_counts_apart(comparison):
    vote(comparison, "p0", "ann", "A")  # people: alpha once
    # judge x: omega on p1 and p2 (consistent both orders), p3 prose: unparsed.
    raw = {"p1": ("B", "A"), "p2": ("B", "A"), "p3": ("", "")}
    store_verdicts(verdicts(comparison, "x", raw))
    alone = ratings_report(comparison, list_votes(comparison.name), bootstrap=5)
    assert (alone["votes"], alone["judge"], alone["judge_votes"]) == (1, None, 0)
    assert alone["better"]["alpha"] == 1 and alone["better"]["omega"] == 0
    assert rated_by(alone) == "1 votes"
    cmd = [sys.executable, "-m", "podium.cli", "compare", "ratings", comparison.name]
    cmd += ["--bootstrap", "5", "--json", "--with-judge", "x"]
    done = cli_fork.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    mixed = json.loads(done.stdout)
    assert (mixed["votes"], mixed["judge"], mixed["judge_votes"]) == (1, "judge:x@pairwise-v1", 2)
    assert mixed["better"]["alpha"] == 1 and mixed["better"]["omega"] == 2
    counts = {
        r["model"]: (r["votes"], r["people_votes"], r["judge_votes"]) for r in mixed["ratings"]
    }
    assert counts == {"alpha": (3, 1, 2), "omega": (3, 1, 2)}
    assert mixed["win_rates"]["omega"]["alpha"] == pytest.approx(2 / 3)
    assert rated_by(mixed) == "1 votes by people + 2 verdicts by judge:x@pairwise-v1"


def test_an_unknown_or_ambiguous_judge_is_named(comparison):
    with pytest.raises(InvalidInput, match="'nobody' has no parsed verdicts on"):
        judge_votes(comparison, "nobody")
    store_verdicts(verdicts(comparison, "x", {"p0": ("A", "B")}))
    other = verdicts(comparison, "x", {"p1": ("A", "B")})
    store_verdicts([{**r, "prompt_version": "custom-abc"} for r in other])
    with pytest.raises(InvalidInput, match="name one of x@custom-abc, x@pairwise-v1"):
        judge_votes(comparison, "x")
    label, rows = judge_votes(comparison, "x@custom-abc")
    assert label == "judge:x@custom-abc" and [r["prompt_id"] for r in rows] == ["p1"]
