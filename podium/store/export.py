"""Exporting a table snapshot to JSONL or Parquet.

Exports round-trip: importing the file into a new table gives identical rows (ids,
messages, timestamps, metadata). JSONL writes `metadata` as a JSON object and
`created_at` as ISO 8601; Parquet keeps the Arrow types as they are.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from podium.errors import InvalidInput
from podium.reporting import JobOutputs, Reporter
from podium.store.read import read_arrow
from podium.store.refs import TableRef

ExportFormat = Literal["jsonl", "parquet"]


class ExportConfig(BaseModel):
    """Export a table snapshot to a file (kind: export)."""

    input: TableRef = Field(description="Table (and snapshot) to export.")
    path: str = Field(description="Output file: .jsonl or .parquet.")
    format: ExportFormat | None = Field(
        None, description="File format; from the suffix if omitted."
    )


def _json_value(key: str, value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if key == "metadata" and isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _format_of(path: Path, fmt: ExportFormat | None) -> ExportFormat:
    if fmt:
        return fmt
    if path.suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if path.suffix == ".parquet":
        return "parquet"
    raise InvalidInput(
        f"{path}: cannot tell the format from {path.suffix!r}; use .jsonl or .parquet."
    )


def run_export(cfg: ExportConfig, reporter: Reporter) -> JobOutputs:
    path = Path(cfg.path).expanduser()
    fmt = _format_of(path, cfg.format)
    data, sid = read_arrow(cfg.input.name, cfg.input.snapshot_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write beside the target and rename, so a failed export never leaves half a file.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        if fmt == "parquet":
            pq.write_table(data, tmp)
        else:
            with open(tmp, "w", encoding="utf-8") as fh:
                for i, batch in enumerate(data.to_batches(max_chunksize=10_000)):
                    for row in batch.to_pylist():
                        obj = {k: _json_value(k, v) for k, v in row.items()}
                        fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
                    reporter.progress(
                        min((i + 1) * 10_000, data.num_rows), data.num_rows, "exporting"
                    )
                    reporter.check_cancelled()
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    reporter.progress(data.num_rows, data.num_rows, f"wrote {path}")
    return JobOutputs(summary={"rows": data.num_rows, "path": str(path), "snapshot_id": sid})


def export_table(
    name: str, path: str | Path, *, snapshot_id: int | None = None, reporter: Reporter | None = None
) -> JobOutputs:
    cfg = ExportConfig(input=TableRef(name=name, snapshot_id=snapshot_id), path=str(path))
    return run_export(cfg, reporter or Reporter())
