"""Small SFT tables for the signal tests, written to a real catalog."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from podium.store.schema import SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.write import write_table

PROSE = (
    "The quick brown fox jumps over the lazy dog while the farmer watches from the old "
    "wooden porch and sips his coffee slowly before the long day of work begins. "
)
GSM_PROBLEM = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many "
    "clips in May. How many clips did Natalia sell altogether in April and May?"
)


def chat_rows(texts: Sequence[str], prefix: str = "r") -> pa.Table:
    return pa.Table.from_pylist(
        [
            {
                "id": f"{prefix}{i:04d}",
                "messages": [
                    {"role": "user", "content": "Answer this."},
                    {"role": "assistant", "content": text},
                ],
            }
            for i, text in enumerate(texts)
        ],
        schema=SFT_ARROW_SCHEMA,
    )


def write_chat(name: str, texts: Sequence[str], prefix: str = "r", mode: str = "create") -> None:
    write_table(name, chat_rows(texts, prefix), schema=SFT_SCHEMA, mode=mode)  # type: ignore[arg-type]


def benchmark_report(script: str, rows: int, tmp_path: Path, *extra: str) -> dict[str, Any]:
    """`benchmarks/SCRIPT --rows ROWS --json` in a fresh Python, its report parsed (the
    benchmark tests keep them from rotting; no timing is asserted)."""
    import json
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, str(repo / "benchmarks" / script), "--rows", str(rows), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.stdout)
    return report
