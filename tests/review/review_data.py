"""SFT tables for the review tests: real Iceberg tables in the test's own home."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pyarrow as pa

from podium.identity import User
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_batches

ALICE = User(name="alice", role="reviewer", source="config")
BOB = User(name="bob", role="reviewer", source="config")
VIEWER = User(name="vic", role="viewer", source="config")


def row_id(i: int) -> str:
    return f"row-{i:07d}"


def sft_batches(n: int, batch: int = 1000) -> Iterator[pa.RecordBatch]:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    for lo in range(0, n, batch):
        rows = [
            {
                "id": row_id(i),
                "messages": [
                    {"role": "user", "content": f"question {i}"},
                    {"role": "assistant", "content": f"answer {i}\nsecond line"},
                ],
                "system": None,
                "source": "test",
                "split": "train",
                "tags": [],
                "metadata": "{}",
                "created_at": at,
            }
            for i in range(lo, min(lo + batch, n))
        ]
        yield pa.RecordBatch.from_pylist(rows, SFT_ARROW_SCHEMA)


def make_table(name: str, n: int, *, file_bytes: int | None = None, batch: int = 1000) -> None:
    """An SFT table of `n` rows with ids row-0000000.. in write order."""
    write_batches(
        name,
        sft_batches(n, batch),
        schema=SFT_SCHEMA,
        properties={"podium.kind": "sft"},
        target_file_bytes=file_bytes,
    )
