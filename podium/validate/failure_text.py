"""A failing row's text with a caret under the error, for `podium validate show` and the
Validate page (no Streamlit here)."""

from __future__ import annotations

from typing import Any

from podium.store.read.connections import literal
from podium.store.read.query import page
from podium.validate.caret import render_caret
from podium.validate.result import line_column


def message_texts(table: str, snapshot_id: int | None, ids: list[str]) -> dict[str, list[Any]]:
    """id -> the row's messages, for the failing rows being shown."""
    if not ids:
        return {}
    where = f"id IN ({', '.join(literal(i) for i in ids)})"
    rows = page(table, limit=len(ids), where=where, snapshot_id=snapshot_id).rows
    return {r["id"]: r.get("messages") or [] for r in rows}


def _failing_text(failure: dict[str, Any], messages: list[Any]) -> str | None:
    turn = failure.get("turn")
    if turn is None or not 0 <= turn < len(messages):
        return None
    message = messages[turn]
    text = message.get("content") if isinstance(message, dict) else None
    return text if isinstance(text, str) else None


def message_position(failure: dict[str, Any], messages: list[Any]) -> tuple[int, int | None] | None:
    """1-based (line, column) of the failure in its whole message, as Validate shows it
    and Browse marks it; a rule's own `line`/`column` count from the fenced block it
    checked instead. Column None for a rule that gives only a line; None: no position."""
    text = _failing_text(failure, messages)
    offset = failure.get("message_offset")
    if text is None or offset is None:
        return None
    line, column = line_column(text, min(offset, len(text)))
    return line, (column if failure.get("column") is not None else None)


def position_text(position: tuple[int, int | None] | None) -> str:
    """'line 5, column 3', 'line 5' or 'no position'."""
    if position is None:
        return "no position"
    line, column = position
    return f"line {line}" + (f", column {column}" if column is not None else "")


def where_text(failure: dict[str, Any], messages: list[Any]) -> str:
    """Where a failure is, counted as the reader sees it: in a fenced block, the block's
    own line and column (what the parser's message says, and the line Browse's numbered
    block shows), then the message's line; else the message's line and column."""
    position = message_position(failure, messages)
    if position is None:
        return "no position"
    offset, whole, line = failure.get("offset"), failure.get("message_offset"), failure.get("line")
    if offset is None or whole is None or whole == offset or line is None:
        return position_text(position)
    column = failure.get("column")
    return (
        position_text((int(line), int(column) if column is not None else None))
        + f" of the code block (line {position[0]} of the message)"
    )


def marked_failure(failure: dict[str, Any], messages: list[Any]) -> tuple[str, str]:
    """(where, text): the position in the whole message, and the failing turn with a
    caret under the error (just the reason when the content is not text)."""
    text = _failing_text(failure, messages)
    note = f"{failure['kind']}: {failure['message']}"
    if text is None:
        return "no position", note
    offset = failure.get("message_offset")
    if offset is None:
        return "no position", render_caret(text, None, note)
    return where_text(failure, messages), render_caret(text, offset, note)


def failure_lines(failures: list[dict[str, Any]], messages: list[Any]) -> list[str]:
    """One Markdown line per failure of a row, at the position Validate shows."""
    lines = []
    for f in failures:
        where = where_text(f, messages)
        lines.append(
            f"- turn {f['turn']} ({f['role']}) · `{f['rule']}` · {f['kind']}: {f['message']}"
            + ("" if where == "no position" else f" ({where})")
        )
    return lines


def error_marks(
    failures: list[dict[str, Any]], messages: list[Any]
) -> dict[int, list[tuple[int | None, int | None]]]:
    """{turn: [(line, column)]} in whole-message positions, for marking the errors."""
    out: dict[int, list[tuple[int | None, int | None]]] = {}
    for f in failures:
        position = message_position(f, messages)
        if f.get("turn") is not None and position is not None:
            out.setdefault(int(f["turn"]), []).append(position)
    return out
