"""What the Validate page and the CLI show about a finished run (no Streamlit here)."""

from __future__ import annotations

from collections import Counter
from typing import Any
from urllib.parse import urlencode

from podium.store.catalog import load_table
from podium.store.query import page
from podium.store.snapshots import list_snapshots
from podium.validate.caret import render_caret
from podium.validate.report import read_report, report_for, report_summary
from podium.validate.result import line_column


def kind_counts(failures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{"rule", "kind", "count"}], most frequent first (the bar chart's data)."""
    counts = Counter((f["rule"], f["kind"]) for f in failures)
    return [{"rule": r, "kind": k, "count": n} for (r, k), n in counts.most_common()]


def snapshot_ids(table: str) -> list[int]:
    """Snapshot ids of `table`, newest first."""
    return [s.snapshot_id for s in reversed(list_snapshots(load_table(table)))]


def latest_report(
    table: str, snapshot_id: int | None
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(summary, failures) of the report covering this snapshot, if one exists."""
    name = report_for(table, snapshot_id)
    if name is None:
        return None
    return report_summary(name), read_report(name).to_pylist()


def _sql_string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def message_texts(table: str, snapshot_id: int | None, ids: list[str]) -> dict[str, list[Any]]:
    """id -> the row's messages, for the failing rows being shown."""
    if not ids:
        return {}
    where = f"id IN ({', '.join(_sql_string(i) for i in ids)})"
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


def browse_link(table: str, snapshot_id: int | None, sample_id: str) -> str:
    """Relative URL of the Browse page opened on one sample of one snapshot."""
    query = {"table": table, "sample": sample_id}
    if snapshot_id is not None:
        query = {"table": table, "snapshot": str(snapshot_id), "sample": sample_id}
    return "/browse?" + urlencode(query)
