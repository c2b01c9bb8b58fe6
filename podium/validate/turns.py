"""From a batch of SFT rows (Arrow) to the turns a run checks, and back to report rows.

Flattening `messages` and filtering roles is done with Arrow compute, so Python only
touches the text of the turns being validated.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from podium.validate.batch import Plan, check_texts
from podium.validate.extract import Extract

EXCERPT_CHARS = 40


@dataclass(frozen=True)
class Columns:
    """Stored column names for the canonical ones (tables may be mapped, see store.read.query)."""

    id: str = "id"
    messages: str = "messages"
    role: str = "role"
    content: str = "content"
    metadata: str = "metadata"

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, str]) -> Columns:
        return cls(**{k: mapping[k] for k in cls.__dataclass_fields__ if k in mapping})


@dataclass
class BatchResult:
    rows: int = 0
    turns: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)


def _struct_field(values: pa.Array, name: str) -> pa.Array:
    return (
        pc.struct_field(values, name)
        if name in [f.name for f in values.type]
        else pa.nulls(len(values), pa.string())
    )


def check_batch(
    batch: pa.RecordBatch,
    plan: Plan,
    mode: Extract = "whole",
    roles: Collection[str] | None = ("assistant",),
    columns: Columns = Columns(),
) -> BatchResult:
    """Validate the chosen turns of every row in `batch`; failures as report rows."""
    messages = batch.column(columns.messages)
    lengths = pc.fill_null(pc.list_value_length(messages), 0).to_numpy(zero_copy_only=False)
    flat = messages.flatten()  # honours slicing and skips null lists
    row_of = np.repeat(np.arange(len(lengths)), lengths)
    turn_of = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    role = _struct_field(flat, columns.role)
    content = _struct_field(flat, columns.content)
    if roles:
        keep = pc.fill_null(pc.is_in(role, value_set=pa.array(list(roles), pa.string())), False)
        where = np.flatnonzero(keep.to_numpy(zero_copy_only=False))
        role, content = role.take(where), content.take(where)
        row_of, turn_of = row_of[where], turn_of[where]
    texts = content.to_pylist()
    metadata = None
    if any(r.name == "tool-call" for r in plan.rules) and columns.metadata in batch.schema.names:
        row_meta = batch.column(columns.metadata).to_pylist()
        metadata = [row_meta[r] for r in row_of]
    failures = check_texts(plan, texts, metadata, mode)
    result = BatchResult(rows=batch.num_rows, turns=len(texts))
    if not failures:
        return result
    ids = batch.column(columns.id).to_pylist() if columns.id in batch.schema.names else None
    role_list = role.to_pylist()
    for index, failure in failures:
        row = int(row_of[index])
        text = texts[index]
        result.failures.append(
            {
                "id": ids[row] if ids is not None else str(row),
                "turn": int(turn_of[index]),
                "role": role_list[index],
                "rule": failure.rule,
                "kind": failure.kind,
                "message": failure.message,
                "line": failure.line,
                "column": failure.column,
                "offset": failure.offset,
                "message_offset": failure.message_offset,
                "excerpt": excerpt(text, failure.message_offset) if isinstance(text, str) else None,
            }
        )
    return result


def excerpt(text: str, offset: int | None, width: int = EXCERPT_CHARS) -> str:
    """A one-line window of `text` around `offset` (newlines shown as ⏎)."""
    if offset is None:
        snippet = text[: 2 * width]
        more = len(text) > 2 * width
        return snippet.replace("\n", "⏎") + ("…" if more else "")
    start, end = max(0, offset - width), min(len(text), offset + width)
    snippet = text[start:end].replace("\n", "⏎")
    return ("…" if start else "") + snippet + ("…" if end < len(text) else "")
