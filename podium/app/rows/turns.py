"""A row's conversation as Browse and the Review queue draw it, without Streamlit: its
turns (a `system` column included), long conversations a page of turns at a time, and
its validation failures as lines."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from podium.app.safe_markdown import code_span, escape_markdown
from podium.validate.failure_text import where_text


@dataclass(frozen=True)
class Turn:
    role: str
    content: str | None


def conversation(row: Mapping[str, Any]) -> list[Turn]:
    """The turns to show for a chat row; a `system` column counts as the first turn."""
    messages = row.get("messages") or []
    turns = [Turn(str(m.get("role") or "unknown"), m.get("content")) for m in messages if m]
    system = row.get("system")
    if system and not (turns and turns[0].role == "system" and turns[0].content == system):
        turns.insert(0, Turn("system", system))
    return turns


def system_turn(row: Mapping[str, Any]) -> Turn | None:
    """The row's `system` column as a turn to show above its messages (Browse and the
    Review queue alike); None when it is empty or the messages already hold a system turn."""
    system = row.get("system")
    if not system or any((m or {}).get("role") == "system" for m in row.get("messages") or []):
        return None
    return Turn("system", str(system))


TURNS_PER_PAGE = 50  # a row of 100,000 turns must not freeze the reviewer's tab


@dataclass(frozen=True)
class TurnPage:
    """Which turns of a conversation to draw: messages[start:stop] on page `page` of
    `pages` (1-based)."""

    start: int
    stop: int
    page: int
    pages: int
    total: int

    @property
    def caption(self) -> str:
        return f"Turns {self.start + 1:,}-{self.stop:,} of {self.total:,}"


def turn_page(total: int, page: int | None, per_page: int = TURNS_PER_PAGE) -> TurnPage:
    """The turns to draw for `page` (clamped into range; 1 when not given)."""
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, page or 1), pages)
    start = (page - 1) * per_page
    return TurnPage(start, min(total, start + per_page), page, pages, total)


def turn_page_of(turn: int, per_page: int = TURNS_PER_PAGE) -> int:
    """The page that holds 0-based `turn` (to open a validation failure's turn)."""
    return turn // per_page + 1


def failure_lines(failures: Sequence[Mapping[str, Any]], messages: list[Any]) -> list[str]:
    """One Markdown line per failure of a row, at the position Validate shows; its role,
    rule, kind and message come from data (a message quotes the row) and read as text."""
    lines = []
    for f in failures:
        where = where_text(dict(f), messages)
        lines.append(
            f"- turn {f['turn']} ({escape_markdown(f['role'])}) · {code_span(f['rule'])} · "
            f"{escape_markdown(f['kind'])}: {escape_markdown(f['message'])}"
            + ("" if where == "no position" else f" ({where})")
        )
    return lines
