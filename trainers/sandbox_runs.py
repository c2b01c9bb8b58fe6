"""Scoring completions by running them in Podium's sandbox, through `generators.grading`.

Every completion of a batch runs at once on the shared warm pool with the grading
limits: a completion that loops, forks or floods output scores 0 and never stalls
training. The expected output of a row without `expected_output` in its metadata is
what its reference answer's code prints, run once and remembered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generators.grading import GRADE_LIMITS, grade_answers, run_codes
from generators.sandbox import Limits
from podium.validate.code_answers import CodeTask, answer_code


@dataclass
class SandboxScorer:
    backend: str | None = None  # None = the configured `sandbox_backend`
    limits: Limits = GRADE_LIMITS
    _reference_output: dict[str, str | None] = field(default_factory=dict)

    def _scores(self, answers: Sequence[str], tasks: Sequence[CodeTask | None]) -> list[float]:
        """1 where the answer passes its task; rows without a task score 0 unrun."""
        graded = [i for i, task in enumerate(tasks) if task is not None]
        grades = grade_answers(
            [answers[i] for i in graded],
            [task for task in tasks if task is not None],
            self.backend,
            self.limits,
        )
        scores = [0.0] * len(answers)
        for i, grade in zip(graded, grades, strict=True):
            scores[i] = 1.0 if grade.ok else 0.0
        return scores

    def tests_pass(self, answers: Sequence[str], tests: Sequence[str]) -> list[float]:
        """1 where the answer's code followed by its row's tests exits cleanly (0 without
        tests)."""
        return self._scores(answers, [CodeTask(tests=t) if t.strip() else None for t in tests])

    def output_matches(
        self, answers: Sequence[str], expected: Sequence[Any], references: Sequence[str]
    ) -> list[float]:
        """1 where the answer's code prints the expected output."""
        targets = self._expected_outputs(expected, references)
        tasks = [None if t is None else CodeTask(expected_output=t) for t in targets]
        return self._scores(answers, tasks)

    def _expected_outputs(
        self, expected: Sequence[Any], references: Sequence[str]
    ) -> list[str | None]:
        codes = [answer_code(r) for r in references]
        missing = sorted(
            {c for e, c in zip(expected, codes, strict=True) if e is None and c.strip()}
            - self._reference_output.keys()
        )
        for code, result in zip(
            missing, run_codes(missing, self.backend, self.limits), strict=True
        ):
            self._reference_output[code] = result.stdout if result.ok else None
        return [
            str(e) if e is not None else self._reference_output.get(c)
            for e, c in zip(expected, codes, strict=True)
        ]
