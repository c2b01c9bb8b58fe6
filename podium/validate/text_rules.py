"""The `python` (source parses) and `regex` (whole text matches) rules."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from podium.errors import InvalidInput
from podium.validate.json_rules import TextRule
from podium.validate.linear_regex import (
    LinearPattern,
    PatternError,
    RegexTimeout,
    compile_linear,
)
from podium.validate.result import Result, failed, failed_at_line, passed


def _syntax_kind(exc: SyntaxError) -> str:
    msg = exc.msg.lower()
    if isinstance(exc, IndentationError):
        return "indentation"
    if "never closed" in msg or "unexpected eof" in msg or "was not closed" in msg:
        return "unexpected-eof"
    if "unterminated" in msg:
        return "unterminated-string"
    if "unmatched" in msg or "does not match" in msg:
        return "unmatched-bracket"
    if "null bytes" in msg:
        return "null-byte"
    return "syntax"


@dataclass(eq=False)
class PythonRule(TextRule):
    """Python source that `ast.parse` accepts (parsing only; nothing is executed)."""

    name: str = "python"
    spec: str = "python"

    def check_text(self, text: str, metadata: str | None) -> Result:
        try:
            ast.parse(text)
        except SyntaxError as exc:
            if exc.lineno is None:
                return failed(self.name, _syntax_kind(exc), exc.msg, text, text.find("\0"))
            return failed_at_line(
                self.name, _syntax_kind(exc), exc.msg, text, exc.lineno, exc.offset or 1
            )
        except (ValueError, RecursionError, MemoryError) as exc:
            return failed(self.name, "too-complex", f"{type(exc).__name__}: {exc}", text, None)
        return passed(self.name)


def compile_pattern(pattern: str) -> LinearPattern:
    """The rule's pattern on a linear-time engine (`podium.validate.linear_regex`)."""
    try:
        return compile_linear(pattern, dotall=True)
    except PatternError as exc:
        raise InvalidInput(
            f"--rule regex:{pattern} is not a valid regular expression: {exc}."
        ) from None


@dataclass(eq=False)
class RegexRule(TextRule):
    """The whole text matches the pattern (a full match, `.` matching newlines), in time
    linear in the text (RE2), or under a per-row time limit for the few patterns RE2
    cannot run."""

    pattern: str
    spec: str = "regex"
    name: str = "regex"

    def __post_init__(self) -> None:
        self._compiled = compile_pattern(self.pattern)

    def check_text(self, text: str, metadata: str | None) -> Result:
        try:
            if self._compiled.fullmatch(text):
                return passed(self.name)
        except RegexTimeout as exc:
            return failed(self.name, "regex-timeout", str(exc), text, None)
        # Where a prefix stops matching is not knowable with `re`; the whole text is flagged.
        return failed(self.name, "no-match", f"text does not match /{self.pattern}/", text, None)

    def __reduce__(self) -> Any:
        return (RegexRule, (self.pattern, self.spec))
