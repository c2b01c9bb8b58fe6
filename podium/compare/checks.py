"""Automatic checks on every answer of a comparison.

Three kinds, all stored with the answer so filters and pass rates never re-run them:
- validation rules (`json`, `json-schema:PATH`, `regex:...`, any spec of
  `podium.validate.rules`), run on the whole answer;
- `tests`: for a code prompt (its row's metadata JSON has `"tests"`, Python asserts),
  the answer's code (its first fenced block, else the whole answer) followed by the
  tests runs in the sandbox and passes when it exits 0;
- length in characters and words, and whether generation stopped at `max_tokens`
  (reported, not pass/fail: a short preset truncates everything).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from podium.validate.batch import check_texts
from podium.validate.extract import first_fenced
from podium.validate.rules import Rule, parse_rules

TESTS_CHECK = "tests"
SANDBOX_LIMITS = {"wall_s": 5.0, "cpu_s": 5.0, "memory_mb": 256, "processes": 8,
                  "output_bytes": 65_536}


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
        return json.dumps({"results": self.results, "chars": self.chars, "words": self.words,
                           "truncated": self.truncated}, sort_keys=True)


def load_checks(text: str | None) -> AnswerChecks:
    data = json.loads(text or "{}")
    return AnswerChecks(data.get("results", {}), data.get("chars", 0), data.get("words", 0),
                        data.get("truncated", False))


def compile_rules(specs: Sequence[str]) -> list[Rule]:
    return parse_rules(specs) if specs else []


def code_of(answer: str) -> str:
    block = first_fenced(answer)
    return block[0] if block else answer


def prompt_tests(metadata: str | None) -> str | None:
    """The Python tests a code prompt carries in its metadata JSON, if any."""
    try:
        value = json.loads(metadata or "{}")
    except json.JSONDecodeError:
        return None
    tests = value.get("tests") if isinstance(value, dict) else None
    return tests if isinstance(tests, str) and tests.strip() else None


def _run_tests(codes: list[str], tests: list[str]) -> list[tuple[bool, str]]:
    from generators.sandbox import Job, Limits, shared_sandbox

    limits = Limits(**SANDBOX_LIMITS)
    jobs = [Job(f"{code}\n\n{test}\n", limits=limits)
            for code, test in zip(codes, tests, strict=True)]
    results = shared_sandbox().run_many(jobs)
    out = []
    for res in results:
        ok = res.ok and res.exit_code == 0
        detail = "" if ok else (res.stderr.strip().splitlines() or [res.status])[-1][:300]
        out.append((ok, detail))
    return out


def check_answers(
    answers: Sequence[str], finish_reasons: Sequence[str | None], rules: Sequence[Rule],
    tests: Sequence[str | None], properties: Mapping[str, str] | None = None,
) -> list[AnswerChecks]:
    """Checks for each answer; `tests[i]` are answer i's prompt tests (None: not code)."""
    results: list[dict[str, dict[str, Any]]] = [
        {r.spec: {"ok": True, "message": ""} for r in rules} for _ in answers]
    if rules:
        for i, failure in check_texts(rules, list(answers)):
            spec = next((r.spec for r in rules if r.name == failure.rule), failure.rule)
            results[i][spec] = {"ok": False, "message": failure.message}
    coded = [i for i, t in enumerate(tests) if t]
    if coded:
        outcomes = _run_tests([code_of(answers[i]) for i in coded], [tests[i] or "" for i in coded])
        for i, (ok, detail) in zip(coded, outcomes, strict=True):
            results[i][TESTS_CHECK] = {"ok": ok, "message": detail}
    return [
        AnswerChecks(results[i], len(text), len(text.split()), finish_reasons[i] == "length")
        for i, text in enumerate(answers)
    ]
