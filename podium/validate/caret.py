"""Showing where a sample breaks: the lines around the error and a caret under it.

     3 |   "age": "42",
       |          ^ type: '42' is not of type 'integer'

Used by the CLI and the Validate page; positions are character offsets into the whole
message (`Result.message_offset`).
"""

from __future__ import annotations

from podium.validate.result import line_column

MAX_LINE = 160


def _window(line: str, column: int) -> tuple[str, int]:
    """Cut a long line around `column` (1-based); returns the line and the new column."""
    if len(line) <= MAX_LINE:
        return line, column
    start = max(0, min(column - MAX_LINE // 2, len(line) - MAX_LINE))
    cut = line[start : start + MAX_LINE]
    prefix = "…" if start else ""
    suffix = "…" if start + MAX_LINE < len(line) else ""
    return prefix + cut + suffix, column - start + len(prefix)


def render_caret(text: str, offset: int | None, note: str = "", context: int = 2) -> str:
    """`context` lines either side of the error line, numbered, with a caret under it.

    With no offset (the error has no position) the first lines are shown unmarked.
    """
    lines = text.split("\n")
    if offset is None:
        shown = lines[: 2 * context + 1]
        width = len(str(len(shown)))
        body = [f"{n:>{width}} | {line}" for n, line in enumerate(shown, 1)]
        if len(lines) > len(shown):
            body.append(f"{'':>{width}} | …")
        return "\n".join(body + ([f"{'':>{width}} = {note}"] if note else []))
    offset = max(0, min(offset, len(text)))
    line_no, column = line_column(text, offset)
    first, last = max(1, line_no - context), min(len(lines), line_no + context)
    width = len(str(last))
    out = []
    for n in range(first, last + 1):
        line = lines[n - 1]
        if n == line_no:
            line, col = _window(line, column)
            out.append(f"{n:>{width}} | {line}")
            # Tabs are kept so the caret lines up however the viewer renders them.
            pad = "".join("\t" if ch == "\t" else " " for ch in line[: col - 1])
            out.append(f"{'':>{width}} | {pad}^" + (f" {note}" if note else ""))
        else:
            out.append(f"{n:>{width}} | {_window(line, column)[0]}")
    return "\n".join(out)
