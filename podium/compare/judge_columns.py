"""The columns every judge's output table shares: its pairwise verdicts (`judge`) and
its rubric scores (`judge_scores`) start with what was judged, by whom and with which
prompt, and end with what went wrong and how long it took. Written once, so a column
added to a judge's output is added to both."""

from __future__ import annotations

import pyarrow as pa

JUDGED = [
    pa.field("id", pa.string()),
    pa.field("comparison", pa.string()),
    pa.field("prompt_id", pa.string()),
    pa.field("voter", pa.string()),  # judge:NAME
    pa.field("judge", pa.string()),  # a registered judge, or the model that judged
    pa.field("prompt_version", pa.string()),
]
ANSWERED = [
    pa.field("problem", pa.string()),  # why unparsed
    pa.field("latency_s", pa.float64()),  # every request of the row (a verdict's two)
    pa.field("created_at", pa.timestamp("us", tz="UTC")),
]


def judge_schema(own: list[pa.Field]) -> pa.Schema:
    """A judge's output table: the shared columns around its `own`."""
    return pa.schema([*JUDGED, *own, *ANSWERED])
