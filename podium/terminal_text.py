"""Other people's text on a terminal: shown, never obeyed.

Rows, JSON keys, file names, job errors and logs carry text Podium did not write.
Written raw, an escape sequence (`\\x1b[2J`) clears the reader's screen, retitles the
window or prints a hyperlink, and a right-to-left override (U+202E) makes
`rtl-\\u202eexe.txt` read as `rtl-txt.exe`. `neutralise` writes every such character as
an escape (`\\x1b`, `\\u202e`); `SafeConsole`, the rich console every command and the
job reporter print through, applies it to all the text it writes, so a print path that
forgets to neutralise its data is still safe. Rich's own styling and cursor movement
(progress bars) are not text and pass as they are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.segment import Segment

# C0 controls but tab and newline, DEL, the C1 controls; then the bidi controls: the
# marks (LRM, RLM, ALM), embeddings and overrides (U+202A-202E), isolates (U+2066-2069).
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x20 else f"\\u{code:04x}"


def neutralise(text: str) -> str:
    """`text` with control and bidi characters written as escapes: C0 as `\\x1b`, DEL,
    C1 and bidi as `\\u009b`, `\\u202e`. JSON text stays valid JSON meaning the same
    (`json.dumps` already writes C0 as `\\u001b`; the rest are JSON's own escapes)."""
    return _UNSAFE.sub(_escaped, text)


def neutralise_json(text: str) -> str:
    """JSON text from `json.dumps(..., ensure_ascii=False)`, inert on a terminal and
    still the same JSON (see `neutralise`)."""
    return neutralise(text)


def safe_console(**options: Any) -> Console:
    """A rich console whose written text is neutralised (see `SafeConsole`)."""
    return _safe_console_class()(**options)


def _safe_console_class() -> type[Console]:
    global _SafeConsole
    if _SafeConsole is None:
        from rich.console import Console
        from rich.segment import Segment

        class SafeConsole(Console):
            """Every text segment neutralised as it is written; control segments (rich's
            own cursor movement) and styles are rich's, not data, and pass."""

            def _render_buffer(self, buffer: Iterable[Segment]) -> str:
                return super()._render_buffer(
                    segment if segment.control else Segment(neutralise(segment.text), segment.style)
                    for segment in buffer
                )

        _SafeConsole = SafeConsole
    return _SafeConsole


_SafeConsole: type[Console] | None = None
