"""Private data and secrets: every e-mail address, phone number, IP address, card
number, IBAN and secret in the chosen turns, with its kind and its span (turn index,
start and end character). The values themselves are not stored: a span points into the
row, so the signal table holds no copy of a secret."""

from __future__ import annotations

from collections import Counter
from typing import ClassVar

import pyarrow as pa

from podium.signals.private_patterns import detectors, find_all
from podium.signals.settings import PrivateDataSettings
from podium.signals.signal import RowSignal
from podium.signals.turns import Turns


class PrivateData(RowSignal[PrivateDataSettings]):
    name: ClassVar[str] = "private-data"
    version: ClassVar[int] = 1
    description: ClassVar[str] = "Private data and secrets with kind and span."
    schema: ClassVar[pa.Schema] = pa.schema(
        [
            pa.field("id", pa.string()),
            pa.field("turn", pa.int32()),
            pa.field("kind", pa.string()),
            pa.field("detail", pa.string()),
            pa.field("start", pa.int32()),
            pa.field("end", pa.int32()),
        ]
    )

    def __init__(self, settings: PrivateDataSettings) -> None:
        super().__init__(settings)
        self.chosen = detectors(tuple(settings.kinds))
        self.counts: Counter[str] = Counter()
        self.rows: set[str] = set()

    def compute(self, turns: Turns) -> pa.RecordBatch:
        out: dict[str, list[object]] = {f: [] for f in self.schema.names}
        for i, hits in enumerate(find_all(turns.texts, self.chosen)):
            for hit in hits:
                row_id = turns.ids[int(turns.row_of[i])]
                out["id"].append(row_id)
                out["turn"].append(int(turns.turn_of[i]))
                out["kind"].append(hit.kind)
                out["detail"].append(hit.detail)
                out["start"].append(hit.start)
                out["end"].append(hit.end)
                self.counts[hit.kind] += 1
                self.rows.add(row_id)
        return pa.RecordBatch.from_pydict(out, schema=self.schema)

    def summary(self) -> dict[str, int]:
        return {"rows_with_hits": len(self.rows), **dict(self.counts.most_common())}
