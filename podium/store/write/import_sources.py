"""What an import reads: the input's kind, its records one at a time (JSONL lines,
Parquet and Arrow rows, each with its place: "data.jsonl line 7"), and a JSONL file as
parts of SFT rows, a block at a time typed by Arrow (`columnar_import`) or, where Arrow
cannot type a block surely, row by row (`chat_rows`, which defines what a row becomes).
`ingest` checks the ids and writes the parts; `parse_ahead` runs this in a thread."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable, Iterator, Mapping
from datetime import datetime
from io import BytesIO
from pathlib import Path
from typing import IO, Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from podium.config import get_settings
from podium.errors import InvalidInput
from podium.store.schema import SFT_ARROW_SCHEMA
from podium.store.write.chat_rows import ChatOptions, detect_format, to_sft_row
from podium.store.write.columnar_import import Block, Unfit, blocks, typed_block
from podium.store.write.duplicate_ids import Lines
from podium.store.write.json_lines import parse_line
from podium.store.write.modes import ChatFormat

FileFormat = Literal["jsonl", "parquet", "hf"]

# Rows are parsed into record batches of about this much text, which bounds the import's
# memory; the writer cuts each into ~2 MiB row groups (`store.write.file_writer.ROW_GROUP_BYTES`).
BATCH_BYTES = 16 * 2**20
_READ_ROWS = 1024  # rows per batch read from Parquet and Arrow inputs


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


class RowPath:
    """Records to SFT rows one at a time (`chat_rows`): every input the columnar path
    does not take, and the definition of what a row becomes."""

    def __init__(self, cfg: ChatOptions, batch_bytes: int, now: datetime) -> None:
        self.cfg, self.batch_bytes, self.now = cfg, batch_bytes, now
        self.fmt: ChatFormat | None = None
        self.rows: list[dict[str, Any]] = []
        self.places: list[str] = []
        self.size = 0

    def parts(self, records: Iterable[tuple[str, dict[str, Any]]]) -> Generator[Part]:
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


def jsonl_parts(path: Path, pos: Position, row_path: RowPath) -> Iterator[Part]:
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


def _first_format(block: Block, name: str, cfg: ChatOptions, limit: int) -> ChatFormat:
    """The file's chat shape, from its first line (as the row path finds it)."""
    end = block.data.find(b"\n")
    first = block.data if end < 0 else block.data[:end]
    if not first.startswith(b"{") or len(first) > limit:
        raise Unfit  # a blank first line (skipped), or one refused for its length
    where = f"{name} line {block.first}"
    return detect_format(parse_line(first, where), cfg, where)


def import_batch_bytes() -> int:
    """The text per parsed batch of an import: `BATCH_BYTES`, but never more than a
    quarter of a data file, so files roll over near their target and tiny targets
    (tests) still give several files."""
    return min(BATCH_BYTES, max(1, get_settings().target_file_bytes // 4))
