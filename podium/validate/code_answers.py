"""What counts as an answer's code and as "printed the same": one policy for every grader.

Validation (`fenced` mode), Compare's code checks, code-exec verification and GRPO's
sandbox rewards all read code answers through this module, so an answer gets the same
grade wherever it is graded. Running the code is `generators.grading` (above this layer:
validation never executes anything).

Extraction policy: the FIRST fenced block, whatever its info string (```python,
```python3, ```py, ```Python, a bare ```), else the whole answer. The first block is
the answer's code; later blocks are usually example calls or printed output.
"""

from __future__ import annotations

from dataclasses import dataclass

from podium.validate.extract import extract

TESTS_CHECK = "tests"
OUTPUT_CHECK = "output"


def answer_code(text: str) -> str:
    """The code an answer gives (see the extraction policy above)."""
    return extract(text, "fenced")[0]


def same_output(got: str, expected: str) -> bool:
    """Equal up to trailing whitespace on each line and at the end."""

    def norm(text: str) -> list[str]:
        return [line.rstrip() for line in text.strip().splitlines()]

    return norm(got) == norm(expected)


@dataclass(frozen=True)
class CodeTask:
    """What an answer's code must do: pass `tests` (appended, must exit 0) and, when
    `expected_output` is set, print that."""

    tests: str = ""
    expected_output: str | None = None

    @property
    def check_name(self) -> str:
        return TESTS_CHECK if self.tests else OUTPUT_CHECK

    def program(self, code: str) -> str:
        return f"{code}\n\n{self.tests}\n" if self.tests else code
