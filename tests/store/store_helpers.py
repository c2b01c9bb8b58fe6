"""Helpers shared by the store tests."""

from __future__ import annotations

import datetime

import pyarrow as pa

from podium.reporting import Reporter
from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_batches


class Recorder(Reporter):
    """A reporter that keeps every progress call, to check what a bar would show."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[int, int | None, str]] = []

    def progress(self, done: int, total: int | None = None, message: str = "") -> None:
        self.calls.append((done, total, message))


def sft_rows(n: int, start: int = 0) -> pa.Table:
    """SFT rows r{start:04d}... with two turns each, alternating sources and splits."""
    return pa.Table.from_pylist(
        [
            {
                "id": f"r{i:04d}",
                "messages": [
                    {"role": "user", "content": f"question {i}"},
                    {"role": "assistant", "content": f"answer {i}"},
                ],
                "source": "even" if i % 2 == 0 else "odd",
                "split": "test" if i % 5 == 0 else "train",
                "tags": [],
                "system": None,
                "metadata": None,
                "created_at": datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC),
            }
            for i in range(start, start + n)
        ],
        schema=SFT_ARROW_SCHEMA,
    )


def write_in_files(name: str, n: int, start: int, mode: str, *, rows_per_group: int) -> None:
    """`sft_rows(n, start)` as row groups of `rows_per_group`, a new data file after each
    group (a tiny target size), so one write makes several files in one commit."""
    write_batches(
        name,
        sft_rows(n, start).to_batches(max_chunksize=rows_per_group),
        mode=mode,  # type: ignore[arg-type]
        schema=SFT_SCHEMA,
        target_file_bytes=1,
    )
