"""Automatic checks on every answer of a comparison.

Three kinds, all stored with the answer so filters and pass rates never re-run them:
- validation rules (`json`, `json-schema:PATH`, `regex:...`, any spec of
  `podium.validate.rules`), run on the whole answer or its first fenced block;
- `tests` / `output`: for a code prompt (its row's metadata JSON has `"tests"`, Python
  asserts, or `"expected_output"`, as the trainers' sandbox rewards read them), the
  answer's code followed by the tests is graded in the sandbox by `generators.grading`
  (the same extraction, limits and output comparison as validation and GRPO rewards);
- length in characters and words, and whether generation stopped at `max_tokens`
  (reported, not pass/fail: a short preset truncates everything).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from podium.validate.batch import check_texts
from podium.validate.code_answers import CodeTask
from podium.validate.extract import Extract
from podium.validate.rules import Rule, parse_rules


@dataclass(frozen=True)
class AnswerChecks:
    results: dict[str, dict[str, Any]]  # check name -> {"ok": bool, "message": str}
    chars: int
    words: int
    truncated: bool

    @property
    def passed(self) -> bool | None:
        """All pass/fail checks passed; None when no check applied."""
        if not self.results:
            return None
        return all(r["ok"] for r in self.results.values())

    def to_json(self) -> str:
        return json.dumps(
            {
                "results": self.results,
                "chars": self.chars,
                "words": self.words,
                "truncated": self.truncated,
            },
            sort_keys=True,
        )


def load_checks(text: str | None) -> AnswerChecks:
    data = json.loads(text or "{}")
    return AnswerChecks(
        data.get("results", {}),
        data.get("chars", 0),
        data.get("words", 0),
        data.get("truncated", False),
    )


def compile_rules(specs: Sequence[str]) -> list[Rule]:
    return parse_rules(specs) if specs else []


def code_task(metadata: str | None) -> CodeTask | None:
    """The sandbox task a code prompt carries in its metadata JSON, if any."""
    try:
        value = json.loads(metadata or "{}")
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    tests, expected = value.get("tests"), value.get("expected_output")
    if isinstance(tests, str) and tests.strip():
        return CodeTask(tests=tests)
    if expected is not None:
        return CodeTask(expected_output=str(expected))
    return None


def check_answers(
    answers: Sequence[str],
    finish_reasons: Sequence[str | None],
    rules: Sequence[Rule],
    tasks: Sequence[CodeTask | None],
    extract: Extract = "whole",
) -> list[AnswerChecks]:
    """Checks for each answer; `tasks[i]` is answer i's code task (None: not code)."""
    results: list[dict[str, dict[str, Any]]] = [
        {r.spec: {"ok": True, "message": ""} for r in rules} for _ in answers
    ]
    if rules:
        for i, failure in check_texts(rules, list(answers), mode=extract):
            spec = next((r.spec for r in rules if r.name == failure.rule), failure.rule)
            results[i][spec] = {"ok": False, "message": failure.message}
    coded = [(i, t) for i, t in enumerate(tasks) if t is not None]
    if coded:
        from generators.grading import grade_answers

        grades = grade_answers([answers[i] for i, _ in coded], [t for _, t in coded])
        for (i, task), grade in zip(coded, grades, strict=True):
            results[i][task.check_name] = {"ok": grade.ok, "message": grade.detail}
    return [
        AnswerChecks(results[i], len(text), len(text.split()), finish_reasons[i] == "length")
        for i, text in enumerate(answers)
    ]
