"""Named judges: `podium judge add|list|remove`, who added each, and every user of a
judge (a judge job, the rubric signal, the GRPO reward) resolving the name alike."""

from __future__ import annotations

import json
import subprocess
import sys

import cli_fork
import pytest

from podium.compare.judge_registry import add_judge, get_judge, list_judges, resolve_judge
from podium.errors import InvalidInput, NotFound
from podium.signals.rubric import Rubric, RubricSettings
from podium.store.state.users import acting_user
from trainers.rewards import make_reward

STRICT = "Strictly: {question}\nFirst: {answer_a}\nSecond: {answer_b}"


def _podium(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "podium.cli", "judge", *args]
    return cli_fork.run(cmd, capture_output=True, text=True, timeout=120)


def test_judges_are_added_listed_and_removed_with_their_author(comparison, tmp_path):
    prompt = tmp_path / "strict.txt"
    prompt.write_text(STRICT)
    added = _podium("add", "strict", "--model", "alpha", "--prompt-file", str(prompt))
    assert added.returncode == 0, added.stderr
    assert "added judge strict: pairwise, alpha, custom-" in added.stdout
    rubric = _podium("add", "grader", "--model", "omega", "--mode", "rubric", "--max-tokens", "640")
    assert rubric.returncode == 0, rubric.stderr
    listed = json.loads(_podium("list", "--json").stdout)
    assert [(j["name"], j["model"], j["mode"], j["max_tokens"]) for j in listed] == [
        ("grader", "omega", "rubric", 640),
        ("strict", "alpha", "pairwise", 512),
    ]
    assert {j["created_by"] for j in listed} == {acting_user().name}
    assert listed[1]["prompt"] == STRICT and listed[0]["prompt_version"] == "rubric-v1"
    again = _podium("add", "strict", "--model", "alpha")
    assert again.returncode != 0 and "A judge named 'strict' exists" in again.stderr
    removed = _podium("remove", "strict")
    assert removed.returncode == 0, removed.stderr
    assert [j.name for j in list_judges()] == ["grader"]
    gone = _podium("remove", "strict")
    assert gone.returncode != 0 and "No judge named 'strict'" in gone.stderr


def test_a_judge_that_could_not_run_is_refused_when_added(comparison):
    with pytest.raises(InvalidInput, match=r"lacks \{answer_b\}"):
        add_judge("half", "alpha", "pairwise", "Which? {question} {answer_a}")
    with pytest.raises(InvalidInput, match=r"lacks \{answer\}"):
        add_judge("half", "alpha", "rubric", "Rate {question}")
    with pytest.raises(NotFound, match="No model named 'nobody'"):
        add_judge("half", "nobody", "pairwise")
    with pytest.raises(InvalidInput, match="mode 'ranking' is unknown"):
        add_judge("half", "alpha", "ranking")
    with pytest.raises(InvalidInput, match="'alpha' is a registered model's name"):
        add_judge("alpha", "omega", "pairwise")
    # One that could cut a verdict the schema allows (the base model's "1.1.1..." reason
    # was cut at 256 tokens) is refused.
    with pytest.raises(InvalidInput, match="max_tokens 256 is outside 464-4096"):
        add_judge("half", "alpha", "pairwise", max_tokens=256)
    assert list_judges() == []


def test_every_user_of_a_judge_resolves_its_name_and_mode(comparison):
    add_judge("strict", "alpha", "pairwise", STRICT, max_tokens=600)
    add_judge("grader", "omega", "rubric")
    judge = resolve_judge("strict", "pairwise")
    assert (judge.model, judge.prompt, judge.max_tokens) == ("alpha", STRICT, 600)
    # A model's name still works: that model with the built-in prompt.
    assert resolve_judge("alpha", "pairwise").prompt_version == "pairwise-v1"
    with pytest.raises(InvalidInput, match="'grader' is a rubric judge; this needs a pairwise"):
        resolve_judge("grader", "pairwise")  # a rubric judge scores answers, not pairs
    with pytest.raises(InvalidInput, match="has its own prompt"):
        resolve_judge("strict", "pairwise", "Q {question} A {answer_a} B {answer_b}")
    signal = Rubric(RubricSettings(judge="strict"))
    with pytest.raises(InvalidInput, match="'strict' is a pairwise judge; this needs a rubric"):
        signal.check()
    graded = Rubric(RubricSettings(judge="grader"))
    graded.check()
    assert graded.pinned() == {"prompt_version": "rubric-v1", "model": "omega"}
    with pytest.raises(InvalidInput, match="'strict' is a pairwise judge"):
        make_reward("judge:strict")
    assert callable(make_reward("judge:grader"))
    assert get_judge("grader").created_by == acting_user().name
