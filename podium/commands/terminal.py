"""Data on the terminal: shown as it is, never read as rich markup or obeyed as control.

Rows, names and error messages carry other people's text. Printed through rich's
markup, `[/INST]` or `[bold` in a value crashed the command with a MarkupError (and
`[link=...]` would have made a hyperlink); written raw, an escape sequence such as
`\\x1b[2J` would clear the reader's screen or retitle the window.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from podium.terminal_text import neutralise, neutralise_json, safe_console

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["neutralise_json", "plain_text", "printable", "safe_console"]


def printable(text: str) -> str:
    """`text` with control and bidi characters written as escapes (`\\x1b`, `\\u202e`):
    shown, not obeyed (`podium.terminal_text.neutralise`)."""
    return neutralise(text)


def plain_text(text: str, style: str = "") -> Text:
    """`text` as rich Text (no markup) that the terminal shows literally."""
    from rich.text import Text

    return Text(printable(text), style=style)
