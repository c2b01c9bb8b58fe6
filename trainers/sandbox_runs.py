"""Scoring completions by running them in Podium's sandbox (`generators.sandbox`).

Every completion of a batch runs at once on the shared warm pool (`run_many`), with
tight limits: a completion that loops, forks or floods output scores 0 and never
stalls training. The expected output of a row without `expected_output` in its
metadata is what its reference answer's code prints, run once and remembered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from generators.sandbox import Job, Limits, Result, shared_sandbox

REWARD_LIMITS = Limits(wall_s=5.0, cpu_s=5.0, memory_mb=256, processes=8, output_bytes=65_536)


def _same_output(got: str, expected: str) -> bool:
    """Equal up to trailing whitespace on each line and at the end."""

    def norm(text: str) -> list[str]:
        return [line.rstrip() for line in text.strip().splitlines()]

    return norm(got) == norm(expected)


@dataclass
class SandboxScorer:
    backend: str | None = None  # None = the configured `sandbox_backend`
    limits: Limits = REWARD_LIMITS
    _reference_output: dict[str, str | None] = field(default_factory=dict)

    def _run(self, codes: Sequence[str]) -> list[Result]:
        box = shared_sandbox(self.backend)
        return box.run_many([Job(code, limits=self.limits) for code in codes])

    def tests_pass(self, codes: Sequence[str], tests: Sequence[str]) -> list[float]:
        """1 where the code followed by its row's tests exits cleanly (0 without tests)."""
        runnable = [i for i, t in enumerate(tests) if t.strip() and codes[i].strip()]
        scores = [0.0] * len(codes)
        results = self._run([f"{codes[i]}\n\n{tests[i]}\n" for i in runnable])
        for i, result in zip(runnable, results, strict=True):
            scores[i] = 1.0 if result.ok and result.exit_code == 0 else 0.0
        return scores

    def output_matches(
        self, codes: Sequence[str], expected: Sequence[Any], references: Sequence[str]
    ) -> list[float]:
        """1 where the code prints the expected output."""
        targets = self._expected_outputs(expected, references)
        runnable = [i for i, t in enumerate(targets) if t is not None and codes[i].strip()]
        scores = [0.0] * len(codes)
        results = self._run([codes[i] for i in runnable])
        for i, result in zip(runnable, results, strict=True):
            target = targets[i]
            if result.ok and target is not None and _same_output(result.stdout, target):
                scores[i] = 1.0
        return scores

    def _expected_outputs(
        self, expected: Sequence[Any], references: Sequence[str]
    ) -> list[str | None]:
        from trainers.rewards import extract_code

        missing = sorted(
            {extract_code(r) for e, r in zip(expected, references, strict=True) if e is None}
            - self._reference_output.keys()
        )
        missing = [code for code in missing if code]
        for code, result in zip(missing, self._run(missing), strict=True):
            self._reference_output[code] = result.stdout if result.ok else None
        return [
            str(e) if e is not None else self._reference_output.get(extract_code(r))
            for e, r in zip(expected, references, strict=True)
        ]
