"""Word-level differences between answers, as HTML spans (difflib).

Each answer is shown against a reference answer: words it has that the reference
lacks are highlighted. Whitespace is kept as it was, so code and lists keep their
shape; everything is escaped before it becomes HTML.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence

_TOKEN = re.compile(r"\s+|[^\s]+")
CHANGED_STYLE = "background-color:rgba(255,196,0,0.35);border-radius:2px"


def words(text: str) -> list[str]:
    """Words and the whitespace between them (joining them gives `text` back)."""
    return _TOKEN.findall(text)


def changed_words(text: str, reference: str) -> list[tuple[str, bool]]:
    """(piece, changed) pieces of `text`; changed = not in `reference` at that place."""
    ours, theirs = words(text), words(reference)
    matcher = difflib.SequenceMatcher(a=theirs, b=ours, autojunk=False)
    pieces: list[tuple[str, bool]] = []
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        for piece in ours[j1:j2]:
            pieces.append((piece, tag != "equal" and not piece.isspace()))
    return pieces


def diff_html(text: str, reference: str | None) -> str:
    """`text` as HTML with words that differ from `reference` highlighted."""
    if reference is None:
        return _block(html.escape(text))
    out = []
    for piece, changed in changed_words(text, reference):
        escaped = html.escape(piece)
        out.append(
            f'<span class="podium-diff" style="{CHANGED_STYLE}">{escaped}</span>'
            if changed
            else escaped
        )
    return _block("".join(out))


def side_by_side_html(texts: Sequence[str]) -> list[str]:
    """HTML for each answer: the first against the second, the others against the first."""
    if len(texts) < 2:
        return [diff_html(t, None) for t in texts]
    return [diff_html(t, texts[1] if i == 0 else texts[0]) for i, t in enumerate(texts)]


def _block(inner: str) -> str:
    return (
        '<div class="podium-answer" style="white-space:pre-wrap;font-family:monospace;'
        f'font-size:0.9em">{inner}</div>'
    )
