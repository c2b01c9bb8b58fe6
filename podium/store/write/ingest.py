"""Importing chat data into an SFT table: JSONL, Parquet, saved Hugging Face datasets.

Recognised shapes (detected per file, or named with `format`):
- `openai`: `{"messages": [{"role": ..., "content": ...}, ...]}`
- `sharegpt`: `{"conversations": [{"from": "human"|"gpt"|..., "value": ...}, ...]}`
- `prompt-response`: one prompt column and one response column (`prompt`/`instruction`/
  `question`/`input` and `response`/`output`/`completion`/`answer`, or named).
The input is streamed: parsed and checked in batches that are written straight into
Parquet data files, and the files are committed in one Iceberg snapshot at the end. A
bad line anywhere (even at 90%) deletes the files written so far and leaves the
catalog exactly as it was; memory stays flat however large the file. JSONL is typed
and normalised by Arrow a block at a time (`columnar_import`); what Arrow cannot type
surely goes row by row through `chat_rows`, which defines what a row becomes.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
from pydantic import AliasChoices, BaseModel, Field

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.paths import resolve_under_roots
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import full_name
from podium.store.catalog.table_name import TableName
from podium.store.read.prefetch import Prefetcher
from podium.store.schema import PROP_KIND, SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.duplicate_ids import IdLedger, Lines
from podium.store.write.generated_ids import GeneratedIds
from podium.store.write.import_sources import (
    BATCH_BYTES,
    Part,
    Position,
    RowPath,
    file_format,
    import_batch_bytes,
    records,
)
from podium.store.write.modes import ChatFormat, WriteMode
from podium.store.write.parse_ahead import parsing
from podium.store.write.write import write_batches


class ImportConfig(BaseModel):
    """Import a file into an SFT table (kind: import)."""

    path: str = Field(description="JSONL, Parquet file, or a `save_to_disk` dataset directory.")
    out: TableName = Field(
        validation_alias=AliasChoices("out", "table"),
        description="Target table as NAMESPACE.TABLE.",
    )
    format: ChatFormat | None = Field(None, description="Chat shape; detected when omitted.")
    mode: WriteMode = Field("create", description="create, append or overwrite.")
    prompt_column: str | None = Field(None, description="Prompt column for prompt-response data.")
    response_column: str | None = Field(None, description="Response column for prompt-response.")
    source: str | None = Field(
        None, description="Value for the source column (default: file name)."
    )
    allow_duplicate_ids: bool = Field(
        False,
        description="Import rows whose id repeats an earlier row's, and report how many, "
        "instead of refusing the file.",
    )


def sft_batches(
    cfg: ImportConfig,
    reporter: Reporter | None = None,
    batch_bytes: int = BATCH_BYTES,
    counts: dict[str, int] | None = None,
    *,
    columnar: bool = True,
    now: datetime | None = None,
) -> Iterator[pa.RecordBatch]:
    """Parse and check the input as SFT record batches of about `batch_bytes` of text.

    Streams: a bounded number of batches is held at a time. Raises InvalidInput naming
    the line or row of the first bad record, when the input holds no records at all,
    and (after the last batch, so before any commit) when ids repeat, unless the config
    allows it; `counts["duplicate_ids"]` then says how many rows repeated an id. JSONL is
    typed by Arrow a block at a time (`columnar_import`) in a thread of its own, ahead of
    the ids and the writer (taken over from `parse_ahead` when it began earlier), unless
    `columnar` is off; the rows are the same either way (`counts["columnar_rows"]` says
    how many Arrow typed). A row without `created_at` gets `now` (default: when the
    parsing starts).
    """
    reporter = reporter or Reporter()
    path = resolve_under_roots(cfg.path, "import")  # a shared deployment reads only its roots
    parts: Prefetcher[Part] | Generator[Part]
    if columnar and file_format(path) == "jsonl":
        parse = parsing(cfg, path, batch_bytes, now)
        pos, parts = parse.pos, parse.parts
    else:
        pos = Position(None, "rows")
        row_path = RowPath(cfg, batch_bytes, now or datetime.now(UTC))
        parts = row_path.parts(records(path, pos))
    label = path.name
    total = typed = 0
    with closing(parts), IdLedger() as ledger, closing(GeneratedIds()) as ids:
        for batch, places in parts:
            filled = ids.fill_column(batch.column(0), batch.column(1))
            ledger.add(filled, places)
            total += batch.num_rows
            typed += batch.num_rows if isinstance(places, Lines) else 0
            yield batch.set_column(0, SFT_ARROW_SCHEMA.field(0), filled)
            _report(reporter, pos, label, total)
            reporter.check_cancelled()
        if not total:
            raise InvalidInput(f"{path} holds no records; nothing was imported.")
        repeated = _check_duplicates(ledger, cfg.allow_duplicate_ids)
    if counts is not None:
        counts["duplicate_ids"] = repeated
        counts["columnar_rows"] = typed
    _report(reporter, pos, label, total)


def _check_duplicates(ledger: IdLedger, allowed: bool) -> int:
    repeated, shown = ledger.duplicates()
    if repeated and not allowed:
        first = shown[0]
        others = ", ".join(repr(d.id) for d in shown[1:])
        raise InvalidInput(
            f"{first.again}: duplicate id {first.id!r} (first at {first.first}); "
            f"{repeated:,} rows repeat an earlier row's id"
            + (f" (also {others})" if others else "")
            + ". Nothing was imported: give each row its own id, drop the `id` field to "
            "have ids generated, or import anyway with --allow-duplicate-ids."
        )
    return repeated


def _report(reporter: Reporter, pos: Position, label: str, rows: int) -> None:
    if pos.unit == "bytes":  # a bar in MiB read: the row count of a JSONL file is unknown
        done, total = pos.done // 2**20, None if pos.total is None else pos.total // 2**20
        reporter.progress(done, total, f"importing {label}: {rows:,} rows (MiB read)")
    else:
        reporter.progress(pos.done, pos.total, f"importing {label}: {rows:,} rows")


def import_file(
    path: str | Path,
    table: str,
    *,
    format: ChatFormat | None = None,
    mode: WriteMode = "create",
    prompt_column: str | None = None,
    response_column: str | None = None,
    reporter: Reporter | None = None,
) -> JobOutputs:
    cfg = ImportConfig(
        path=str(path),
        out=table,
        format=format,
        mode=mode,
        prompt_column=prompt_column,
        response_column=response_column,
    )
    return run_import(cfg, reporter or Reporter())


def preflight(cfg: ImportConfig) -> ImportConfig:
    """Refuse a source outside the roots (shared deployments) before the job exists."""
    return cfg.model_copy(update={"path": str(resolve_under_roots(cfg.path, "import"))})


def run_import(cfg: ImportConfig, reporter: Reporter) -> JobOutputs:
    """Stream the input into `cfg.out`: several data files, one commit, or nothing."""
    name = full_name(cfg.out)
    target = get_settings().target_file_bytes
    counts: dict[str, int] = {}
    batches = sft_batches(cfg, reporter, batch_bytes=import_batch_bytes(), counts=counts)
    props = {PROP_KIND: "sft", **reporter.lineage}
    rows = 0

    def written(n: int) -> None:
        nonlocal rows
        rows = n

    write_batches(
        name,
        batches,
        mode=cfg.mode,
        schema=SFT_SCHEMA,
        properties=props,
        target_file_bytes=target,
        on_rows=written,
    )
    repeated = counts.get("duplicate_ids", 0)
    note = f"; {repeated:,} rows repeat an earlier row's id (allowed)" if repeated else ""
    reporter.progress(rows, rows, f"imported {rows:,} rows into {name}{note}")
    summary = {"rows": rows, **({"duplicate_ids": repeated} if repeated else {})}
    return JobOutputs(tables=[name], summary=summary)
