"""Data on the terminal: shown as it is, never read as rich markup or obeyed as control.

Rows, names and error messages carry other people's text. Printed through rich's
markup, `[/INST]` or `[bold` in a value crashed the command with a MarkupError (and
`[link=...]` would have made a hyperlink); written raw, an escape sequence such as
`\\x1b[2J` would clear the reader's screen or retitle the window.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

# C0 controls but tab and newline, then DEL and the C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` with control characters written as escapes (`\\x1b`): shown, not obeyed."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode(), text)


def plain_text(text: str, style: str = "") -> Text:
    """`text` as rich Text (no markup) that the terminal shows literally."""
    from rich.text import Text

    return Text(printable(text), style=style)
