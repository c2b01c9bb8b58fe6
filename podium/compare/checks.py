"""Automatic checks on every answer of a comparison.

Three kinds, all stored with the answer so filters and pass rates never re-run them:
- validation rules (`json`, `json-schema:PATH`, `regex:...`, any spec of
  `podium.validate.rules`), run on the whole answer or its first fenced block;
- `tests` / `output`: for a code prompt (its row's metadata JSON has `"tests"`, Python
  asserts, or `"expected_output"`, as the trainers' sandbox rewards read them), the
  answer's code (its first fenced block, else the whole answer), followed by the tests,
  runs in the sandbox; it passes when it exits 0 (and prints the expected output);
- length in characters and words, and whether generation stopped at `max_tokens`
  (reported, not pass/fail: a short preset truncates everything).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from podium.validate.batch import check_texts
from podium.validate.extract import Extract, first_fenced
from podium.validate.rules import Rule, parse_rules

TESTS_CHECK = "tests"
OUTPUT_CHECK = "output"
SANDBOX_LIMITS = {
    "wall_s": 5.0,
    "cpu_s": 5.0,
    "memory_mb": 256,
    "processes": 8,
    "output_bytes": 65_536,
}


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


def code_of(answer: str) -> str:
    block = first_fenced(answer)
    return block[0] if block else answer


@dataclass(frozen=True)
class CodeTask:
    """What a code prompt's answer must do in the sandbox."""

    tests: str = ""  # appended to the answer's code; must exit 0
    expected_output: str | None = None  # what the code must print

    @property
    def check_name(self) -> str:
        return TESTS_CHECK if self.tests else OUTPUT_CHECK


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


def _same_output(got: str, expected: str) -> bool:
    """Equal up to trailing whitespace on each line and at the end."""

    def norm(text: str) -> list[str]:
        return [line.rstrip() for line in text.strip().splitlines()]

    return norm(got) == norm(expected)


def _run_code(codes: list[str], tasks: list[CodeTask]) -> list[tuple[bool, str]]:
    from generators.sandbox import Job, Limits, shared_sandbox

    limits = Limits(**SANDBOX_LIMITS)
    jobs = [
        Job(f"{code}\n\n{task.tests}\n", limits=limits)
        for code, task in zip(codes, tasks, strict=True)
    ]
    out = []
    for res, task in zip(shared_sandbox().run_many(jobs), tasks, strict=True):
        ok = res.ok and res.exit_code == 0
        detail = "" if ok else (res.stderr.strip().splitlines() or [res.status])[-1][:300]
        if (
            ok
            and task.expected_output is not None
            and not _same_output(res.stdout, task.expected_output)
        ):
            ok, detail = False, f"printed {res.stdout.strip()[:120]!r}"
        out.append((ok, detail))
    return out


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
        outcomes = _run_code([code_of(answers[i]) for i, _ in coded], [t for _, t in coded])
        for (i, task), (ok, detail) in zip(coded, outcomes, strict=True):
            results[i][task.check_name] = {"ok": ok, "message": detail}
    return [
        AnswerChecks(results[i], len(text), len(text.split()), finish_reasons[i] == "length")
        for i, text in enumerate(answers)
    ]
