"""What the Validate page and the CLI show about a finished run (no Streamlit here)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from podium.errors import InvalidInput
from podium.store.catalog import load_table
from podium.store.query import page
from podium.store.snapshots import list_snapshots
from podium.validate.caret import render_caret
from podium.validate.report import read_report, report_for, report_summary
from podium.validate.result import line_column
from podium.validate.rules import save_schema_text


def kind_counts(failures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{"rule", "kind", "count"}], most frequent first (the bar chart's data)."""
    counts = Counter((f["rule"], f["kind"]) for f in failures)
    return [{"rule": r, "kind": k, "count": n} for (r, k), n in counts.most_common()]


def snapshot_ids(table: str) -> list[int]:
    """Snapshot ids of `table`, newest first."""
    return [s.snapshot_id for s in reversed(list_snapshots(load_table(table)))]


def latest_report(
    table: str, snapshot_id: int | None, report: str | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(summary, failures) of the report covering this snapshot, if one exists."""
    name = report_for(table, snapshot_id, report)
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


def build_specs(
    chosen: list[str],
    *,
    schema_text: str = "",
    xsd_text: str = "",
    pattern: str = "",
    tools_text: str = "",
) -> list[str]:
    """Rule specs from the page's inputs; pasted or uploaded files are stored first.

    `json-schema` without a schema text uses the table's stored schema; `tool-call`
    without tools uses each row's metadata. The specs are checked (and the files
    compiled) by the caller through `parse_rules`, before anything runs.
    """
    specs = []
    for rule in chosen:
        if rule == "json-schema" and schema_text.strip():
            specs.append(f"json-schema:{save_schema_text(schema_text, '.json')}")
        elif rule == "xsd":
            if not xsd_text.strip():
                raise InvalidInput("The xsd rule needs an XML Schema: upload or paste one.")
            specs.append(f"xsd:{save_schema_text(xsd_text, '.xsd')}")
        elif rule == "regex":
            if not pattern:
                raise InvalidInput("The regex rule needs a pattern.")
            specs.append(f"regex:{pattern}")
        elif rule == "tool-call" and tools_text.strip():
            specs.append(f"tool-call:{save_schema_text(tools_text, '.json')}")
        else:
            specs.append(rule)
    if not specs:
        raise InvalidInput("Choose at least one rule.")
    return specs
