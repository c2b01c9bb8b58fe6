"""Turning a chat turn's text into Markdown that shows it faithfully.

Post-training data is full of JSON answers, code and half-broken versions of both, so a
turn is not handed to the Markdown renderer as is:

- a turn whose whole content is a JSON object or array is pretty-printed in a
  ```json block;
- a turn that looks like JSON but does not parse is shown verbatim in a plain code
  block, with a note, because the broken bytes are exactly what a reviewer must see
  (Markdown would eat `*`, `_` and leading `#` otherwise);
- fenced code keeps its language tag (so it is highlighted); a ```json fence whose body
  parses is re-indented;
- everything else is Markdown, except that images are never drawn: data decides their
  URLs, so `![alt](url)` shows as text and a link (`safe_markdown.neutralize_images`).

`review_turn` is the reviewer's reading of a turn: search hits and validation error
locations marked (the text is HTML-escaped first; markup goes only around escaped
pieces), code blocks numbered, long turns folded until "Show all".

Nothing here imports Streamlit: pages and tests call the same functions.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from podium.app.safe_markdown import code_span, neutralize_images

_FENCE = re.compile(
    r"^(?P<indent>[ ]{0,3})(?P<fence>`{3,}|~{3,})(?P<lang>[^\n`]*)\n(?P<body>.*?)\n"
    r"(?P=indent)(?P=fence)[ \t]*$",
    re.DOTALL | re.MULTILINE,
)


@dataclass(frozen=True)
class RenderedTurn:
    markdown: str
    note: str | None = None  # shown beside the turn, e.g. why JSON did not parse


def fence(text: str, language: str = "") -> str:
    """A fenced code block holding `text` verbatim, whatever backticks it contains."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def parse_json_document(text: str) -> tuple[Any, str | None]:
    """(value, None) when `text` is one JSON object or array, else (None, error)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, str(exc)
    if not isinstance(value, (dict, list)):
        return None, "not an object or array"
    return value, None


def json_error_note(content: str) -> str:
    """Why `content` is not JSON, in the words and at the position (line and column in
    the whole message, not the stripped text) that `podium validate` reports."""
    from podium.validate.json_rules import JsonRule

    result = JsonRule().check(content)
    where = f" (line {result.line}, column {result.column})" if result.line else ""
    return f"Looks like JSON but does not parse: {result.kind}: {result.message}{where}"


def looks_like_json(text: str) -> bool:
    stripped = text.strip()
    return (
        (stripped.startswith("{") and stripped.endswith("}"))
        or (stripped.startswith("[") and stripped.endswith("]"))
        or stripped.startswith(('{"', "[{", '["'))
    )


def _reindent_json_fences(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        lang = match["lang"].strip().lower()
        if lang not in ("json", "jsonc", "json5"):
            return match.group(0)
        value, error = parse_json_document(match["body"])
        if error is not None:
            return match.group(0)
        return match["indent"] + fence(pretty_json(value), match["lang"].strip())

    return _FENCE.sub(replace, text)


def render_turn(content: str | None) -> RenderedTurn:
    """Markdown for one turn's content (see the module docstring for the rules)."""
    if content is None or not content.strip():
        return RenderedTurn("_(empty)_")
    stripped = content.strip()
    value, error = parse_json_document(stripped)
    if error is None:
        return RenderedTurn(fence(pretty_json(value), "json"))
    if looks_like_json(stripped):
        return RenderedTurn(fence(content, "text"), json_error_note(content))
    return RenderedTurn(neutralize_images(_reindent_json_fences(content)))


def render_value(value: Any) -> str:
    """Markdown for one field of a non-chat row (a plain value, nested data or JSON text)."""
    if value is None:
        return "_(null)_"
    if isinstance(value, str):
        return render_turn(value).markdown
    if isinstance(value, (dict, list, tuple)):
        return fence(pretty_json(value), "json")
    return code_span(value)


# ---- reading like a reviewer: highlights, numbered code, folding ----

FOLD_CHARS = 2_000  # longer turns show this much until "Show all"
_MARK_STYLE = "background:#ffe58a;color:inherit;padding:0 1px;border-radius:2px"
_ERROR_STYLE = "background:#ffb3b3;color:inherit;outline:1px solid #d33;border-radius:2px"
_NUMBER_STYLE = "user-select:none;color:#999;display:inline-block;text-align:right;margin-right:1em"
_CODE_LINE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")

Span = tuple[int, int, str]  # start, end (offsets in the text), "hit" or "error"


@dataclass(frozen=True)
class Segment:
    """One piece of a turn as the page draws it: Markdown, a code block (drawn by
    st.code with line numbers) or HTML that was escaped before any markup was added."""

    kind: str  # "markdown", "code" or "html"
    text: str
    language: str = ""
    numbered: bool = True  # code: line numbers (a pretty-printed JSON answer has none)


@dataclass(frozen=True)
class ReviewTurn:
    segments: list[Segment]
    note: str | None = None
    folded: bool = False  # more text than shown; the page offers "Show all"
    hits: int = 0  # search hits and error marks in the whole turn


def search_spans(text: str, terms: Sequence[str]) -> list[Span]:
    """Where any term occurs, case-insensitively, as Browse's search matches."""
    spans: list[Span] = []
    for term in terms:
        if term:
            spans += [(m.start(), m.end(), "hit") for m in re.finditer(re.escape(term), text, re.I)]
    return spans


def error_span(text: str, line: int | None, column: int | None) -> Span | None:
    """The text a validator's 1-based line/column points at: from there to the end of
    the word (at least one character; the last one when it points past the end)."""
    if not line or not text:
        return None
    lines = text.split("\n")
    if line > len(lines):
        return (len(text) - 1, len(text), "error")
    start = sum(len(x) + 1 for x in lines[: line - 1]) + max(0, (column or 1) - 1)
    start = min(start, len(text) - 1)
    end = start + 1
    while end < len(text) and end - start < 40 and not text[end].isspace():
        end += 1
    return (start, end, "error")


def _merge(spans: Iterable[Span]) -> list[Span]:
    """Sorted, non-overlapping spans; where an error and a hit overlap the error wins."""
    out: list[Span] = []
    for start, end, kind in sorted(spans):
        if out and start < out[-1][1]:
            last = out[-1]
            out[-1] = (last[0], max(last[1], end), "error" if "error" in (kind, last[2]) else "hit")
        else:
            out.append((start, end, kind))
    return out


def marked_html(text: str, spans: Iterable[Span]) -> str:
    """`text` HTML-escaped, with <mark> only around escaped pieces: the data never
    becomes markup, whatever it contains."""
    out, at = [], 0
    for start, end, kind in _merge(spans):
        start, end = max(start, at), min(end, len(text))
        if start >= end:
            continue
        style = _ERROR_STYLE if kind == "error" else _MARK_STYLE
        out += [
            html.escape(text[at:start]),
            f'<mark style="{style}">',
            html.escape(text[start:end]),
            "</mark>",
        ]
        at = end
    out.append(html.escape(text[at:]))
    return "".join(out)


def numbered_code_html(code: str, spans: Iterable[Span] = ()) -> str:
    """A code block as escaped HTML with line numbers and marks (st.code cannot mark)."""
    lines = marked_html(code, spans).split("\n")
    width = len(str(len(lines)))
    body = "\n".join(
        f'<span style="{_NUMBER_STYLE};width:{width}ch">{n}</span>{line}'
        for n, line in enumerate(lines, 1)
    )
    return f'<pre style="white-space:pre-wrap;overflow-x:auto"><code>{body}</code></pre>'


def _within(spans: Sequence[Span], start: int, end: int) -> list[Span]:
    return [(a - start, b - start, k) for a, b, k in spans if a < end and b > start]


def _prose(text: str, spans: Sequence[Span]) -> Segment:
    if not spans:
        return Segment("markdown", neutralize_images(_reindent_json_fences(text)))
    return Segment("html", f'<div style="white-space:pre-wrap">{marked_html(text, spans)}</div>')


def _code(body: str, language: str, spans: Sequence[Span], numbered: bool = True) -> Segment:
    if spans:
        return Segment("html", numbered_code_html(body, spans))
    return Segment("code", body, language, numbered)


def fold(text: str, limit: int = FOLD_CHARS) -> tuple[str, bool]:
    """The first whole lines of `text` up to `limit` characters (an open code fence is
    closed again), and whether anything was left out."""
    if len(text) <= limit:
        return text, False
    kept: list[str] = []
    size = 0
    for line in text.split("\n"):
        if kept and size + len(line) > limit:
            break
        kept.append(line[:limit] if not kept else line)
        size += len(line) + 1
    fences = [m.group(1) for line in kept if (m := _CODE_LINE.match(line))]
    if len(fences) % 2:
        kept.append(fences[-1])
    return "\n".join(kept), True


def review_turn(
    content: str | None,
    *,
    search: Sequence[str] = (),
    errors: Sequence[tuple[int | None, int | None]] = (),
    show_all: bool = True,
    limit: int = FOLD_CHARS,
) -> ReviewTurn:
    """A turn as segments, with search hits and validation error locations (1-based
    line/column in the whole message) marked, code numbered, and long text folded."""
    if content is None or not content.strip():
        return ReviewTurn([Segment("markdown", "_(empty)_")])
    spans = search_spans(content, search)
    spans += [s for line, column in errors if (s := error_span(content, line, column))]
    hits = len(spans)
    stripped = content.strip()
    value, error = parse_json_document(stripped)
    if error is None:  # shown pretty-printed: find the search terms again in that text
        text = pretty_json(value)
        text, folded = (text, False) if show_all else fold(text, limit)
        return ReviewTurn(
            [_code(text, "json", search_spans(text, search), numbered=False)], None, folded, hits
        )
    text, folded = (content, False) if show_all else fold(content, limit)
    spans = _within(spans, 0, len(text))
    if looks_like_json(stripped):
        return ReviewTurn([_code(text, "text", spans)], json_error_note(content), folded, hits)
    segments, at = [], 0
    for match in _FENCE.finditer(text):
        if match.start() > at:
            segments.append(_prose(text[at : match.start()], _within(spans, at, match.start())))
        body_start, body_end = match.start("body"), match.end("body")
        segments.append(
            _code(match["body"], match["lang"].strip(), _within(spans, body_start, body_end))
        )
        at = match.end()
    if at < len(text):
        segments.append(_prose(text[at:], _within(spans, at, len(text))))
    return ReviewTurn(segments, None, folded, hits)
