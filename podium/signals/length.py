"""Length: characters and white-space separated words of every chosen turn, and their
totals per row (a row signal)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pyarrow as pa

from podium.signals.settings import LengthSettings
from podium.signals.signal import RowSignal
from podium.signals.turns import Turns


class Length(RowSignal[LengthSettings]):
    name: ClassVar[str] = "length"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "Characters and words per turn and per row."
    schema: ClassVar[pa.Schema] = pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("turns", pa.int32()),
            pa.field("chars", pa.int64()),
            pa.field("words", pa.int64()),
            pa.field("turn_chars", pa.list_(pa.int32())),
            pa.field("turn_words", pa.list_(pa.int32())),
        ]
    )

    def __init__(self, settings: LengthSettings) -> None:
        super().__init__(settings)
        self._rows = 0
        self._chars = 0

    def compute(self, turns: Turns) -> pa.RecordBatch:
        chars = np.fromiter((len(t) for t in turns.texts), np.int64, len(turns.texts))
        words = np.fromiter((len(t.split()) for t in turns.texts), np.int64, len(turns.texts))
        n = turns.rows
        per_row = np.bincount(turns.row_of, minlength=n)
        offsets = np.concatenate(([0], np.cumsum(per_row))).astype(np.int32)
        order = np.argsort(turns.row_of, kind="stable")  # turns of a row together
        row_chars = np.bincount(turns.row_of, weights=chars, minlength=n).astype(np.int64)
        row_words = np.bincount(turns.row_of, weights=words, minlength=n).astype(np.int64)
        self._rows += n
        self._chars += int(row_chars.sum())
        return pa.RecordBatch.from_arrays(
            [
                pa.array(turns.ids, pa.string()),
                pa.array(per_row.astype(np.int32)),
                pa.array(row_chars),
                pa.array(row_words),
                pa.ListArray.from_arrays(
                    pa.array(offsets), pa.array(chars[order].astype(np.int32))
                ),
                pa.ListArray.from_arrays(
                    pa.array(offsets), pa.array(words[order].astype(np.int32))
                ),
            ],
            schema=self.schema,
        )

    def summary(self) -> dict[str, int]:
        return {"rows": self._rows, "chars": self._chars}
