"""A failing row's text with a caret under the error, for `podium validate show` and the
Validate page (no Streamlit here)."""

from __future__ import annotations

from typing import Any

from podium.store.query import page
from podium.store.scan import literal
from podium.validate.caret import render_caret
from podium.validate.result import line_column


def message_texts(table: str, snapshot_id: int | None, ids: list[str]) -> dict[str, list[Any]]:
    """id -> the row's messages, for the failing rows being shown."""
    if not ids:
        return {}
    where = f"id IN ({', '.join(literal(i) for i in ids)})"
    rows = page(table, limit=len(ids), where=where, snapshot_id=snapshot_id).rows
    return {r["id"]: r.get("messages") or [] for r in rows}


def marked_failure(failure: dict[str, Any], messages: list[Any]) -> tuple[str, str]:
    """(where, text): the position in the whole message, and the failing turn with a
    caret under the error (just the reason when the content is not text)."""
    turn = failure["turn"]
    message = messages[turn] if 0 <= turn < len(messages) else None
    text = message.get("content") if isinstance(message, dict) else None
    note = f"{failure['kind']}: {failure['message']}"
    offset = failure.get("message_offset")
    if not isinstance(text, str):
        return "no position", note
    if offset is None:
        return "no position", render_caret(text, None, note)
    line, column = line_column(text, min(offset, len(text)))
    where = f"line {line}, column {column}" if failure.get("column") is not None else f"line {line}"
    return where, render_caret(text, offset, note)
