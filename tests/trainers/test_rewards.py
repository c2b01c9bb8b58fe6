"""Rewards built from Podium's parts score known completions as they should."""

from __future__ import annotations

import json

import pytest

from podium.errors import InvalidInput
from trainers.config import RewardSpec
from trainers.rewards import SampleTap, build_rewards, make_reward


def _as_chat(texts: list[str]) -> list[list[dict[str, str]]]:
    return [[{"role": "assistant", "content": t}] for t in texts]


def test_validation_rule_reward_scores_json_and_fenced_json():
    fn = make_reward("validate:json")
    good, fenced, bad = '{"a": 1}', 'Here:\n```json\n{"a": 2}\n```', '{"a": 1,}'
    assert fn([], _as_chat([good, fenced, bad]), metadata=["{}"] * 3) == [1.0, 1.0, 0.0]


def test_json_schema_reward_uses_the_schema_stored_on_the_table():
    schema = {"type": "object", "required": ["colour"]}
    fn = make_reward("validate:json-schema", {"podium.json_schema": json.dumps(schema)}, "t.x")
    assert fn([], _as_chat(['{"colour": "red"}', '{"size": 3}'])) == [1.0, 0.0]


def test_exact_match_and_length_rewards():
    exact = make_reward("exact_match")
    assert exact([], _as_chat([" yes ", "no"]), answer=["yes", "yes"]) == [1.0, 0.0]
    length = make_reward("length:10")
    assert length([], _as_chat(["x" * 5, "x" * 15, "x" * 40])) == [0.0, -0.5, -1.0]


@pytest.mark.parametrize("rule", ["vibes", "validate:nope", "length:abc", "sandbox:maybe"])
def test_unknown_rules_are_refused(rule):
    with pytest.raises(InvalidInput):
        make_reward(rule)


def test_weights_names_and_sample_tap():
    tap = SampleTap(keep=1)
    funcs, weights = build_rewards(
        [RewardSpec(rule="exact_match"), RewardSpec(rule="length:4", weight=0.5)], tap
    )
    assert [f.__name__ for f in funcs] == ["exact_match", "length_4"] and weights == [1.0, 0.5]
    prompts = [[{"role": "user", "content": "say hi"}]] * 2
    for fn in funcs:
        fn(prompts, _as_chat(["hi", "hello"]), answer=["hi", "hi"])
    assert tap.take() == [
        {"prompt": "say hi", "completion": "hi", "reward/exact_match": 1.0, "reward/length_4": 0.0}
    ]
    assert tap.take() == []


@pytest.mark.sandbox
def test_sandbox_output_reward_runs_code_and_compares_output():
    fn = make_reward("sandbox:output")
    completions = _as_chat(
        [
            "```python\nprint(sum(range(5)))\n```",  # prints 10: right
            "print(11)",  # wrong
            "while True: pass",  # never ends: contained, scores 0
            "print(3 * 4)",  # matches what the reference code prints
        ]
    )
    metadata = [json.dumps({"expected_output": "10"})] * 3 + ["{}"]
    answers = ["", "", "", "```python\nprint(12)\n```"]
    assert fn([], completions, answer=answers, metadata=metadata) == [1.0, 0.0, 0.0, 1.0]


@pytest.mark.sandbox
def test_sandbox_tests_reward_runs_the_rows_unit_tests():
    fn = make_reward("sandbox:tests")
    tests = json.dumps({"tests": "assert add(2, 3) == 5\nassert add(-1, 1) == 0"})
    completions = _as_chat(
        [
            "def add(a, b):\n    return a + b",
            "def add(a, b):\n    return a - b",
            "no code here",
        ]
    )
    assert fn([], completions, answer=[""] * 3, metadata=[tests] * 3) == [1.0, 0.0, 0.0]


@pytest.mark.sandbox
@pytest.mark.parametrize("fence", ["python3", "Python", "py", ""])
def test_sandbox_rewards_read_every_fence_label_as_compare_does(fence):
    # A ```python3 block used to score 0 here while Compare passed it.
    answer = f"```{fence}\ndef add(a, b):\n    return a + b\n```\n```\n>>> add(1, 2)\n3\n```"
    tests = json.dumps({"tests": "assert add(2, 3) == 5"})
    assert make_reward("sandbox:tests")([], _as_chat([answer]), answer=[""], metadata=[tests]) == [
        1.0
    ]
    printing = f"```{fence}\nprint(2 + 3)\n```"
    output = make_reward("sandbox:output")
    assert output([], _as_chat([printing]), answer=[printing], metadata=["{}"]) == [1.0]
