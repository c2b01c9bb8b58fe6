"""Which part of a message a rule checks: the whole text or its first fenced block.

`auto` (the default) takes the first fenced block when the message has one and the whole
text otherwise: an answer that says "Here is the record:" before a ```json block is
checked on the block, a bare JSON answer on itself. `fenced` is the same rule under its
older name; `whole` checks every character.
"""

from __future__ import annotations

import re
from typing import Literal

Extract = Literal["auto", "whole", "fenced"]
EXTRACT_MODES: tuple[str, ...] = ("auto", "whole", "fenced")
DEFAULT_EXTRACT: Extract = "auto"

# An opening fence with an optional info string (```json), the block, then the closing
# fence; a block cut off before its closing fence (a truncated answer) runs to the end.
_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:\n?```|\Z)", re.DOTALL)


def first_fenced(text: str) -> tuple[str, int] | None:
    """(block, offset of the block in `text`) of the first fenced block, if any."""
    found = _FENCE.search(text)
    if found is None:
        return None
    return found.group(1), found.start(1)


def extract(text: str, mode: Extract) -> tuple[str, int]:
    """The text to validate and where it starts in the message.

    `auto` (and `fenced`) take the first fenced block, or the whole message when it has
    none, so one run covers datasets that mix fenced and bare answers.
    """
    if mode != "whole" and "```" in text:
        found = first_fenced(text)
        if found is not None:
            return found
    return text, 0
