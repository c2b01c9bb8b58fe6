"""Tiny tables for the Browse page tests (AppTest and the real browser), written
through the real Iceberg path. Every row's content is derived from its number, so a
test can name the exact text it expects to see."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table

CHAT = "lab.chat"
SCORES = "lab.scores"
CHAT_ROWS = 60  # first snapshot; the second appends APPENDED more
APPENDED = 5
NEEDLE_ID = "c042"  # the only row whose prompt mentions zebras
NEEDLE = "zebra"


def prompt(i: int) -> str:
    return f"Question {i}: describe the {NEEDLE if i == 42 else 'giraffe'} in JSON"


def answer(i: int) -> str:
    if i % 3 == 0:
        return json.dumps({"animal": "giraffe", "legs": 4, "row": i})
    if i % 3 == 1:
        return f"Here is code for row {i}:\n\n```python\nprint('row {i}')\n```"
    return '{"animal": "giraffe", "legs": 4,'  # truncated: malformed on purpose


def chat_row(i: int) -> dict[str, Any]:
    return {
        "id": f"c{i:03d}",
        "messages": [
            {"role": "user", "content": prompt(i)},
            {"role": "assistant", "content": answer(i)},
        ],
        "system": "You answer in JSON." if i % 2 == 0 else None,
        "source": "human" if i % 5 == 0 else "synthetic",
        "split": "test" if i % 4 == 0 else "train",
        "tags": ["json"] if i % 3 != 1 else ["code"],
        "metadata": json.dumps({"row": i, "batch": i // 10}),
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
    }


def chat_table(start: int, stop: int) -> pa.Table:
    return pa.Table.from_pylist([chat_row(i) for i in range(start, stop)], schema=SFT_ARROW_SCHEMA)


def make_browse_tables() -> None:
    """lab.chat (two snapshots: 60 rows, then 65) and lab.scores (no messages, no ids)."""
    write_table(CHAT, chat_table(0, CHAT_ROWS), schema=SFT_SCHEMA)
    write_table(CHAT, chat_table(CHAT_ROWS, CHAT_ROWS + APPENDED), mode="append")
    scores = pa.table(
        {
            "name": [f"model-{i}" for i in range(8)],
            "score": [i / 10 for i in range(8)],
            "details": [json.dumps({"wins": i, "losses": 8 - i}) for i in range(8)],
        }
    )
    write_table(SCORES, scores)
