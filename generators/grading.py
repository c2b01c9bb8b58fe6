"""Grading code answers in the sandbox, for Compare, GRPO rewards and code-exec runs.

    grade_answers(["```python3\\nprint(2 + 3)\\n```"], [CodeTask(expected_output="5")])

An answer's code is taken by `podium.validate.code_answers.answer_code` (the same
extraction validation uses), run through `generators.sandbox` under `GRADE_LIMITS`, and
passes when it exits 0 and prints what the task expects (`same_output`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generators.sandbox import Job, Limits, Result, shared_sandbox
from podium.validate.code_answers import CodeTask, answer_code, same_output

# Tight enough that a completion that loops, forks or floods output fails fast and
# never stalls a training step or a comparison; code-exec builds default to the same.
GRADE_LIMITS = Limits(wall_s=5.0, cpu_s=5.0, memory_mb=256, processes=8, output_bytes=65_536)


@dataclass(frozen=True)
class Grade:
    ok: bool
    detail: str = ""  # why not: the traceback's last line, the sandbox status, the output


def error_line(result: Result) -> str:
    """The last line of the traceback (`ValueError: ...`), or what the sandbox said."""
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    if result.status == "ok":
        return ""
    if result.status == "error" and lines:
        return lines[-1][:500]
    return (result.detail or result.status)[:500]


def run_codes(
    codes: Sequence[str], backend: str | None = None, limits: Limits = GRADE_LIMITS
) -> list[Result]:
    """Each program run once on the shared warm pool, all at once."""
    return shared_sandbox(backend).run_many([Job(code, limits=limits) for code in codes])


def grade_result(result: Result, task: CodeTask) -> Grade:
    if not (result.ok and result.exit_code == 0):
        return Grade(False, error_line(result) or result.status)
    if task.expected_output is not None and not same_output(result.stdout, task.expected_output):
        return Grade(False, f"printed {result.stdout.strip()[:120]!r}")
    return Grade(True)


def grade_answers(
    answers: Sequence[str],
    tasks: Sequence[CodeTask],
    backend: str | None = None,
    limits: Limits = GRADE_LIMITS,
) -> list[Grade]:
    """One grade per (answer, task); an answer without code fails without running."""
    codes = [answer_code(answer) for answer, _ in zip(answers, tasks, strict=True)]
    runnable = [i for i, code in enumerate(codes) if code.strip()]
    grades = [Grade(False, "the answer has no code")] * len(codes)
    results = run_codes([tasks[i].program(codes[i]) for i in runnable], backend, limits)
    for i, result in zip(runnable, results, strict=True):
        grades[i] = grade_result(result, tasks[i])
    return grades
