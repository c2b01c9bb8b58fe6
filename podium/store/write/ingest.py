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

import json
from collections.abc import Iterable, Iterator, Mapping
from contextlib import closing
from datetime import UTC, datetime
from io import BytesIO
from pathlib import Path
from typing import IO, Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import AliasChoices, BaseModel, Field

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.paths import resolve_under_roots
from podium.reporting import JobOutputs, Reporter
from podium.store.catalog.catalog import full_name
from podium.store.catalog.table_name import TableName
from podium.store.schema import PROP_KIND, SFT_ARROW_SCHEMA, SFT_SCHEMA
from podium.store.write.chat_rows import detect_format, to_sft_row
from podium.store.write.columnar_import import Block, Unfit, blocks, typed_block
from podium.store.write.duplicate_ids import IdLedger, Lines
from podium.store.write.generated_ids import GeneratedIds
from podium.store.write.json_lines import parse_line
from podium.store.write.modes import ChatFormat, WriteMode
from podium.store.write.write import write_batches

FileFormat = Literal["jsonl", "parquet", "hf"]

# Rows are parsed into record batches of about this much text, which bounds the import's
# memory; the writer cuts each into ~2 MiB row groups (`store.write.file_writer.ROW_GROUP_BYTES`).
BATCH_BYTES = 16 * 2**20
_READ_ROWS = 1024  # rows per batch read from Parquet and Arrow inputs


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


def file_format(path: Path) -> FileFormat:
    if path.is_dir():
        if (path / "state.json").exists() or (path / "dataset_dict.json").exists():
            return "hf"
        raise InvalidInput(
            f"{path} is a directory but not a dataset saved with `save_to_disk` "
            "(no state.json or dataset_dict.json)."
        )
    if not path.exists():
        raise InvalidInput(f"{path} does not exist.")
    suffix = "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix
    if suffix in (".jsonl", ".json", ".ndjson"):
        return "jsonl"
    if suffix == ".parquet":
        return "parquet"
    raise InvalidInput(
        f"{path}: unknown file type {suffix!r}; use .jsonl, .parquet or a dataset dir."
    )


class Position:
    """How far a reader is through its input, for progress: `done` of `total` `unit`."""

    def __init__(self, total: int | None, unit: str) -> None:
        self.done = 0
        self.total = total
        self.unit = unit


def _jsonl_records(path: Path, pos: Position) -> Iterator[tuple[str, dict[str, Any]]]:
    with path.open("rb") as fh:
        yield from _line_records(fh, path.name, 1, pos)


def _line_records(
    fh: IO[bytes], name: str, first: int, pos: Position
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The records of JSONL lines, the first of them line `first` of file `name`."""
    limit = get_settings().import_max_line_bytes
    # readline with a limit: a huge line is refused after `limit` bytes, not held whole.
    for lineno, line in enumerate(iter(lambda: fh.readline(limit + 1), b""), start=first):
        pos.done += len(line)
        where = f"{name} line {lineno}"
        if len(line) > limit and not (len(line) == limit + 1 and line.endswith(b"\n")):
            raise InvalidInput(
                f"{where}: the line is longer than {limit:,} bytes, the limit for one "
                "record (setting import_max_line_bytes, PODIUM_IMPORT_MAX_LINE_BYTES); "
                "split that record or raise the limit."
            )
        if not line.strip():
            continue
        record = parse_line(line, where)
        yield where, record


def _batch_records(
    batches: Iterable[pa.RecordBatch], label: str, pos: Position
) -> Iterator[tuple[str, dict[str, Any]]]:
    i = 0
    for batch in batches:
        for record in batch.to_pylist():
            yield f"{label} row {i}", record
            i += 1
            pos.done += 1


def _parquet_records(path: Path, pos: Position) -> Iterator[tuple[str, dict[str, Any]]]:
    source = pq.ParquetFile(path)
    pos.total = (pos.total or 0) + source.metadata.num_rows
    yield from _batch_records(source.iter_batches(batch_size=_READ_ROWS), path.name, pos)


def _hf_records(path: Path, pos: Position) -> Iterator[tuple[str, dict[str, Any]]]:
    # A `save_to_disk` directory holds Arrow IPC stream files listed in state.json; a
    # DatasetDict holds one such directory per split.
    if (path / "dataset_dict.json").exists():
        splits = json.loads((path / "dataset_dict.json").read_text())["splits"]
        for split in splits:
            for where, rec in _hf_records(path / split, pos):
                rec.setdefault("split", split)
                yield where, rec
        return
    state = json.loads((path / "state.json").read_text())
    for entry in state["_data_files"]:
        file = path / entry["filename"]
        with pa.memory_map(str(file)) as source:
            reader = pa.ipc.open_stream(source)
            yield from _batch_records(reader, f"{path.name}/{file.name}", pos)


def records(path: Path, pos: Position | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(location, record) pairs, streamed; the location names the file and line or row."""
    kind = file_format(path)
    if kind == "jsonl":
        pos = pos or Position(None, "bytes")
        pos.total, pos.unit = path.stat().st_size, "bytes"
        yield from _jsonl_records(path, pos)
    elif kind == "parquet":
        yield from _parquet_records(path, pos or Position(None, "rows"))
    else:
        yield from _hf_records(path, pos or Position(None, "rows"))


def _row_bytes(row: Mapping[str, Any]) -> int:
    text = sum(len(m["content"] or "") for m in row["messages"])
    return text + len(row["metadata"] or "") + len(row["system"] or "") + 64


# One part of the import, in file order: SFT rows (an id may still be null, to be
# generated) and where each row came from ("data.jsonl line 7"), for duplicate reports.
Part = tuple[pa.RecordBatch, list[str] | Lines]


class _RowPath:
    """Records to SFT rows one at a time (`chat_rows`): every input the columnar path
    does not take, and the definition of what a row becomes."""

    def __init__(self, cfg: ImportConfig, batch_bytes: int, now: datetime) -> None:
        self.cfg, self.batch_bytes, self.now = cfg, batch_bytes, now
        self.fmt: ChatFormat | None = None
        self.rows: list[dict[str, Any]] = []
        self.places: list[str] = []
        self.size = 0

    def parts(self, records: Iterable[tuple[str, dict[str, Any]]]) -> Iterator[Part]:
        for where, record in records:
            self.fmt = self.fmt or detect_format(record, self.cfg, where)
            row = to_sft_row(record, self.cfg, where, self.fmt)
            row["created_at"] = row["created_at"] or self.now
            self.rows.append(row)
            self.places.append(where)
            self.size += _row_bytes(row)
            if self.size >= self.batch_bytes:
                yield self.flush()
        if self.rows:
            yield self.flush()

    def flush(self) -> Part:
        part = pa.RecordBatch.from_pylist(self.rows, schema=SFT_ARROW_SCHEMA), self.places
        self.rows, self.places, self.size = [], [], 0
        return part


def _jsonl_parts(path: Path, pos: Position, row_path: _RowPath) -> Iterator[Part]:
    """A JSONL file in blocks: each typed by Arrow when it can be, through the row path
    when not (`columnar_import.Unfit`), in file order."""
    limit = get_settings().import_max_line_bytes
    source = row_path.cfg.source or Path(row_path.cfg.path).name  # as `to_sft_row` names it
    with path.open("rb") as fh:
        for block in blocks(fh, row_path.batch_bytes, limit):
            try:
                fmt = row_path.fmt or _first_format(block, path.name, row_path.cfg, limit)
                typed = typed_block(block, row_path.cfg, fmt, source, row_path.now, limit)
            except Unfit:
                lines = BytesIO(block.data)
                yield from row_path.parts(_line_records(lines, path.name, block.first, pos))
                continue
            row_path.fmt = fmt
            pos.done += len(block.data)
            for part in typed:
                yield part.batch, Lines(f"{path.name} line ", pa.array(part.lines, pa.int64()))


def _first_format(block: Block, name: str, cfg: ImportConfig, limit: int) -> ChatFormat:
    """The file's chat shape, from its first line (as the row path finds it)."""
    end = block.data.find(b"\n")
    first = block.data if end < 0 else block.data[:end]
    if not first.startswith(b"{") or len(first) > limit:
        raise Unfit  # a blank first line (skipped), or one refused for its length
    where = f"{name} line {block.first}"
    return detect_format(parse_line(first, where), cfg, where)


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

    Streams: one batch of rows is held at a time. Raises InvalidInput naming the line
    or row of the first bad record, when the input holds no records at all, and (after
    the last batch, so before any commit) when ids repeat, unless the config allows it;
    `counts["duplicate_ids"]` then says how many rows repeated an id. JSONL is typed by
    Arrow a block at a time (`columnar_import`) unless `columnar` is off; the rows are
    the same either way (`counts["columnar_rows"]` says how many Arrow typed). A row
    without `created_at` gets `now` (default: when the import starts).
    """
    reporter = reporter or Reporter()
    path = resolve_under_roots(cfg.path, "import")  # a shared deployment reads only its roots
    pos = Position(None, "rows")
    label = path.name
    total = typed = 0
    row_path = _RowPath(cfg, batch_bytes, now or datetime.now(UTC))
    with IdLedger() as ledger, closing(GeneratedIds()) as ids:
        if columnar and file_format(path) == "jsonl":
            pos.total, pos.unit = path.stat().st_size, "bytes"
            parts = _jsonl_parts(path, pos, row_path)
        else:
            parts = row_path.parts(records(path, pos))
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
    # A row group is never more than a quarter of a data file, so files roll over
    # near their target and tiny targets (tests) still give several files.
    counts: dict[str, int] = {}
    batches = sft_batches(
        cfg, reporter, batch_bytes=min(BATCH_BYTES, max(1, target // 4)), counts=counts
    )
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
