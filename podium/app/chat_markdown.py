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
- everything else is Markdown.

Nothing here imports Streamlit: pages and tests call the same functions.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

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
    return RenderedTurn(_reindent_json_fences(content))


def render_value(value: Any) -> str:
    """Markdown for one field of a non-chat row (a plain value, nested data or JSON text)."""
    if value is None:
        return "_(null)_"
    if isinstance(value, str):
        return render_turn(value).markdown
    if isinstance(value, (dict, list, tuple)):
        return fence(pretty_json(value), "json")
    return f"`{value}`"
