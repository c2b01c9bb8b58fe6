"""Regular expressions from users, run in time linear in the text.

A `regex:PATTERN` rule or a JSON Schema `pattern` comes from whoever wrote the rule or
the schema. On a backtracking engine (`re`, PyPI `regex`) `(.+)+x` on a 40-character
row ran over 120 s and `^(a|aa)+$` over 60 s, holding the validation lane. Patterns
are therefore compiled with RE2 (PyPI `google-re2`), whose matching time is linear in
the text whatever the pattern, and which knows Unicode classes such as `\\p{L}`.

RE2 has no backreferences or lookaround. A pattern that needs them runs on PyPI
`regex` under a per-call time limit instead: past it, `RegexTimeout` is raised and the
caller fails the row naming the rule.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import re2
import regex

PatternError = regex.error
# Per call, only for the patterns RE2 cannot run: a backtracking blow-up costs this
# much per row, not minutes.
FALLBACK_TIMEOUT_S = 0.25


class RegexTimeout(Exception):
    """A pattern outside RE2's language took longer than its time limit on a text."""

    def __init__(self, pattern: str) -> None:
        super().__init__(
            f"pattern /{pattern}/ took more than {FALLBACK_TIMEOUT_S:g} s on this text "
            "(it uses backreferences or lookaround, which run on a backtracking engine); "
            "rewrite it without them to get linear-time matching"
        )
        self.pattern = pattern


def _re2_options(dotall: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print its refusal of a pattern to stderr
    options.dot_nl = dotall
    return options


@dataclass(frozen=True)
class LinearPattern:
    """A compiled user pattern: RE2 when it can run it, else `regex` with a time limit."""

    pattern: str
    compiled: Any  # re2._Regexp or regex.Pattern
    linear: bool  # True: RE2

    def search(self, text: str) -> bool:
        return self._run("search", text)

    def fullmatch(self, text: str) -> bool:
        return self._run("fullmatch", text)

    def _run(self, how: str, text: str) -> bool:
        if self.linear:
            return getattr(self.compiled, how)(text) is not None
        try:
            return getattr(self.compiled, how)(text, timeout=FALLBACK_TIMEOUT_S) is not None
        except TimeoutError:
            raise RegexTimeout(self.pattern) from None


@functools.lru_cache(maxsize=1024)
def compile_linear(pattern: str, *, dotall: bool = False) -> LinearPattern:
    """`pattern` compiled for user text; `PatternError` when no engine accepts it."""
    try:
        return LinearPattern(pattern, re2.compile(pattern, _re2_options(dotall)), True)
    except re2.error:
        pass
    flags = regex.DOTALL if dotall else 0
    return LinearPattern(pattern, regex.compile(pattern, flags), False)
