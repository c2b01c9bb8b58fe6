"""The samples table a generation job writes: one row per prompt and sample index."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from generators.client import ChatResult
from generators.prompts import Prompt

MESSAGE_TYPE = pa.struct([pa.field("role", pa.string()), pa.field("content", pa.string())])
SAMPLES_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string()),
        pa.field("prompt_id", pa.string()),
        pa.field("sample_index", pa.int32()),
        pa.field("messages", pa.list_(pa.field("element", MESSAGE_TYPE))),  # prompt + completion
        pa.field("completion", pa.string()),
        pa.field("checkpoint", pa.string()),
        pa.field("sampling", pa.string()),  # JSON of the sampling parameters
        pa.field("finish_reason", pa.string()),
        pa.field("error", pa.string()),
        pa.field("prompt_tokens", pa.int32()),
        pa.field("completion_tokens", pa.int32()),
        pa.field("latency_s", pa.float64()),
        pa.field("created_at", pa.timestamp("us", tz="UTC")),
    ]
)
_ID_NAMESPACE = uuid.UUID("9b1de4a8-5f0e-4c0e-9a52-3f4c1d2b7a61")


def sample_id(out_table: str, prompt_id: str, index: int) -> str:
    # Deterministic: a resumed run would produce the same id for the same sample.
    return str(uuid.uuid5(_ID_NAMESPACE, f"{out_table}\x00{prompt_id}\x00{index}"))


def sample_rows(
    out_table: str,
    checkpoint: str,
    sampling: dict[str, Any],
    prompt: Prompt,
    results: list[ChatResult],
) -> list[dict[str, Any]]:
    """Rows for one prompt; `results[i]` is sample i (one n=1 request per sample)."""
    now = datetime.now(UTC)
    rows = []
    for index, res in enumerate(results):
        text = res.completions[0].text if res.completions else ""
        rows.append(
            {
                "id": sample_id(out_table, prompt.prompt_id, index),
                "prompt_id": prompt.prompt_id,
                "sample_index": index,
                # Prompt plus answer, so the table opens in Browse and trains like SFT data.
                "messages": [*prompt.messages, {"role": "assistant", "content": text}],
                "completion": text,
                "checkpoint": checkpoint,
                "sampling": json.dumps(sampling, sort_keys=True),
                "finish_reason": res.completions[0].finish_reason if res.completions else "error",
                "error": res.error,
                "prompt_tokens": res.prompt_tokens,
                "completion_tokens": res.completion_tokens,
                "latency_s": res.latency_s,
                "created_at": now,
            }
        )
    return rows


def to_arrow(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SAMPLES_SCHEMA)
