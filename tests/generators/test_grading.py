"""One grader: Compare, validation and GRPO rewards give a code answer the same grade."""

from __future__ import annotations

import json

import pytest

from generators.grading import grade_answers
from podium.compare.checks import check_answers, code_task, compile_rules
from podium.validate.batch import check_texts
from podium.validate.code_answers import CodeTask, answer_code, same_output
from podium.validate.extract import extract
from podium.validate.rules import parse_rule
from trainers.rewards import make_reward

ADD = "def add(a, b):\n    return a + b"
TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0"
# (answer, passes): every fence spelling a model writes, no fence, two fences.
ANSWERS = [
    (f"```python3\n{ADD}\n```", True),
    (f"Here it is:\n```py\n{ADD}\n```", True),
    (f"```Python\n{ADD}\n```\n", True),
    (f"```\n{ADD}\n```", True),
    (ADD, True),
    (f"```python\n{ADD}\n```\nUse it like this:\n```python\nprint(add(1, 2))  # 3\n```", True),
    (f"```python3\n{ADD}\n```\nOutput:\n```\n>>> add(2, 3)\n5\n```", True),
    ("```python3\ndef add(a, b) return a + b\n```", False),  # does not parse
    ("I cannot write that function.", False),
]


def test_code_is_the_first_fenced_block_whatever_its_label() -> None:
    for answer, _ in ANSWERS[:7]:
        assert answer_code(answer).strip() == ADD
        assert answer_code(answer) == extract(answer, "fenced")[0]  # validation's view
    assert answer_code("no code here") == "no code here"


def test_same_output_ignores_trailing_whitespace_only() -> None:
    assert same_output("5  \n6\n\n", "5\n6")
    assert not same_output("5 6", "5\n6") and not same_output(" 5", "6")


@pytest.mark.sandbox
def test_compare_validation_and_grpo_grade_alike() -> None:
    answers = [a for a, _ in ANSWERS]
    expected = [passes for _, passes in ANSWERS]
    metadata = json.dumps({"tests": TESTS})

    compared = check_answers(
        answers,
        ["stop"] * len(answers),
        compile_rules(["python"]),
        [code_task(metadata)] * len(answers),
        "fenced",
    )
    compare_grades = [bool(c.passed) for c in compared]

    failures = {i for i, _ in check_texts([parse_rule("python")], answers, mode="fenced")}
    prose = len(answers) - 1  # prose parses as no Python: validation fails it on its own
    validation_grades = [i not in failures and i != prose for i in range(len(answers))]

    reward = make_reward("sandbox:tests")
    completions = [[{"role": "assistant", "content": a}] for a in answers]
    scores = reward([], completions, answer=[""] * len(answers), metadata=[metadata] * len(answers))
    grpo_grades = [s == 1.0 for s in scores]

    assert compare_grades == expected
    assert grpo_grades == expected
    assert validation_grades == expected


@pytest.mark.sandbox
def test_grades_say_why_an_answer_failed() -> None:
    grades = grade_answers(
        ["```python3\nprint(2 + 3)\n```", "print(6)", "raise ValueError('nope')", "```\n```"],
        [CodeTask(expected_output="5")] * 4,
    )
    assert [g.ok for g in grades] == [True, False, False, False]
    assert grades[1].detail == "printed '6'"
    assert grades[2].detail == "ValueError: nope"
    assert grades[3].detail == "the answer has no code"
