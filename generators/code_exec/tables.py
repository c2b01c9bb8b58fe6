"""The tables a code-exec build writes: execution rows, their SFT twin, verify reports."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from generators.code_exec.harness import call_text
from podium.store.catalog import kinds
from podium.store.schema import SFT_ARROW_SCHEMA

ROWS_KIND = kinds.CODE_EXEC_ROWS
VERIFY_KIND = kinds.CODE_EXEC_VERIFY
# Status of an input the model proposed that was not a valid literal argument list.
REJECTED = "rejected"

ROWS_ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("function_id", pa.string()),
        pa.field("entry_point", pa.string()),
        pa.field("code", pa.string()),
        pa.field("input", pa.string()),  # canonical argument list, e.g. "[1, 2], 3"
        pa.field("raw_input", pa.string()),  # as the model wrote it
        pa.field("output", pa.string()),  # repr of the return value (status ok)
        pa.field("status", pa.string()),
        pa.field("error", pa.string()),
        pa.field("wall_s", pa.float64()),
        pa.field("cpu_s", pa.float64()),
        pa.field("model", pa.string()),
        pa.field("backend", pa.string()),
        pa.field("created_at", pa.timestamp("us", tz="UTC")),
    ]
)

VERIFY_ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("function_id", pa.string()),
        pa.field("input", pa.string()),
        pa.field("expected", pa.string()),
        pa.field("actual", pa.string()),
        pa.field("status", pa.string()),
        pa.field("match", pa.bool_()),
        pa.field("error", pa.string()),
        pa.field("wall_s", pa.float64()),
        pa.field("backend", pa.string()),
        pa.field("created_at", pa.timestamp("us", tz="UTC")),
    ]
)


def row_id(function_id: str, input_text: str) -> str:
    return hashlib.sha1(f"{function_id}\x00{input_text}".encode()).hexdigest()[:16]


def now() -> datetime:
    return datetime.now(UTC)


def question(entry_point: str, code: str, input_text: str) -> str:
    return (
        f"```python\n{code.rstrip()}\n```\n\n"
        f"What does `{call_text(entry_point, input_text)}` return?"
    )


def sft_rows(rows: list[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """One chat sample per successful execution: the call as question, repr as answer."""
    out = []
    for row in rows:
        if row["status"] != "ok" or row["output"] is None:
            continue
        out.append(
            {
                "id": row["id"],
                "messages": [
                    {
                        "role": "user",
                        "content": question(row["entry_point"], row["code"], row["input"]),
                    },
                    {"role": "assistant", "content": row["output"]},
                ],
                "system": None,
                "source": source,
                "split": "train",
                "tags": ["code-exec"],
                "metadata": json.dumps(
                    {
                        "function_id": row["function_id"],
                        "input": row["input"],
                        "cpu_s": row["cpu_s"],
                    }
                ),
                "created_at": row["created_at"],
            }
        )
    return out


def to_arrow(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)


def sft_arrow(rows: list[dict[str, Any]], source: str) -> pa.Table:
    return pa.Table.from_pylist(sft_rows(rows, source), schema=SFT_ARROW_SCHEMA)
