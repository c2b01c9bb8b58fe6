"""The common result every rule returns, and text positions.

Positions follow editors: `line` and `column` count from 1, in characters (not bytes);
`offset` is the 0-based character index into the text that was validated. When a
rule checked a fenced block rather than the whole message, `block_offset` is where
that block starts in the message, so `message_offset` points into the whole message.
"""

from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class Result:
    ok: bool
    rule: str
    kind: str = ""  # short error class: "trailing-comma", "required", "not-well-formed"...
    message: str = ""
    line: int | None = None
    column: int | None = None
    offset: int | None = None
    block_offset: int = 0

    @property
    def message_offset(self) -> int | None:
        return None if self.offset is None else self.block_offset + self.offset

    def in_block(self, block_offset: int) -> Result:
        return replace(self, block_offset=block_offset)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["message_offset"] = self.message_offset
        return out


def passed(rule: str) -> Result:
    return Result(True, rule)


def failed(rule: str, kind: str, message: str, text: str | None, offset: int | None) -> Result:
    """A failure at character `offset` of `text` (line and column derived from it)."""
    if offset is None or text is None:
        return Result(False, rule, kind, message)
    offset = max(0, min(offset, len(text)))
    line, column = line_column(text, offset)
    return Result(False, rule, kind, message, line, column, offset)


def failed_at_line(
    rule: str, kind: str, message: str, text: str, line: int, column: int | None
) -> Result:
    """A failure given as (line, column) by a parser; column None = start of the line."""
    offset = offset_of(text, line, column or 1)
    line, col = line_column(text, offset)
    return Result(False, rule, kind, message, line, col if column else None, offset)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def line_column(text: str, offset: int) -> tuple[int, int]:
    starts = _line_starts(text)
    index = bisect.bisect_right(starts, offset) - 1
    return index + 1, offset - starts[index] + 1


def offset_of(text: str, line: int, column: int) -> int:
    """Character offset of 1-based (line, column), clamped to the text."""
    starts = _line_starts(text)
    line = max(1, min(line, len(starts)))
    start = starts[line - 1]
    end = starts[line] - 1 if line < len(starts) else len(text)
    return min(start + max(column, 1) - 1, end)


def kebab(name: str) -> str:
    """`additionalProperties` / `ERR_TAG_NAME_MISMATCH` -> `additional-properties` / ..."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and name[i - 1].islower():
            out.append("-")
        out.append("-" if ch == "_" else ch.lower())
    return "".join(out).strip("-")
